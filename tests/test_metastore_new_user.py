"""Issue 14 in metastore mode, against the real Hive Metastore: versionAsOf, timestampAsOf's clear
refusal, a validWriteIds string naming another table refused, and the hiveacid CLI on a table by
name (inspect, history, snapshot, validate)."""
from __future__ import annotations

import json
import uuid

import pyarrow as pa
import pytest

from spark_hive_acid import read_table, write_table
from spark_hive_acid.catalog import MetastoreTable
from spark_hive_acid.cli import main
from spark_hive_acid.exceptions import InvalidOptionError, InvalidSnapshotError


@pytest.fixture
def table(metastore, tmp_path):
    name = f"n_{uuid.uuid4().hex[:8]}"
    with metastore.client() as c:
        c.create_table("default", name, [("id", "int"), ("name", "string")],
                       bucket_cols=["id"], num_buckets=1, location=f"file:{tmp_path / name}")
    full = f"default.{name}"
    schema = pa.schema([("id", pa.int32()), ("name", pa.string())])
    for rows in ([1, 2], [3]):
        write_table(pa.table({"id": rows, "name": ["x"] * len(rows)}, schema), table=full,
                    options=metastore.options())
    return full


def _ids(**kw):
    return sorted(read_table("", **kw).column("id").to_pylist())


def test_version_time_and_foreign_snapshots(metastore, table):
    opts = {"table": table, "metastoreUri": metastore.uri}
    current = MetastoreTable.from_options(opts).snapshot()
    first = current.high_watermark - 1
    assert _ids(**opts) == [1, 2, 3]
    assert _ids(**opts, versionAsOf=first) == [1, 2]
    with pytest.raises(InvalidOptionError, match="Hive Metastore does not record when .*versionAsOf"):
        read_table("", **opts, timestampAsOf="2030-01-01")
    other = f"default.other:{current.high_watermark}:9223372036854775807::"
    with pytest.raises(InvalidSnapshotError, match="names table 'default.other'"):
        read_table("", **opts, validWriteIds=other)
    assert _ids(**opts, validWriteIds=current.to_string()) == [1, 2, 3]
    short = table.split(".")[1]  # 'table' alone means the default database
    assert _ids(**opts, validWriteIds=f"{short}:{first}:9223372036854775807::") == [1, 2]


def test_cli_on_a_table_by_name(metastore, table, capsys):
    uri = ["--metastore-uri", metastore.uri]
    assert main(["snapshot", table, *uri]) == 0
    snapshot = capsys.readouterr().out.strip()
    assert snapshot.startswith(table + ":")
    assert main(["inspect", table, *uri, "--json"]) == 0
    (part,) = json.loads(capsys.readouterr().out)["partitions"]
    assert [d["status"] for d in part["directories"]] == ["read", "read"]
    assert part["summary"]["rows"] == 3
    assert main(["history", table, *uri, "--json"]) == 0
    assert [h["operation"] for h in json.loads(capsys.readouterr().out)] == ["insert", "insert"]
    assert main(["validate", table, *uri]) == 0
    assert capsys.readouterr().out == ""


@pytest.mark.spark
def test_sql_views_by_name_and_the_spark_conf(spark, metastore, table, monkeypatch):
    """With the metastore only in the Spark conf: spark.read by name says what works (the
    workers do not see the conf, issue 14 §6); register_view and HiveAcidTable.forName work."""
    import spark_hive_acid as sha
    from spark_hive_acid.spark.table import HiveAcidTable, ensure_registered

    ensure_registered(spark)
    monkeypatch.delenv("HIVE_CONF_DIR", raising=False)
    spark.conf.set("spark.hadoop.hive.metastore.uris", metastore.uri)
    try:
        with pytest.raises(Exception, match="option metastoreUri.*hive-site.xml.*HiveAcidTable"
                                            ".forName") as e:
            spark.read.format("hiveacid").option("table", table).load().collect()
        assert "or the Spark conf" not in str(e.value)
        sha.register_view(spark, "by_name", table=table)
        sha.sql(spark, "INSERT INTO by_name VALUES (4, 'y')")
        assert sorted(r[0] for r in sha.sql(spark, "SELECT id FROM by_name").collect()) == \
            [1, 2, 3, 4]
        t = HiveAcidTable.forName(spark, table)
        assert t.snapshot().startswith(table + ":")
        assert t.detail().first().name == table
    finally:
        spark.conf.unset("spark.hadoop.hive.metastore.uris")
