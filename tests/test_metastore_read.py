"""Reads by table name through a real Hive Metastore (2.3.10, 3.1.3, 4.1.0): location, schema,
partitions and the metastore's snapshot (open and aborted transactions are invisible). The files
are named by the write id the metastore allocates (Hive 3+: per table; Hive 2: the txn id)."""
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


def _txn(metastore, table, commit=True, abort=False):
    """A transaction that writes ``table``: ``(txn id, write id)``."""
    db, name = table.split(".")
    with metastore.client() as c:
        t = c.open_txn()
        w = c.allocate_write_id(t, db, name)
        if abort:
            c.abort_txn(t)
        elif commit:
            c.commit_txn(t)
    return t, w


def _put(directory, events):
    """One ACID file ``bucket_00000`` in ``directory``."""
    write_acid_file(directory / "bucket_00000", ROW, events)


def _end(metastore, txn):
    """Abort ``txn`` if a failed test left it open (an open txn holds back every compaction)."""
    with metastore.client() as c:
        if txn in c.get_open_txns_info().open_ids:
            c.abort_txn(txn)


def test_open_and_aborted_transactions_are_invisible(metastore, tmp_path):
    table, loc = _table(metastore, tmp_path)
    _, w1 = _txn(metastore, table)
    _put(loc / delta_name(w1, w1, 0), inserts(w1, bp(0), [(1, "a"), (2, "b")]))
    t2, w2 = _txn(metastore, table, commit=False)  # still open
    try:
        _put(loc / delta_name(w2, w2, 0), inserts(w2, bp(0), [(3, "c")]))
        _, w3 = _txn(metastore, table, abort=True)
        _put(loc / delta_name(w3, w3, 0), inserts(w3, bp(0), [(4, "d")]))
        _, w4 = _txn(metastore, table)
        _put(loc / delta_name(w4, w4, 0, delete=True), deletes(w4, [(w1, bp(0), 0)]))

        opts = {"table": table, "metastoreUri": metastore.uri}
        assert sorted(read_table("", **opts).column("id").to_pylist()) == [2]
        with metastore.client() as c:
            c.commit_txn(t2)
    finally:
        _end(metastore, t2)
    assert sorted(read_table("", **opts).column("id").to_pylist()) == [2, 3]
    # the path reader, which knows no transactions, sees the aborted and open ones too
    assert sorted(read_table(str(loc)).column("id").to_pylist()) == [2, 3, 4]


def test_schema_and_partitions_come_from_the_metastore(metastore, tmp_path):
    table, loc = _table(metastore, tmp_path, partitioned=True)
    db, name = table.split(".")
    _, w1 = _txn(metastore, table)
    # a partition stored outside the table directory: only the metastore knows where it is
    elsewhere = tmp_path / "elsewhere" / "p2"
    _put(loc / "ds=2024-01-01" / delta_name(w1, w1, 0), inserts(w1, bp(0), [(1, "a")]))
    _put(elsewhere / delta_name(w1, w1, 0), inserts(w1, bp(0), [(2, "b")]))
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
                       location=metastore.plain_location(tmp_path / name))
    with pytest.raises(NotAnAcidTableError, match="spark.read.table"):
        read_table("", table=f"default.{name}", metastoreUri=metastore.uri)


@pytest.mark.spark
def test_spark_reads_by_name(spark, metastore, tmp_path):
    table, loc = _table(metastore, tmp_path)
    _, w1 = _txn(metastore, table)
    _put(loc / delta_name(w1, w1, 0), inserts(w1, bp(0), [(1, "a"), (2, "b")]))
    t2, w2 = _txn(metastore, table, commit=False)
    try:
        _put(loc / delta_name(w2, w2, 0), inserts(w2, bp(0), [(3, "c")]))
        df = spark.read.format("hiveacid").option("table", table).option("metastoreUri", metastore.uri).load()
        assert sorted(r.id for r in df.collect()) == [1, 2]
    finally:
        _end(metastore, t2)
