"""Issue 26's table semantics on tables of a real Hive Metastore (2.3.10, tests/metastore_server):
static partition overwrite by name (a partition that did not exist is registered), dropPartitions
and truncate as metastore transactions (the partitions stay registered, empty), addColumns through
the metastore's alter_table, create by name with char/varchar, restoreToVersion."""
from __future__ import annotations

import uuid
from collections import Counter

import pyarrow as pa
import pytest

from spark_hive_acid import read_table, write_table
from spark_hive_acid.catalog import MetastoreTable
from spark_hive_acid.tableops import drop_partitions, truncate


def _table(metastore, tmp_path):
    name = f"o_{uuid.uuid4().hex[:8]}"
    with metastore.client() as c:
        c.create_table("default", name, [("id", "int"), ("v", "string")],
                       partition_keys=[("ds", "string")], bucket_cols=["id"], num_buckets=2,
                       location=f"file:{tmp_path / name}")
    return f"default.{name}", tmp_path / name


def _data(rows, with_ds=True):
    cols = {"id": pa.array([r[0] for r in rows], pa.int32()), "v": [r[1] for r in rows]}
    if with_ds:
        cols["ds"] = [r[2] for r in rows]
    return pa.table(cols)


def _rows(metastore, table, *cols, **opts):
    t = read_table("", table=table, metastoreUri=metastore.uri, **opts)
    return Counter(zip(*(t.column(c).to_pylist() for c in (cols or ("id", "v", "ds")))))


def _open(metastore):
    with metastore.client() as c:
        return set(c.get_open_txns_info().open_ids)


def test_partition_replacements_by_name(metastore, tmp_path):
    table, loc = _table(metastore, tmp_path)
    db, name = table.split(".")
    opts = {"metastoreUri": metastore.uri}
    before = _open(metastore)
    write_table(_data([(1, "a", "x"), (2, "b", "y"), (3, "c", "z")]), table=table, options=opts)
    v1 = _rows(metastore, table)
    m = write_table(_data([], False), table=table, mode="overwrite", partition={"ds": "x"},
                    options=opts)
    assert _rows(metastore, table) == Counter([(2, "b", "y"), (3, "c", "z")])
    assert (loc / "ds=x" / f"base_{m['writeId']:07d}").is_dir()
    write_table(_data([(4, "d")], False), table=table, mode="overwrite",
                partition={"ds": "new"}, options=opts)
    with metastore.client() as c:
        assert sorted(p.name for p in c.list_partitions(db, name)) == [
            "ds=new", "ds=x", "ds=y", "ds=z"]
    write_table(_data([(5, "e", "y")]), table=table, mode="overwrite",
                options={**opts, "replaceWhere": "ds >= 'y'"})
    assert _rows(metastore, table) == Counter([(4, "d", "new"), (5, "e", "y")])
    ref = MetastoreTable.from_options({"table": table, **opts})
    assert drop_partitions(ref, {"ds": "new"})["partitions"] == ["ds=new"]
    assert _rows(metastore, table) == Counter([(5, "e", "y")])
    truncate(ref)
    assert _rows(metastore, table) == Counter()
    assert _rows(metastore, table, versionAsOf=str(m["writeId"] - 1)) == v1
    with metastore.client() as c:
        assert len(c.list_partitions(db, name)) == 4  # emptied, not unregistered
        assert c.show_locks(db, name) == []
    assert _open(metastore) - before == set()
    ops = [h["operation"] for h in ref.history()]
    assert ops[:3] == ["insert_overwrite"] * 3  # bases, as the directories tell it


def test_add_columns_by_name(metastore, tmp_path):
    table, _ = _table(metastore, tmp_path)
    db, name = table.split(".")
    opts = {"metastoreUri": metastore.uri}
    write_table(_data([(1, "a", "x")]), table=table, options=opts)
    ref = MetastoreTable.from_options({"table": table, **opts})
    layout = ref.add_columns([("note", "varchar(4)")])
    assert layout.columns == [("id", "int"), ("v", "string"), ("note", "varchar(4)")]
    with metastore.client() as c:
        assert [col for col, _ in c.get_table(db, name).columns][-1] == "note"
    write_table(pa.table({"id": pa.array([2], pa.int32()), "v": ["b"], "note": ["long text"],
                          "ds": ["x"]}), table=table, options=opts)
    assert _rows(metastore, table, "id", "note") == Counter([(1, None), (2, "long")])
    with pytest.raises(Exception, match="already has a column 'note'"):
        ref.add_columns([("NOTE", "int")])
    write_table(pa.table({"id": pa.array([3], pa.int32()), "v": ["c"], "extra": [1.5],
                          "ds": ["x"]}), table=table, options={**opts, "mergeSchema": "true"})
    assert _rows(metastore, table, "id", "note", "extra") == Counter(
        [(1, None, None), (2, "long", None), (3, None, 1.5)])


@pytest.mark.spark
def test_create_by_name_with_char_types_and_restore(spark, metastore, tmp_path):
    from spark_hive_acid import HiveAcidTable

    name = f"default.r_{uuid.uuid4().hex[:8]}"
    t = HiveAcidTable.create(spark, name, "id int, code char(3), ds string", partitionBy="ds",
                             bucketBy="id", numBuckets=2, location=f"file:{tmp_path / 'r'}",
                             options=metastore.options())
    assert [(c, ty) for c, ty in t.info().columns] == [("id", "int"), ("code", "char(3)")]
    opts = {"metastoreUri": metastore.uri}
    write_table(pa.table({"id": pa.array([1, 2], pa.int32()), "code": ["a", "abcd"],
                          "ds": ["x", "y"]}), table=name, options=opts)
    first = {tuple(r) for r in t.toDF().collect()}
    assert first == {(1, "a  ", "x"), (2, "abc", "y")}
    version = max(r["writeId"] for r in t.history().collect())
    t.delete("id = 1")
    t.dropPartitions("ds = 'y'")
    assert t.toDF().count() == 0
    m = t.restoreToVersion(version)
    assert {tuple(r) for r in t.toDF().collect()} == first and m["partitions"] == ["ds=x", "ds=y"]
