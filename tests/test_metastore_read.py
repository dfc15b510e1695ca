"""Reads by table name through a real Hive Metastore (2.3.10): location, schema, partitions and
the metastore's snapshot (open and aborted transactions are invisible)."""
import uuid

import pytest
from acid_files import bp, delta_name, deletes, inserts, write_acid_file

from spark_hive_acid.exceptions import NotAnAcidTableError, TableNotFoundError
from spark_hive_acid.catalog import open_scan
from spark_hive_acid.direct import read_table

ROW = "struct<id:int,name:string>"


def _table(metastore, tmp_path, partitioned=False):
    name = f"t_{uuid.uuid4().hex[:8]}"
    location = tmp_path / name
    with metastore.client() as c:
        c.create_table("default", name, [("id", "int"), ("name", "string")],
                       partition_keys=[("ds", "string")] if partitioned else (),
                       bucket_cols=["id"], num_buckets=1, location=f"file:{location}")
    return f"default.{name}", location


def _txn(metastore, commit=True, abort=False):
    with metastore.client() as c:
        t = c.open_txn()
        if abort:
            c.abort_txn(t)
        elif commit:
            c.commit_txn(t)
    return t


def test_open_and_aborted_transactions_are_invisible(metastore, tmp_path):
    table, loc = _table(metastore, tmp_path)
    t1 = _txn(metastore)
    write_acid_file(loc / delta_name(t1, t1, 0) / "bucket_00000", ROW, inserts(t1, bp(0), [(1, "a"), (2, "b")]))
    t2 = _txn(metastore, commit=False)  # still open
    write_acid_file(loc / delta_name(t2, t2, 0) / "bucket_00000", ROW, inserts(t2, bp(0), [(3, "c")]))
    t3 = _txn(metastore, abort=True)
    write_acid_file(loc / delta_name(t3, t3, 0) / "bucket_00000", ROW, inserts(t3, bp(0), [(4, "d")]))
    t4 = _txn(metastore)
    write_acid_file(loc / delta_name(t4, t4, 0, delete=True) / "bucket_00000", ROW, deletes(t4, [(t1, bp(0), 0)]))

    opts = {"table": table, "metastoreUri": metastore.uri}
    assert sorted(read_table("", **opts).column("id").to_pylist()) == [2]
    with metastore.client() as c:
        c.commit_txn(t2)
    assert sorted(read_table("", **opts).column("id").to_pylist()) == [2, 3]
    # the path reader, which knows no transactions, sees the aborted and open ones too
    assert sorted(read_table(str(loc)).column("id").to_pylist()) == [2, 3, 4]


def test_schema_and_partitions_come_from_the_metastore(metastore, tmp_path):
    table, loc = _table(metastore, tmp_path, partitioned=True)
    db, name = table.split(".")
    t1 = _txn(metastore)
    # a partition stored outside the table directory: only the metastore knows where it is
    elsewhere = tmp_path / "elsewhere" / "p2"
    write_acid_file(loc / "ds=2024-01-01" / delta_name(t1, t1, 0) / "bucket_00000", ROW, inserts(t1, bp(0), [(1, "a")]))
    write_acid_file(elsewhere / delta_name(t1, t1, 0) / "bucket_00000", ROW, inserts(t1, bp(0), [(2, "b")]))
    with metastore.client() as c:
        c.add_partitions(db, name, [("2024-01-01",), ("2024-01-02",)],
                         locations=[f"file:{loc}/ds=2024-01-01", f"file:{elsewhere}"])
    scan = open_scan({"table": table, "metastoreUri": metastore.uri})
    assert [c.name for c in scan.all_columns(False)] == ["id", "name", "ds"]
    rows = sorted(scan.to_arrow().to_pylist(), key=lambda r: r["id"])
    assert rows == [{"id": 1, "name": "a", "ds": "2024-01-01"}, {"id": 2, "name": "b", "ds": "2024-01-02"}]


def test_unknown_and_non_transactional_tables(metastore, tmp_path):
    with pytest.raises(TableNotFoundError, match="nope"):
        read_table("", table="default.nope", metastoreUri=metastore.uri)
    name = f"plain_{uuid.uuid4().hex[:8]}"
    with metastore.client() as c:
        c.create_table("default", name, [("id", "int")], properties={"transactional": "false"},
                       location=f"file:{tmp_path / name}")
    with pytest.raises(NotAnAcidTableError, match="spark.read.table"):
        read_table("", table=f"default.{name}", metastoreUri=metastore.uri)


@pytest.mark.spark
def test_spark_reads_by_name(spark, metastore, tmp_path):
    table, loc = _table(metastore, tmp_path)
    t1 = _txn(metastore)
    write_acid_file(loc / delta_name(t1, t1, 0) / "bucket_00000", ROW, inserts(t1, bp(0), [(1, "a"), (2, "b")]))
    t2 = _txn(metastore, commit=False)
    try:
        write_acid_file(loc / delta_name(t2, t2, 0) / "bucket_00000", ROW,
                        inserts(t2, bp(0), [(3, "c")]))
        df = spark.read.format("hiveacid").option("table", table) \
            .option("metastoreUri", metastore.uri).load()
        assert sorted(r.id for r in df.collect()) == [1, 2]
    finally:  # on Hive 2.3 an open transaction holds back every table of the shared metastore
        with metastore.client() as c:
            c.abort_txn(t2)
