"""Writing insert-only tables by name through a real Hive Metastore (2.3.10, 3.1.3, 4.1.0;
tests/metastore_server).

Hive 2.3's metastore predates insert-only tables and refuses to create them; its test server runs
with a listener that applies Hive 3's rule to insert-only tables and Hive 2.3's own listener to
everything else (tests/metastore_server/java/TransactionalValidationListener.java); Hive 3.1 and
4.1 hold them natively. The write ids, locks, commits and partitions are the metastore's own:
every write is a metastore transaction (a Hive 2 metastore has no per-table write ids, so the
transaction id is the write id).
"""
from __future__ import annotations

import uuid
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

from insert_only_layout import apply_write, check_layout
from spark_hive_acid import read_table, write_table
from spark_hive_acid.exceptions import InvalidOptionError, UnsupportedOperationError

MAX = 9223372036854775807
PARQUET = dict(input_format="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
               output_format="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
               serde="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe")
TEXT = dict(input_format="org.apache.hadoop.mapred.TextInputFormat",
            output_format="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
            serde="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe")
COLUMNS = [("id", "int"), ("name", "string"), ("ts", "timestamp"), ("amount", "decimal(10,2)")]


@pytest.fixture
def mm_metastore(metastore):
    if not metastore.accepts_insert_only:
        pytest.skip("the test metastore holds insert-only tables only with its listener, which "
                    "needs a JDK (javac) to build")
    return metastore


def _create(metastore, tmp_path, fmt="orc", partitioned=True, buckets=0):
    name = f"mm_{uuid.uuid4().hex[:8]}"
    loc = tmp_path / name
    formats = {"parquet": PARQUET, "text": TEXT}.get(fmt, {})
    props = {"transactional_properties": "insert_only"}
    if fmt == "parquet":
        props["parquet.compression"] = "GZIP"
    with metastore.client() as c:
        info = c.create_table("default", name, COLUMNS,
                              partition_keys=[("ds", "string")] if partitioned else (),
                              bucket_cols=["id"] if buckets else (), num_buckets=buckets or -1,
                              properties=props, location=f"file:{loc}", **formats)
    assert info.is_insert_only
    return f"default.{name}", loc


def _rows(ids, ds=None):
    data = {"id": pa.array(ids, pa.int32()), "name": [f"n{i}" for i in ids],
            "ts": pa.array([None if i % 3 == 0 else i * 10**12 for i in ids], pa.timestamp("us")),
            "amount": pa.array([None if i % 4 == 0 else Decimal(i * 100 + 1).scaleb(-2)
                                for i in ids], pa.decimal128(10, 2))}
    if ds is not None:
        data["ds"] = pa.array([ds(i) if callable(ds) else ds for i in ids], pa.string())
    return pa.table(data)


def _key(r):
    return tuple(sorted(r.items()))


def _read(metastore, table, w=None):
    opts = {"validWriteIds": f"{table}:{w}:{MAX}::"} if w is not None else {}
    return Counter(_key(r) for r in read_table("", table=table, metastoreUri=metastore.uri,
                                               **opts).to_pylist())


@pytest.mark.parametrize("fmt", ["orc", "parquet"])
def test_appends_and_overwrites_by_name_read_back_at_every_write_id(mm_metastore, tmp_path, fmt):
    metastore = mm_metastore
    table, loc = _create(metastore, tmp_path, fmt)
    opts = {"metastoreUri": metastore.uri}
    parts: dict[str, list] = {}
    snapshots: dict[int, Counter] = {}
    steps = [
        ("append", _rows(list(range(10)), lambda i: f"d{i % 3}"), "static"),
        ("overwrite", _rows([20, 21], "d1"), "dynamic"),          # only ds=d1 replaced
        ("append", _rows([30], "d/4"), "static"),                  # a new partition, escaped name
        ("overwrite", _rows([], "d0"), "dynamic"),                 # no rows: nothing replaced
        ("overwrite", _rows([40, 41, 42], "d2"), "static"),        # every partition replaced
        ("append", _rows([50], "d0"), "static"),
    ]
    for mode, data, overwrite_mode in steps:
        metrics = write_table(data, table=table, mode=mode,
                              partition_overwrite_mode=overwrite_mode, options=opts)
        op = "append" if mode == "append" else overwrite_mode.replace("static", "overwrite")
        parts = apply_write(parts, op, data.to_pylist(), lambda r: r["ds"])
        w = metrics["writeId"]
        snapshots[w] = Counter(_key(r) for rs in parts.values() for r in rs)
        for earlier, want in snapshots.items():
            assert _read(metastore, table, earlier) == want, f"{mode}: snapshot {earlier}"
    assert _read(metastore, table) == snapshots[max(snapshots)]
    db, name = table.split(".")
    with metastore.client() as c:
        registered = sorted(p.values[0] for p in c.list_partitions(db, name))
        assert registered == ["d/4", "d0", "d1", "d2"]  # every partition written, as for full ACID
        assert c.show_locks(db, name) == []
    assert metastore.our_open_txns() == []
    assert check_layout(Path(loc), fmt, [c for c, _ in COLUMNS]) >= 8


