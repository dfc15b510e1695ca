"""HiveAcidTable: delete, update, merge, history; split-update files; conflicts."""
from __future__ import annotations

import os
import threading

import pyarrow.orc as po
import pytest

from spark_hive_acid.acid import bucket_codec
from spark_hive_acid.txn import pathlog as txnlog
from spark_hive_acid.exceptions import CardinalityViolationError, CommitConflictError, InvalidOptionError
from spark_hive_acid.spark.table import HiveAcidTable

pytestmark = pytest.mark.spark


def _make(spark, path, ids=range(9), **opts):
    w = spark.createDataFrame([(i, f"n{i}", i % 3) for i in ids], "id long, name string, p int") \
        .write.format("hiveacid").mode("append")
    for k, v in opts.items():
        w = w.option(k, v)
    w.save(path)
    return HiveAcidTable.forPath(spark, path)


def _rows(t):
    return sorted(tuple(r) for r in t.toDF().collect())


def _events(path):
    out = {}
    for root, _, files in os.walk(path):
        for f in files:
            if f.startswith("bucket_") and "_hiveacid" not in root:
                rel = os.path.relpath(os.path.join(root, f), path)
                out[rel] = po.ORCFile(os.path.join(root, f)).read().to_pylist()
    return out


def test_delete_writes_sorted_delete_events(acid_spark, tmp_path):
    path = str(tmp_path / "t")
    t = _make(acid_spark, path, partitionBy="p")
    m = t.delete("id IN (0, 3, 4)")
    assert m["numDeletedRows"] == 3 and m["writeId"] == 2
    assert _rows(t) == [(i, f"n{i}", i % 3) for i in range(9) if i not in (0, 3, 4)]
    ev = _events(path)
    dels = {k: v for k, v in ev.items() if "delete_delta_0000002_0000002_0000" in k}
    assert set(dels) <= {"p=0/delete_delta_0000002_0000002_0000/bucket_00000",
                         "p=0/delete_delta_0000002_0000002_0000/bucket_00001",
                         "p=1/delete_delta_0000002_0000002_0000/bucket_00000",
                         "p=1/delete_delta_0000002_0000002_0000/bucket_00001"}
    for rel, events in dels.items():
        n = int(rel.rsplit("_", 1)[1])
        keys = [(e["originalTransaction"], e["bucket"], e["rowId"]) for e in events]
        assert keys == sorted(keys)
        assert all(e["operation"] == 2 and e["currentTransaction"] == 2 and e["row"] is None
                   and bucket_codec.decode_writer_id(e["bucket"]) == n for e in events)
    assert sum(len(v) for v in dels.values()) == 3
    assert t.count() == 6  # the zero-column read applies the delete events
    t.delete()  # everything
    assert _rows(t) == [] and t.count() == 0


@pytest.fixture
def asked(monkeypatch):
    """The ``columns`` each DML asked its target reader for (None: every column)."""
    from spark_hive_acid.spark.statement import Statement

    calls = []
    target = Statement.target_reader

    def spy(self, columns=None):
        calls.append(None if columns is None else list(columns))
        return target(self, columns)

    monkeypatch.setattr(Statement, "target_reader", spy)
    return calls


def test_delete_reads_only_row_id_partitions_and_condition_columns(acid_spark, tmp_path, asked):
    """PySpark gives a Python source no column pruning: DELETE must ask for the columns itself."""
    from pyspark.sql import functions as F

    path = str(tmp_path / "t")
    t = _make(acid_spark, path, partitionBy="p")
    assert t.delete("id IN (1, 2)")["numDeletedRows"] == 2
    assert asked[-1] == ["id", "p"]
    assert t.alias("x").delete(F.col("x.name") == "n5")["numDeletedRows"] == 1
    assert asked[-1] == ["name", "p"]
    assert t.delete("row__id.rowId < 0")["numDeletedRows"] == 0
    assert asked[-1] == ["p"]
    assert _rows(t) == [(i, f"n{i}", i % 3) for i in (0, 3, 4, 6, 7, 8)]
    assert t.delete()["numDeletedRows"] == 6 and asked[-1] == ["p"]
    assert _rows(t) == []


