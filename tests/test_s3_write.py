"""Path-mode writes on an object store (the S3 server, moto on 127.0.0.1; marker ``s3``): every
file at its final name, claims by conditional create, nothing renamed.

* every kind of write, DML, compaction and vacuum, with ``rename`` and ``copy_file`` made to fail
  (nothing may rename or copy), full-ACID and insert-only (ORC, Parquet) tables;
* a seeded random history of appends, overwrites, DELETE, UPDATE, MERGE, minor and major
  compactions and vacuums against the model after every step, every earlier snapshot read again
  after each compaction; then Hive's own readers (2.3 and 3.1 / 4.1) read a copy of the bucket;
* a compaction's output, written in place, hidden from readers until its commit;
* a second attempt of a task finds its file already placed by the first: it keeps that file;
* bucketed writes from several Spark tasks (names shared between tasks: merged into place).

Concurrent writers, Spark DML, the streaming sink and the log stress on S3 are in
``tests/test_storage_*.py`` and ``tests/write/test_log_stress.py`` (storage targets); kill -9 at
every phase in ``tests/test_s3_kill.py``; the primitives in ``tests/test_s3_write_io.py``.
"""
from __future__ import annotations

import os
import random
from collections import Counter

import pyarrow as pa
import pytest

from compaction_ops import COLUMNS, ModelTable
from spark_hive_acid import read_table, write_table
from spark_hive_acid.acid.logstate import load_state
from spark_hive_acid.catalog import PathTable
from spark_hive_acid.compaction.cleaner import vacuum
from spark_hive_acid.compaction.runner import compact, run_locally
from spark_hive_acid.exceptions import NotEnoughHistoryError
from spark_hive_acid.io.arrow_fs import ArrowFileSystem

pytestmark = pytest.mark.s3


@pytest.fixture
def s3_env(s3, monkeypatch):
    """The bucket, reachable without options (the AWS environment variables)."""
    for k, v in s3.environment().items():
        monkeypatch.setenv(k, v)
    return s3


@pytest.fixture
def no_rename(monkeypatch):
    """Any rename or copy inside the store fails the test."""
    calls: list[tuple] = []

    def refuse(name):
        def call(self, *a, **k):
            calls.append((name, a))
            raise AssertionError(f"{name}{a} on an object store")
        return call

    monkeypatch.setattr(ArrowFileSystem, "rename", refuse("rename"))
    monkeypatch.setattr(ArrowFileSystem, "copy_file", refuse("copy_file"))
    return calls


class S3Model(ModelTable):
    """The model table on S3; Hive's readers read a local copy of the bucket."""

    def __init__(self, s3, key: str, rng: random.Random, tmp_path, **kw):
        super().__init__(s3.uri(key), rng, **kw)
        self.s3, self.key, self.tmp, self.copies = s3, key, tmp_path, 0

    def local_copy(self) -> str:
        from storage_targets import S3Target

        self.copies += 1
        return S3Target(self.s3).download(self.key, str(self.tmp / f"copy{self.copies}"))

    def partition_dirs(self):
        local = self.local_copy()
        if not self.partitioned:
            return [(local, 0)]
        return [(f"{local}/p={p}", p) for p in range(3) if os.path.isdir(f"{local}/p={p}")]


def _names(s3, prefix: str) -> list[str]:
    return sorted(o["Key"] for page in s3.client().get_paginator("list_objects_v2").paginate(
        Bucket=s3.name, Prefix=prefix) for o in page.get("Contents", []))


