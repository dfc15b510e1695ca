"""Table metadata, partitions, errors and compaction requests against a real Hive Metastore
(2.3.10, 3.1.3, 4.1.0)."""
from __future__ import annotations

import uuid

import pytest

from metastore_server.fixtures import metastore  # noqa: F401  (session fixture)
from metastore_server.server import free_port
from spark_hive_acid.exceptions import (
    InvalidOptionError,
    MetastoreError,
    NotAnAcidTableError,
    TableNotFoundError,
)
from spark_hive_acid.metastore import (
    MetastoreClient,
    MetastoreUnavailableError,
    PartitionFilter,
    open_table_snapshot,
)

COLS = [("id", "int"), ("name", "string"), ("amount", "decimal(10,2)")]


@pytest.fixture
def hms(metastore):  # noqa: F811
    with metastore.client() as client:
        yield client


@pytest.fixture
def name():
    return f"t_{uuid.uuid4().hex[:10]}"


def test_table_metadata(hms, metastore, name):  # noqa: F811
    created = hms.create_table("default", name, COLS, [("ds", "string"), ("hr", "int")],
                               ["id"], 4)
    t = hms.get_table("default", name)
    assert t == created
    assert (t.db, t.name, t.full_name) == ("default", name, f"default.{name}")
    assert t.columns == tuple(COLS)
    assert t.partition_keys == (("ds", "string"), ("hr", "int"))
    assert (t.bucket_cols, t.num_buckets) == (("id",), 4)
    assert t.is_transactional and t.is_full_acid and not t.is_insert_only
    assert t.transactional_properties == "default" and t.bucketing_version == 2
    assert t.parameters["transactional"] == "true"
    assert t.serde == "org.apache.hadoop.hive.ql.io.orc.OrcSerde"
    assert t.input_format == "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat"
    assert t.output_format == "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"
    assert t.table_type == "MANAGED_TABLE"
    assert t.location.rstrip("/").endswith(str(metastore.warehouse / name))
    assert (metastore.warehouse / name).is_dir()  # the metastore created the directory


def test_explicit_location_and_other_database(hms, metastore, name, tmp_path):  # noqa: F811
    hms.create_database("acid_db")
    hms.create_database("acid_db")  # if_not_exists
    loc = (tmp_path / "somewhere").as_uri()
    t = hms.create_table("acid_db", name, COLS, bucket_cols=["id"], num_buckets=1,
                         location=loc, properties={"orc.compress": "ZLIB"})
    assert t.location.rstrip("/").endswith("/somewhere") and t.parameters["orc.compress"] == "ZLIB"
    assert hms.table_exists("acid_db", name) and not hms.table_exists("acid_db", name + "x")
    hms.drop_table("acid_db", name)
    assert not hms.table_exists("acid_db", name)


def test_hive2_refuses_unbucketed_acid_tables_with_a_hint(hms, metastore, name):  # noqa: F811
    if metastore.major == 2:
        with pytest.raises(MetastoreError, match="must be bucketed.*bucket_cols"):
            hms.create_table("default", name, COLS)
    else:  # Hive 3+ takes unbucketed full-ACID tables
        t = hms.create_table("default", name, COLS)
        assert t.is_full_acid and t.num_buckets == -1 and t.bucket_cols == ()
    with pytest.raises(InvalidOptionError, match="num_buckets"):
        hms.create_table("default", name + "b", COLS, bucket_cols=["id"])


def test_unknown_and_non_transactional_tables(hms, metastore, name):  # noqa: F811
    with pytest.raises(TableNotFoundError, match=f"default.{name}.*{metastore.uri}"):
        hms.get_table("default", name)
    with pytest.raises(TableNotFoundError):
        hms.get_table("no_such_db", name)
    hms.create_table("default", name, COLS, properties={"transactional": "false"})
    with pytest.raises(NotAnAcidTableError, match=rf"spark\.read\.table\('default\.{name}'\)"):
        hms.get_table("default", name)
    plain = hms.get_table("default", name, require_acid=False)
    assert not plain.is_transactional
    with pytest.raises(NotAnAcidTableError):
        open_table_snapshot(metastore.options(table=f"default.{name}"))