def test_bucketed_insert_only_table_by_name(mm_metastore, tmp_path):
    table, loc = _create(mm_metastore, tmp_path, "orc", partitioned=False, buckets=4)
    opts = {"metastoreUri": mm_metastore.uri}
    write_table(_rows(list(range(40))), table=table, options=opts)
    write_table(_rows(list(range(40, 60))), table=table, mode="overwrite", options=opts)
    assert _read(mm_metastore, table) == Counter(_key(r) for r in _rows(list(range(40, 60)))
                                                 .to_pylist())
    # bucketing_version 2 (the client's default for new tables): files named by bucket
    assert check_layout(Path(loc), "orc", [c for c, _ in COLUMNS], (["id"], ["int"], 4, 2)) >= 2


def test_text_insert_only_table_and_wrong_options_are_refused(mm_metastore, tmp_path):
    text, loc = _create(mm_metastore, tmp_path, "text", partitioned=False)
    opts = {"metastoreUri": mm_metastore.uri}
    with mm_metastore.client() as c:
        before = c.get_open_txns_info().high_watermark
    with pytest.raises(UnsupportedOperationError, match="insert-only table stored as .*TextInput"):
        write_table(_rows([1]), table=text, options=opts)
    orc, _ = _create(mm_metastore, tmp_path, "orc", partitioned=False)
    with pytest.raises(InvalidOptionError, match="not parquet; drop the fileFormat option"):
        write_table(_rows([1]), table=orc, options={**opts, "fileFormat": "parquet"})
    with mm_metastore.client() as c:
        assert c.get_open_txns_info().high_watermark == before  # no transaction was opened
    assert not loc.exists() or not any(loc.iterdir())


@pytest.mark.spark
def test_spark_writes_by_name_and_dml_is_refused(mm_metastore, tmp_path, spark):
    from spark_hive_acid.spark.table import HiveAcidTable, ensure_registered

    ensure_registered(spark)
    table, loc = _create(mm_metastore, tmp_path, "parquet")
    rows = [tuple(r.values()) for r in _rows(list(range(6)), lambda i: f"d{i % 2}").to_pylist()]
    df = spark.createDataFrame(
        rows, "id int, name string, ts timestamp_ntz, amount decimal(10,2), ds string")
    (df.repartition(2).write.format("hiveacid").option("table", table)
     .option("metastoreUri", mm_metastore.uri).mode("append").save())
    (df.filter("id = 0").write.format("hiveacid").option("table", table)
     .option("metastoreUri", mm_metastore.uri).option("partitionOverwriteMode", "dynamic")
     .mode("overwrite").save())
    got = sorted(r.id for r in spark.read.format("hiveacid").option("table", table)
                 .option("metastoreUri", mm_metastore.uri).load().collect())
    assert got == [0, 1, 3, 5]  # ds=d0 replaced by id 0; ds=d1 kept
    t = HiveAcidTable.forName(spark, table, {"metastoreUri": mm_metastore.uri})
    with pytest.raises(UnsupportedOperationError, match="Cannot DELETE .* insert-only"):
        t.delete("id = 1")
    with pytest.raises(UnsupportedOperationError, match="Cannot UPDATE .* insert-only"):
        t.update("id = 1", set={"name": "'x'"})
    assert mm_metastore.our_open_txns() == []
    check_layout(Path(loc), "parquet", [c for c, _ in COLUMNS])