# --- nothing renamed, nothing copied -------------------------------------------------------------
@pytest.mark.parametrize("buckets", [0, 2])
def test_writes_dml_and_compaction_rename_nothing(s3_env, no_rename, buckets):
    t = ModelTable(s3_env.uri("w/t"), random.Random(7), partitioned=True, buckets=buckets)
    for op in ("append", "append", "overwrite", "delete", "minor", "append", "major", "vacuum"):
        if op in ("minor", "major"):
            t.compact(op)
        elif buckets and op == "delete":
            t.delete()  # delete files: one writer per (partition, writer id), in place
        else:
            getattr(t, op)()
        assert t.values(t.ours()) == t.expected(), (op, t.log)
    if not buckets:  # (a bucketed UPDATE's inserts share names between tasks: merged, below)
        t.update()
        t.merge()
        assert t.values(t.ours()) == t.expected(), t.log
    assert no_rename == []
    keys = _names(s3_env, "w/t/")
    assert not [k for k in keys if "_hiveacid_staging" in k], keys  # nothing left staged
    assert [k for k in keys if "/base_" in k and k.endswith("_hiveacid_claim")]  # in place


@pytest.mark.parametrize("fmt", ["orc", "parquet"])
def test_insert_only_tables_in_place(s3_env, no_rename, fmt):
    uri = s3_env.uri(f"mm/{fmt}")
    mm = {"tableProperties": "transactional_properties=insert_only", "fileFormat": fmt}
    write_table(pa.table({"id": [1, 2], "p": ["a", "b"]}), uri, partition_by=["p"], options=mm)
    write_table(pa.table({"id": [3], "p": ["a"]}), uri)
    write_table(pa.table({"id": [4], "p": ["b"]}), uri, mode="overwrite",
                partition_overwrite_mode="dynamic")
    compact(PathTable(uri), "major")
    assert sorted(read_table(uri).column("id").to_pylist()) == [1, 3, 4]
    assert no_rename == []
    vacuum(*PathTable(uri).location(), retention_hours=0)
    files = [k for k in _names(s3_env, f"mm/{fmt}/p=a/")
             if not k.endswith("/") and k.rsplit("/", 1)[1][0] not in "_."]
    assert [k.rsplit("/", 2)[1] for k in files] == ["base_0000003"], files


# --- a random history against the model, then Hive's readers ------------------------------------
@pytest.mark.hive
@pytest.mark.hive31
@pytest.mark.hive41
def test_random_history_matches_the_model_and_hive(s3_env, hive_ref, newer_hives, tmp_path):
    rng = random.Random(22)
    t = S3Model(s3_env, "h/t", rng, tmp_path, partitioned=True)
    t.append()
    snapshots: list = []
    ops = ["append", "append", "delete", "update", "merge", "overwrite", "minor", "major",
           "vacuum"]
    for step in range(14):
        op = rng.choice(ops)
        before = t.ours()
        if op in ("minor", "major"):
            t.compact(op)
        else:
            getattr(t, op)()
        got = t.ours()
        where = f"step {step} ({op}): {t.log}"
        assert t.values(got) == t.expected(), where
        if op in ("minor", "major", "vacuum"):
            assert got == before, f"{where}: a compaction changed rows or ROW__IDs"
        if op in ("minor", "major"):
            kept = []
            for snap, rows in snapshots:
                try:
                    assert t.ours(validWriteIds=snap) == rows, f"{where}: snapshot {snap}"
                    kept.append((snap, rows))
                except NotEnoughHistoryError:
                    assert op == "major", where
            snapshots = kept
        if op == "vacuum":
            snapshots = []
        snapshots.append((load_state(t.fs, t.location).snapshot().to_string(), got))
    got = t.ours()
    assert t.hive_rows(hive_ref) == got, f"Hive 2.3 reads the copy otherwise: {t.log}"
    for hive in newer_hives:
        assert t.hive3_rows(hive) == got, f"{hive} reads the copy otherwise: {t.log}"