def test_merge_that_only_deletes_reads_only_the_columns_it_names(acid_spark, tmp_path, asked):
    """Delete-only MERGE writes no row values: like DELETE it reads row__id, the partition
    columns and the columns its expressions name; a MERGE that updates reads every column."""
    path = str(tmp_path / "t")
    t = _make(acid_spark, path, partitionBy="p")
    keys = acid_spark.createDataFrame([(1,), (4,), (40,)], "key long").alias("s")
    assert t.alias("t").merge(keys, "t.id = s.key").whenMatchedDelete().execute()["numDeletedRows"] == 2
    assert asked[-1] == ["id", "p"]
    src = acid_spark.createDataFrame([(2, "x"), (3, "y"), (50, "new")], "key long, label string")
    m = (t.alias("t").merge(src.alias("s"), "t.id = s.key").whenMatchedDelete("t.name = 'n2'")
         .whenNotMatchedInsert(values={"id": "s.key", "name": "s.label", "p": "0"}).execute())
    assert (m["numDeletedRows"], m["numInsertedRows"]) == (1, 1)
    assert asked[-1] == ["id", "name", "p"]
    assert _rows(t) == [(i, f"n{i}", i % 3) for i in (0, 3, 5, 6, 7, 8)] + [(50, "new", 0)]
    # inserted values may set target columns the pruned read does not hold (here: name)
    src2 = acid_spark.createDataFrame([(3, "z"), (60, "newer")], "key long, label string")
    m = (t.alias("t").merge(src2.alias("s"), "t.id = s.key").whenMatchedDelete()
         .whenNotMatchedInsert(values={"id": "s.key", "name": "s.label", "p": "1"}).execute())
    assert (m["numDeletedRows"], m["numInsertedRows"]) == (1, 1)
    assert asked[-1] == ["id", "p"]
    assert _rows(t) == [(i, f"n{i}", i % 3) for i in (0, 5, 6, 7, 8)] + [(50, "new", 0), (60, "newer", 1)]
    src3 = acid_spark.createDataFrame([(50, "upd")], "key long, label string")
    t.alias("t").merge(src3.alias("s"), "t.id = s.key").whenMatchedUpdate(set={"name": "s.label"}).execute()
    assert asked[-1] is None
    assert (50, "upd", 0) in _rows(t)


def test_referenced_columns_from_the_analyzed_plan(acid_spark):
    from pyspark.sql import functions as F

    from spark_hive_acid.spark.expressions import referenced_columns

    df = acid_spark.createDataFrame([(1, "a", 2.0)], "Id long, name string, price double").alias("t")
    assert referenced_columns(df, F.expr("t.price > 1 AND id % 2 = 1")) == ["Id", "price"]
    assert referenced_columns(df, F.lit(True)) == []
    assert referenced_columns(df, F.expr("nope = 1")) is None  # the caller's filter raises later


def test_update_is_split_and_can_move_partitions(acid_spark, tmp_path):
    path = str(tmp_path / "t")
    t = _make(acid_spark, path, partitionBy="p")
    m = t.update("id = 4", set={"name": "upper(name)", "p": "5"})
    assert m["numDeletedRows"] == 1 and m["numInsertedRows"] == 1
    from pyspark.sql import functions as F
    t.update(F.col("p") == 0, set={"name": F.col("name").substr(1, 1)})  # Columns work too
    expected = [(i, "n" if i % 3 == 0 else f"n{i}", i % 3) for i in range(9) if i != 4] + [(4, "N4", 5)]
    assert _rows(t) == sorted(expected)
    ev = _events(path)
    assert any(k.startswith("p=1/delete_delta_0000002_0000002_0000/") for k in ev)
    ins = [v for k, v in ev.items() if k.startswith("p=5/delta_0000002_0000002_0001/")]
    assert len(ins) == 1 and ins[0][0]["bucket"] & 0xFFF == 1 and ins[0][0]["rowId"] == 0
    with pytest.raises(InvalidOptionError, match="unknown column 'nope'"):
        t.update(set={"nope": "1"})
    # the bad SET failed before a write id was allocated (issue 14 §2): no aborted entry
    assert [(h["operation"], h["state"]) for h in txnlog.history(t._fs, path)] == [
        ("update", "committed"), ("update", "committed"), ("create", "committed")]


