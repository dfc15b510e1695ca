"""A random sequence of writes applied both to a hiveacid table and to a Python list, compared
after every step; Hive 3.1 and 4.1's own readers (tests/hive_jvm), row by row and vectorized,
read every step's table (each partition, at the log's snapshot) as the model says: appends from
several Spark tasks (one bucket file per task), deletes, updates (moving rows between
partitions), merges, dynamic-partition overwrites."""
from __future__ import annotations

import os
import random
from collections import Counter

import pytest

from hive_jvm.fixtures import newer_hives  # noqa: F401
from hive_jvm.oracle import snapshot_write_ids
from spark_hive_acid.acid.logstate import load_state
from spark_hive_acid.io.filesystem import LocalFileSystem
from spark_hive_acid.spark.table import HiveAcidTable

pytestmark = [pytest.mark.spark, pytest.mark.hive31, pytest.mark.hive41]
COLUMNS = [("id", "bigint"), ("v", "bigint")]
SCHEMA = "id long, v long, p int"


def _rand_rows(rng, n, id_range=30):
    return [(rng.randrange(id_range), rng.randrange(100), rng.randrange(3)) for _ in range(n)]


OPS = ["append", "delete", "update", "update_move", "merge", "overwrite_dyn"]


def _step(rng, spark, path, model, table, op, buckets=0):
    if op == "append" or table is None:
        rows = _rand_rows(rng, rng.randrange(1, 12))
        w = spark.createDataFrame(rows, SCHEMA).repartition(rng.choice([1, 2, 3])) \
            .write.format("hiveacid").mode("append")
        if table is None:
            w = w.option("partitionBy", "p")
            if buckets:  # several tasks: a statement per task (delta_W_W_000S), Hive 3's way
                w = w.option("bucketBy", "id").option("numBuckets", str(buckets))
        w.save(path)
        model.extend(rows)
        return "append", HiveAcidTable.forPath(spark, path)
    if op == "delete":
        x = rng.randrange(100)
        table.delete(f"v < {x}")
        model[:] = [r for r in model if not r[1] < x]
    elif op == "update":
        m = rng.randrange(2, 4)
        table.update(f"id % {m} = 0", set={"v": "v + 1000"})
        model[:] = [(i, v + 1000, p) if i % m == 0 else (i, v, p) for i, v, p in model]
    elif op == "update_move":
        k = rng.randrange(3)
        table.update(f"p = {k} AND id % 2 = 1", set={"p": f"{(k + 1) % 3}"})
        model[:] = [(i, v, (k + 1) % 3) if p == k and i % 2 == 1 else (i, v, p) for i, v, p in model]
    elif op == "merge":
        ids = rng.sample(range(40), rng.randrange(1, 8))
        src = [(i, rng.randrange(100), rng.randrange(3)) for i in ids]
        (table.alias("t").merge(spark.createDataFrame(src, SCHEMA).alias("s"), "t.id = s.id")
         .whenMatchedDelete("s.v < 20").whenMatchedUpdate(set={"v": "s.v"})
         .whenNotMatchedInsertAll().execute())
        by_id = {i: (i, v, p) for i, v, p in src}
        present = {r[0] for r in model}
        new = []
        for i, v, p in model:
            if i in by_id:
                if by_id[i][1] < 20:
                    continue
                new.append((i, by_id[i][1], p))
            else:
                new.append((i, v, p))
        new += [r for r in src if r[0] not in present]
        model[:] = new
    elif op == "overwrite_dyn":
        k = rng.randrange(3)
        rows = [(i, v, k) for i, v, _ in _rand_rows(rng, rng.randrange(0, 5))]
        if rows:
            spark.createDataFrame(rows, SCHEMA).write.format("hiveacid").mode("overwrite") \
                .option("partitionOverwriteMode", "dynamic").save(path)
            model[:] = [r for r in model if r[2] != k] + rows
    return op, table


def hive_rows(hive, path: str, vectorized: bool, buckets: int = 0) -> Counter:
    """(id, v, p) of every row Hive reads, partition by partition, at the log's snapshot."""
    wl = snapshot_write_ids(load_state(LocalFileSystem(), path).snapshot())
    out: Counter = Counter()
    for part in sorted(os.listdir(path)):
        if part.startswith("p="):
            for _, (i, v) in hive.read(f"{path}/{part}", COLUMNS, write_ids=wl,
                                       bucket_count=buckets or None, vectorized=vectorized):
                out[(i, v, int(part[2:]))] += 1
    return out


@pytest.mark.parametrize("seed, buckets", [(11, 0), (12, 3)])
def test_random_operations_match_model(acid_spark, newer_hives, tmp_path, seed, buckets):  # noqa: F811
    rng = random.Random(seed)
    path = str(tmp_path / "t")
    model: list[tuple] = []
    table = None
    # every kind of operation at least once, in a random order, then random ones
    ops = ["append"] + rng.sample(OPS, len(OPS)) + [rng.choice(OPS) for _ in range(5)]
    for step, op in enumerate(ops):
        op, table = _step(rng, acid_spark, path, model, table, op, buckets)
        got = Counter(tuple(r) for r in table.toDF().select("id", "v", "p").collect())
        assert got == Counter(model), f"step {step} ({op}) diverged"
        for hive in newer_hives:
            for vectorized in (False, True):
                assert hive_rows(hive, path, vectorized, buckets) == got, \
                    f"step {step} ({op}): {hive} (vectorized={vectorized}) reads otherwise"
    states = {r.state for r in table.history().collect()}
    assert states == {"committed"}
    if buckets:
        stmts = {n.rsplit("_", 1)[1] for part in os.listdir(path) if part.startswith("p=")
                 for n in os.listdir(f"{path}/{part}") if n.startswith("delta_")}
        assert len(stmts) > 1, "no multi-statement delta was written"