def test_partitions_list_filter_and_register(hms, name):
    hms.create_table("default", name, COLS, [("ds", "string"), ("hr", "int")], ["id"], 2)
    added = hms.add_partitions("default", name, [
        {"ds": "2024-01-01", "hr": 1}, ["2024-01-01", "2"], "ds=2024-01-02/hr=1",
        {"ds": "a/b", "hr": 10}], locations=[None, None, None, "file:///tmp/elsewhere"])
    assert [p.name for p in added] == ["ds=2024-01-01/hr=1", "ds=2024-01-01/hr=2",
                                       "ds=2024-01-02/hr=1", "ds=a%2Fb/hr=10"]
    again = hms.add_partitions("default", name, [{"ds": "2024-01-01", "hr": 1}])  # exists: ok
    assert again[0].name == "ds=2024-01-01/hr=1"
    parts = {p.name: p for p in hms.list_partitions("default", name)}
    assert set(parts) == {p.name for p in added}
    assert parts["ds=2024-01-01/hr=2"].values == ("2024-01-01", "2")
    assert parts["ds=2024-01-01/hr=2"].location.endswith(f"/{name}/ds=2024-01-01/hr=2")
    assert parts["ds=a%2Fb/hr=10"].location == "file:/tmp/elsewhere"
    assert parts["ds=a%2Fb/hr=10"].spec(["ds", "hr"]) == {"ds": "a/b", "hr": "10"}

    def names(f):
        return sorted(p.name for p in hms.list_partitions("default", name, f))
    assert names(PartitionFilter.of(("ds", "=", "2024-01-01"))) == [
        "ds=2024-01-01/hr=1", "ds=2024-01-01/hr=2"]
    assert names(PartitionFilter.of(("hr", ">", 9))) == ["ds=a%2Fb/hr=10"]  # int, not text
    assert names(PartitionFilter.of(("hr", "in", [1, 2]), ("ds", "!=", "2024-01-01"))) == [
        "ds=2024-01-02/hr=1"]
    # not expressible in the filter language -> pruned client-side
    assert names(PartitionFilter.of(("ds", "=", "'\""))) == []
    assert names("ds > '2024-01-01'") == ["ds=2024-01-02/hr=1", "ds=a%2Fb/hr=10"]
    with pytest.raises(MetastoreError):
        names("this is not a filter")


def test_metastore_down_names_the_uri():
    port = free_port()  # nothing listens there
    uri = f"thrift://127.0.0.1:{port}"
    with pytest.raises(MetastoreUnavailableError, match=uri):
        MetastoreClient(uri, timeout=2).open()
    with pytest.raises(MetastoreError, match=uri):
        open_table_snapshot({"metastoreUri": uri, "table": "db.t"})


def test_failover_to_the_next_uri_and_reconnect(metastore):  # noqa: F811
    dead = f"thrift://127.0.0.1:{free_port()}"
    with MetastoreClient([dead, metastore.uri], timeout=5) as client:
        assert client.uri == metastore.uri
        client._transport.close()  # the connection breaks under the client
        assert client.get_open_txns_info().high_watermark >= 0  # idempotent call: reconnects


#: where a requested compaction may be by the time it is listed: Hive 3.1 / 4.1 run a Worker
#: (metastore_server.versions), which takes it up within a second or two
QUEUE_STATES = {"initiated", "working", "ready for cleaning", "succeeded", "refused", "failed",
                "did not initiate"}


def test_compaction_requests_and_listing(hms, metastore, name):  # noqa: F811
    hms.create_table("default", name, COLS, [("ds", "string")], ["id"], 2)
    hms.add_partitions("default", name, [{"ds": "a"}])
    unpart = name + "_u"
    hms.create_table("default", unpart, COLS, bucket_cols=["id"], num_buckets=2)

    first = hms.request_compaction("default", name, {"ds": "a"}, "major")
    assert first.accepted and first.state == "initiated"
    dup = hms.request_compaction("default", name, "ds=a", "MAJOR")
    assert not dup.accepted and dup.id == first.id  # one is already queued
    minor = hms.request_compaction("default", unpart, kind="minor")
    assert minor.accepted and minor.id != first.id

    mine = {(c.id, c.table, c.partition, c.type) for c in hms.compactions("default")
            if c.table in (name, unpart)}
    assert mine == {(first.id, name, "ds=a", "MAJOR"), (minor.id, unpart, None, "MINOR")}
    states = {c.state for c in hms.compactions("default") if c.table in (name, unpart)}
    assert states <= (QUEUE_STATES if metastore.compactor_on else {"initiated"})
    assert [c.id for c in hms.compactions("default", unpart)] == [minor.id]

    with pytest.raises(InvalidOptionError, match="partitioned"):
        hms.request_compaction("default", name)
    with pytest.raises(InvalidOptionError, match="major"):
        hms.request_compaction("default", unpart, kind="full")
    with pytest.raises(TableNotFoundError):
        hms.request_compaction("default", name + "_nope")
