"""A random sequence of writes applied both to a hiveacid table and to a Python list, compared
after every step."""
from __future__ import annotations

import random
from collections import Counter

import pytest

from spark_hive_acid.spark.table import HiveAcidTable

pytestmark = pytest.mark.spark
SCHEMA = "id long, v long, p int"


def _rand_rows(rng, n, id_range=30):
    return [(rng.randrange(id_range), rng.randrange(100), rng.randrange(3)) for _ in range(n)]


OPS = ["append", "delete", "update", "update_move", "merge", "overwrite_dyn"]


def _step(rng, spark, path, model, table, op):
    if op == "append" or table is None:
        rows = _rand_rows(rng, rng.randrange(1, 12))
        w = spark.createDataFrame(rows, SCHEMA).repartition(rng.choice([1, 2, 3])) \
            .write.format("hiveacid").mode("append")
        if table is None:
            w = w.option("partitionBy", "p")
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


@pytest.mark.parametrize("seed", [11])
def test_random_operations_match_model(acid_spark, tmp_path, seed):
    rng = random.Random(seed)
    path = str(tmp_path / "t")
    model: list[tuple] = []
    table = None
    # every kind of operation at least once, in a random order, then random ones
    ops = ["append"] + rng.sample(OPS, len(OPS)) + [rng.choice(OPS) for _ in range(5)]
    for step, op in enumerate(ops):
        op, table = _step(rng, acid_spark, path, model, table, op)
        got = Counter(tuple(r) for r in table.toDF().select("id", "v", "p").collect())
        assert got == Counter(model), f"step {step} ({op}) diverged"
    states = {r.state for r in table.history().collect()}
    assert states == {"committed"}