def test_merge_clauses_and_statement_ids(acid_spark, tmp_path):
    path = str(tmp_path / "t")
    t = _make(acid_spark, path, partitionBy="p")
    src = acid_spark.createDataFrame(
        [(1, "one", 1), (2, "del", 2), (5, "five", 2), (20, "twenty", 2), (21, "skip", 0)],
        "id long, name string, p int")
    m = (t.alias("t").merge(src.alias("s"), "t.id = s.id")
         .whenMatchedDelete("s.name = 'del'")
         .whenMatchedUpdate(set={"name": "concat(t.name, '/', s.name)"})
         .whenNotMatchedInsert("s.name != 'skip'", values={"id": "s.id", "name": "s.name", "p": "s.p"})
         .execute())
    assert m["numDeletedRows"] == 3 and m["numInsertedRows"] == 3
    expected = {(i, f"n{i}", i % 3) for i in range(9)} - {(1, "n1", 1), (2, "n2", 2), (5, "n5", 2)}
    expected |= {(1, "n1/one", 1), (5, "n5/five", 2), (20, "twenty", 2)}
    assert _rows(t) == sorted(expected)
    dirs = {os.path.dirname(k) for k in _events(path)}
    assert {"p=1/delete_delta_0000002_0000002_0000", "p=2/delete_delta_0000002_0000002_0001",
            "p=1/delta_0000002_0000002_0002", "p=2/delta_0000002_0000002_0003"} <= dirs
    # updateAll / insertAll
    src2 = acid_spark.createDataFrame([(1, "X", 1), (30, "Y", 0)], "id long, name string, p int")
    t.alias("t").merge(src2.alias("s"), "t.id = s.id").whenMatchedUpdateAll() \
        .whenNotMatchedInsertAll().execute()
    rows = _rows(t)
    assert (1, "X", 1) in rows and (30, "Y", 0) in rows and len(rows) == len(expected) + 1


def test_merge_builder_is_immutable_and_checks_order(acid_spark, tmp_path):
    t = _make(acid_spark, str(tmp_path / "t"))
    b = t.merge(t.toDF(), "target.id = id")
    b2 = b.whenMatchedDelete()
    assert b2 is not b and b._matched == () and len(b2._matched) == 1
    with pytest.raises(InvalidOptionError, match="last whenMatched"):
        b2.whenMatchedDelete("id > 1")
    with pytest.raises(InvalidOptionError):
        b.execute()


def test_merge_cardinality_violation_writes_nothing(acid_spark, tmp_path):
    path = str(tmp_path / "t")
    t = _make(acid_spark, path)
    src = acid_spark.createDataFrame([(1, "a", 1), (1, "b", 1)], "id long, name string, p int")
    with pytest.raises(CardinalityViolationError, match="at most one source row"):
        t.alias("t").merge(src.alias("s"), "t.id = s.id").whenMatchedUpdateAll().execute()
    assert _rows(t) == [(i, f"n{i}", i % 3) for i in range(9)]
    assert txnlog.history(t._fs, path)[0]["state"] == "aborted"
    # insert-only merges do not check cardinality
    t.alias("t").merge(src.alias("s"), "t.id = s.id").whenNotMatchedInsertAll().execute()
    assert len(_rows(t)) == 9