# --- a compaction written in place stays hidden until its commit ---------------------------------
@pytest.mark.parametrize("kind", ["minor", "major"])
def test_a_compaction_half_written_in_place_is_hidden(s3_env, kind):
    t = ModelTable(s3_env.uri("c/t"), random.Random(3), partitioned=True)
    for op in ("append", "append", "delete", "append", "update"):
        getattr(t, op)()
    before = t.ours()
    seen = []

    def units_one_by_one(units, ctx):
        out = []
        for u in units:
            out.append(ctx.run(u))
            seen.append(t.ours())  # a reader between two files of the output
            listed = {k.rsplit("/", 2)[1] for k in _names(s3_env, "c/t/") if "/p=" in k}
            assert any(n.startswith(("base_", "delta_0000001_")) and "_000" in n
                       for n in listed)
        return out

    compact(PathTable(t.path), kind, run_units=units_one_by_one)
    assert seen and all(s == before for s in seen)
    assert t.ours() == before
    finals = [k for k in _names(s3_env, "c/t/") if k.endswith("_hiveacid_claim")]
    assert finals, "the output was written in place"


# --- a second attempt of a task ---------------------------------------------------------------
def test_a_second_attempt_keeps_the_file_the_first_placed(s3_env):
    """Two attempts of one task write the same names (a retried or speculative attempt): the
    first to finish places the file; the second finds the name taken and reports that file, so
    the commit names what is there, whole, and nothing is written twice."""
    from spark_hive_acid.acid.layout import staging_dir
    from spark_hive_acid.txn.committer import commit_write
    from spark_hive_acid.write.schema import map_columns
    from spark_hive_acid.write.task_writer import InsertTarget, TableSpec, stage_batches

    uri = s3_env.uri("a/t")
    write_table(pa.table({"id": pa.array([0], pa.int64()), "p": [0]}), uri, partition_by=["p"])
    ref = PathTable(uri)
    fs, loc = ref.location()
    layout = ref.layout()
    spec = TableSpec.of(loc, layout)
    txn = ref.begin("append")
    data = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "p": [0, 1, 1]})
    mapping = map_columns(layout, data.schema)
    target = InsertTarget(txn.write_id, 0)
    first = stage_batches(fs, spec, target, mapping, data.to_batches(),
                          fs.join(staging_dir(fs, loc, txn.write_id), "a0"), 3)
    again = pa.table({"id": pa.array([7, 8, 9], pa.int64()), "p": [0, 1, 1]})
    second = stage_batches(fs, spec, target, mapping, again.to_batches(),
                           fs.join(staging_dir(fs, loc, txn.write_id), "a1"), 3)
    assert [(f.path, f.inserts) for f in second] == [(f.path, f.inserts) for f in first]
    assert all(f"delta_{txn.write_id:07d}" in f.path and f.path.endswith("bucket_00003")
               for f in first)
    commit_write(fs, spec, txn, second)
    assert sorted(read_table(uri).column("id").to_pylist()) == [0, 1, 2, 3]


# --- Spark: several tasks write one table, names shared between tasks ---------------------------
@pytest.mark.spark
def test_spark_bucketed_writes_from_several_tasks(spark, s3):
    uri, opts = s3.uri("b/t"), s3.options()

    def write(df, mode, **extra):
        w = df.write.format("hiveacid")
        for k, v in {**opts, **extra}.items():
            w = w.option(k, v)
        w.mode(mode).save(uri)

    rows = [(i, f"v{i}", i % 2) for i in range(40)]
    df = spark.createDataFrame(rows, "id int, v string, p int").repartition(4)
    write(df, "append", partitionBy="p", bucketBy="id", numBuckets="3")
    write(df.where("id < 20"), "overwrite", partitionOverwriteMode="dynamic")
    from spark_hive_acid import HiveAcidTable

    HiveAcidTable.forPath(spark, uri, options=opts).delete("id = 4")
    got = sorted((r["id"], r["v"], r["p"]) for r in read_table(uri, **opts).to_pylist())
    assert got == sorted(r for r in rows if r[0] < 20 and r[0] != 4)  # both partitions replaced
    for p in (0, 1):
        base = [k.rsplit("/", 1)[1] for k in _names(s3, f"b/t/p={p}/") if "/base_" in k
                and "bucket_" in k]
        assert sorted(base) == sorted(set(base)) and len(base) <= 3  # one file per bucket
    assert Counter(k.split("/")[-2][:6] for k in _names(s3, "b/t/")
                   if "_hiveacid_staging" in k) == Counter()