def test_bucketed_dml(acid_spark, tmp_path):
    path = str(tmp_path / "t")
    t = _make(acid_spark, path, ids=range(30), bucketBy="id", numBuckets="3", bucketingVersion="1")
    t.update("id < 10", set={"id": "id + 100"})
    t.delete("id = 105")
    expected = sorted([(i + 100 if i < 10 else i, f"n{i}", i % 3) for i in range(30) if i != 5])
    assert _rows(t) == expected
    from spark_hive_acid.acid.bucketing import bucket_ids
    import pyarrow as pa
    for rel, events in _events(path).items():
        n = int(rel.rsplit("_", 1)[1])
        ins = [e["row"]["id"] for e in events if e["operation"] == 0]
        if ins:
            assert set(bucket_ids([pa.array(ins, pa.int64())], ["bigint"], 3, 1).tolist()) == {n}


def test_concurrent_deletes_exactly_one_fails(acid_spark, tmp_path, monkeypatch):
    path = str(tmp_path / "t")
    t = _make(acid_spark, path, partitionBy="p")
    barrier = threading.Barrier(2, timeout=120)
    real_commit = txnlog.commit

    def commit_after_both_wrote(*args, **kwargs):
        barrier.wait()
        return real_commit(*args, **kwargs)

    monkeypatch.setattr(txnlog, "commit", commit_after_both_wrote)
    results = {}

    def run(name, cond):
        try:
            results[name] = HiveAcidTable.forPath(acid_spark, path).delete(cond)
        except Exception as e:  # noqa: BLE001
            results[name] = e

    threads = [threading.Thread(target=run, args=("a", "id = 0")),
               threading.Thread(target=run, args=("b", "id = 3"))]
    for th in threads:
        th.start()
    for th in threads:
        th.join(300)
    errors = [r for r in results.values() if isinstance(r, Exception)]
    assert len(errors) == 1 and isinstance(errors[0], CommitConflictError)
    rows = _rows(t)
    assert len(rows) == 8 and ((0, "n0", 0) in rows) != ((3, "n3", 0) in rows)
    monkeypatch.setattr(txnlog, "commit", real_commit)
    t.delete("id = 6")  # the table is usable afterwards
    assert len(_rows(t)) == 7


def test_history_dataframe(acid_spark, tmp_path):
    t = _make(acid_spark, str(tmp_path / "t"))
    t.delete("id = 1")
    h = [(r.writeId, r.state, r.operation, r.numDeletedRows) for r in t.history().collect()]
    assert h == [(2, "committed", "delete", 1), (1, "committed", "create", 0)]


def test_concurrent_merges_inserting_one_new_key_insert_it_once(acid_spark, tmp_path, monkeypatch):
    """Issue 13 item 5, through the MERGE builder: two upserts of the same new key, committing at
    the same moment, used to both insert it."""
    path = str(tmp_path / "t")
    t = _make(acid_spark, path, partitionBy="p")
    barrier = threading.Barrier(2, timeout=120)
    real_commit = txnlog.commit

    def commit_after_both_wrote(*args, **kwargs):
        barrier.wait()
        return real_commit(*args, **kwargs)

    monkeypatch.setattr(txnlog, "commit", commit_after_both_wrote)
    results = {}

    def run(name, value):
        src = acid_spark.createDataFrame([(100, value, 1)], "id long, name string, p int")
        try:
            results[name] = (HiveAcidTable.forPath(acid_spark, path).alias("t")
                             .merge(src.alias("s"), "t.id = s.id")
                             .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute())
        except Exception as e:  # noqa: BLE001
            results[name] = e

    threads = [threading.Thread(target=run, args=(n, n)) for n in ("a", "b")]
    for th in threads:
        th.start()
    for th in threads:
        th.join(300)
    errors = [r for r in results.values() if isinstance(r, Exception)]
    assert len(errors) == 1 and isinstance(errors[0], CommitConflictError), results
    assert [r for r in _rows(t) if r[0] == 100] in ([(100, "a", 1)], [(100, "b", 1)])
