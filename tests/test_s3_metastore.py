"""Metastore mode on an object store: tables named in a real Hive Metastore (2.3.10, with Hadoop's
S3A client on its classpath: tests/hive_jvm/s3a/pom.xml) whose location is a bucket of the S3
server (moto; markers ``s3``, ``hive``). Appends, overwrites, Spark DELETE / UPDATE / MERGE,
minor and major compactions, vacuum and the streaming sink, each file at its final name (the
metastore's commit makes it visible; nothing renamed), Hive 2.3's reader reading a copy of the
bucket at the metastore's snapshot, and aborted or killed writers cleaned.

The metastore needs S3A to create and check table and partition locations (``create_table``,
``add_partitions`` call ``Warehouse.mkdirs`` / ``isDir`` on them): without it Hive 2.3 answers
``No FileSystem for scheme "s3a"``. It runs here as its own process beside the session's shared
metastore (which keeps its tables on local disk).
"""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import re
import signal
import time
import uuid
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

from hive_ref import valid_txns
from hive_ref.fixtures import hive_ref  # noqa: F401
from service_required import unavailable
from spark_hive_acid import read_table, write_table
from spark_hive_acid.catalog import table_ref
from spark_hive_acid.compaction.hms_clean import vacuum_metastore_table
from spark_hive_acid.compaction.runner import compact

pytestmark = [pytest.mark.s3, pytest.mark.hive]
COLUMNS = [("id", "int"), ("name", "string")]


class S3Metastore:
    def __init__(self, server, bucket, settings: dict[str, str]):
        self.server, self.bucket, self.settings = server, bucket, settings

    @property
    def uri(self) -> str:
        return self.server.uri

    def client(self):
        from spark_hive_acid.metastore import MetastoreClient

        return MetastoreClient(self.uri)

    def options(self, **extra: str) -> dict[str, str]:
        return {"metastoreUri": self.uri, **self.settings, **extra}

    def create(self, name: str) -> str:
        with self.client() as c:
            c.create_table("default", name, COLUMNS, partition_keys=[("ds", "string")],
                           bucket_cols=["id"], num_buckets=2,
                           location=self.bucket.uri(f"warehouse/{name}"))
        return f"default.{name}"


def s3a_jars() -> list[Path]:
    """hadoop-aws and the AWS SDK modules it uses, minus jars pyspark already has."""
    import hive_jvm
    from metastore_server.server import pyspark_jars_dir

    def artifact(p: Path) -> str:
        return re.sub(r"-\d[\w.\-]*\.jar$", "", p.name)

    have = {artifact(p) for p in pyspark_jars_dir().glob("*.jar")}
    return [p for p in hive_jvm.classpath("s3a") if artifact(p) not in have]


@pytest.fixture(scope="module")
def s3_metastore(s3_server, tmp_path_factory):
    from metastore_server.server import MetastoreServer
    from s3_server.fixtures import S3Bucket
    from s3_server.server import ACCESS_KEY, REGION, SECRET_KEY

    bucket = S3Bucket(s3_server, f"wh-{uuid.uuid4().hex[:10]}")
    bucket.client().create_bucket(Bucket=bucket.name)
    settings = {"fs.s3a.endpoint": s3_server.endpoint, "fs.s3a.access.key": ACCESS_KEY,
                "fs.s3a.secret.key": SECRET_KEY, "fs.s3a.path.style.access": "true",
                "fs.s3a.connection.ssl.enabled": "false", "fs.s3a.endpoint.region": REGION}
    try:
        jars = s3a_jars()
        server = MetastoreServer(tmp_path_factory.mktemp("s3_metastore"),
                                 extra_settings=settings, extra_classpath=jars).start()
    except Exception as e:  # noqa: BLE001 - no JDK, no Maven, no network
        unavailable("Hive Metastore with S3A", str(e))
    try:
        yield S3Metastore(server, bucket, settings)
    finally:
        server.stop()


def _keys(hms: S3Metastore, prefix: str) -> list[str]:
    c = hms.bucket.client()
    return sorted(o["Key"] for page in c.get_paginator("list_objects_v2").paginate(
        Bucket=hms.bucket.name, Prefix=prefix) for o in page.get("Contents", []))


def _rows(hms: S3Metastore, table: str) -> Counter:
    t = read_table("", table=table, includeRowId="true", **hms.options())
    return Counter((tuple(r["row__id"].values()), r["id"], r["name"], r["ds"])
                   for r in t.to_pylist())


def _append(hms: S3Metastore, table: str, ids: list[int]) -> None:
    write_table(pa.table({"id": pa.array(ids, pa.int32()), "name": [f"n{i}" for i in ids],
                          "ds": ["a" if i % 2 else "b" for i in ids]}), table=table,
                options=hms.options())


def _hive_reads(hms: S3Metastore, table: str, hive_ref, tmp_path, want: Counter) -> None:  # noqa: F811
    """Hive 2.3's reader on a copy of each partition, at the metastore's snapshot."""
    from storage_targets import S3Target

    name = table.split(".")[1]
    local = S3Target(hms.bucket).download(f"warehouse/{name}", str(tmp_path / f"copy-{name}"))
    with hms.client() as c:
        info = c.get_open_txns_info()
    txns = valid_txns(info.high_watermark, info.open_ids + info.aborted_ids,
                      min(info.open_ids) if info.open_ids else None)
    got = Counter()
    for ds in ("a", "b"):
        if os.path.isdir(f"{local}/ds={ds}"):
            for rid, (i, n) in hive_ref.read(f"{local}/ds={ds}", COLUMNS, bucket_count=2,
                                             valid_txns=txns):
                got[(tuple(rid), i, n, ds)] += 1
    assert got == want


@pytest.mark.spark
def test_metastore_writes_dml_compaction_on_s3(s3_metastore, spark, hive_ref, tmp_path):  # noqa: F811
    from spark_hive_acid import HiveAcidTable

    hms = s3_metastore
    table = hms.create("w_" + uuid.uuid4().hex[:6])
    name = table.split(".")[1]
    model = {}
    for k in range(3):
        ids = list(range(k * 10, k * 10 + 10))
        _append(hms, table, ids)
        model.update({i: (f"n{i}", "a" if i % 2 else "b") for i in ids})
    write_table(pa.table({"id": pa.array([100, 101], pa.int32()), "name": ["x", "y"],
                          "ds": ["b", "b"]}), table=table, mode="overwrite",
                partition_overwrite_mode="dynamic", options=hms.options())
    model = {i: r for i, r in model.items() if r[1] != "b"}
    model.update({100: ("x", "b"), 101: ("y", "b")})
    t = HiveAcidTable.forName(spark, table, options=hms.options())
    t.delete("id = 3")
    t.update("id = 5", set={"name": "'five'"})
    src = spark.createDataFrame([(7, "seven", "a"), (200, "new", "b")], "id int, name string, ds string")
    (t.alias("t").merge(src.alias("s"), "t.id = s.id").whenMatchedUpdate(set={"name": "s.name"})
     .whenNotMatchedInsertAll().execute())
    del model[3]
    model[5], model[7], model[200] = ("five", "a"), ("seven", "a"), ("new", "b")

    def values():
        return sorted((i, n, d) for _, i, n, d in _rows(hms, table).elements())

    assert values() == sorted((i, n, d) for i, (n, d) in model.items())
    before = _rows(hms, table)
    ref = table_ref({"table": table, **hms.options()})
    assert compact(ref, "minor")["partitionsCompacted"] >= 1
    assert compact(ref, "major")["partitionsCompacted"] == 2
    assert _rows(hms, table) == before
    vacuum_metastore_table(ref, retention_hours=0, dry_run=False)
    assert _rows(hms, table) == before
    keys = _keys(hms, f"warehouse/{name}/")
    assert not [k for k in keys if "_hiveacid_staging" in k], keys
    for ds in ("a", "b"):
        assert [k.split("/")[3] for k in keys if k.startswith(f"warehouse/{name}/ds={ds}/")
                and "bucket_" in k] and all(
            k.split("/")[3].startswith("base_") for k in keys
            if k.startswith(f"warehouse/{name}/ds={ds}/") and "bucket_" in k)
    _hive_reads(hms, table, hive_ref, tmp_path, before)
    with hms.client() as c:
        assert c.get_open_txns_info().open_ids == []


def _write_and_die(hms_uri: str, settings: dict, table: str, counter: str) -> None:
    from test_s3_kill import _arm

    _arm(1, counter, "bucket_")  # SIGKILL right after the first file is written in place
    write_table(pa.table({"id": pa.array([500, 501, 502, 503], pa.int32()),
                          "name": ["k"] * 4, "ds": ["a", "b", "a", "b"]}), table=table,
                options={"metastoreUri": hms_uri, **settings})


def test_aborted_and_killed_metastore_writes_leave_nothing(s3_metastore, tmp_path):
    """A write whose commit the metastore refuses (an aborted transaction), and a writer killed
    (SIGKILL) after its first file was in place: the table reads as before, and no file of
    either write id is left in the bucket (the killed one's keep-alive process aborts it and
    sweeps its directories)."""
    from spark_hive_acid.exceptions import TransactionAbortedError

    hms = s3_metastore
    table = hms.create("k_" + uuid.uuid4().hex[:6])
    name = table.split(".")[1]
    _append(hms, table, [1, 2, 3, 4])
    before = _rows(hms, table)

    ref = table_ref({"table": table, **hms.options()})
    from spark_hive_acid.acid.layout import staging_dir
    from spark_hive_acid.txn.committer import commit_write
    from spark_hive_acid.write.schema import map_columns
    from spark_hive_acid.write.task_writer import InsertTarget, TableSpec, stage_batches

    fs, loc = ref.location()
    layout = ref.layout()
    txn = ref.begin("insert")
    data = pa.table({"id": pa.array([9, 10], pa.int32()), "name": ["a", "b"], "ds": ["a", "b"]})
    staged = stage_batches(fs, TableSpec.of(loc, layout), InsertTarget(txn.write_id, 0),
                           map_columns(layout, data.schema), data.to_batches(),
                           fs.join(staging_dir(fs, loc, txn.write_id), "t0"), 0)
    assert all(f"delta_{txn.write_id:07d}" in f.path for f in staged)  # in place already
    with hms.client() as c:
        c.abort_txns([txn.txn_id])  # an administrator's ABORT TRANSACTIONS
    with pytest.raises(TransactionAbortedError):
        commit_write(fs, TableSpec.of(loc, layout), txn, staged)
    assert _rows(hms, table) == before
    assert not [k for k in _keys(hms, f"warehouse/{name}/") if f"_{txn.write_id:07d}_" in k]

    with hms.client() as c:
        open_before = set(c.get_open_txns_info().open_ids)
    counter = tmp_path / "count"
    p = mp.get_context("spawn").Process(target=_write_and_die,
                                        args=(hms.uri, hms.settings, table, str(counter)))
    p.start()
    p.join(120)
    assert p.exitcode == -signal.SIGKILL
    placed = counter.read_text().splitlines()[-1].split()[2]
    dead_w = int(re.search(r"delta_(\d+)_", placed).group(1))
    assert _rows(hms, table) == before
    deadline = time.time() + 90
    while time.time() < deadline:  # the keep-alive process aborts the dead writer's txn
        with hms.client() as c:
            dead = set(c.get_open_txns_info().open_ids) - open_before
        left = [k for k in _keys(hms, f"warehouse/{name}/") if f"_{dead_w:07d}_" in k]
        if not dead and not left:
            break
        time.sleep(0.5)
    assert (dead, left) == (set(), [])
    assert _rows(hms, table) == before


@pytest.mark.spark
def test_streaming_sink_by_name_on_s3(s3_metastore, spark, tmp_path):
    """A Spark stream into a metastore table on S3, stopped and restarted from its checkpoint:
    every input row once."""
    hms = s3_metastore
    table = hms.create("s_" + uuid.uuid4().hex[:6])
    src = tmp_path / "in"
    src.mkdir()

    def add_file(f: int) -> None:
        (src / f"f{f}.json").write_text("".join(
            json.dumps({"id": f * 10 + i, "name": f"x{i}", "ds": "a"}) + "\n" for i in range(3)))

    def run() -> None:
        w = (spark.readStream.schema("id INT, name STRING, ds STRING")
             .option("maxFilesPerTrigger", 1).json(str(src)).writeStream.format("hiveacid")
             .option("checkpointLocation", str(tmp_path / "ckpt")).option("table", table))
        for k, v in hms.options().items():
            w = w.option(k, v)
        w.trigger(availableNow=True).start().awaitTermination()

    for f in range(2):
        add_file(f)
    run()
    add_file(2)
    run()
    got = sorted((i, n) for _, i, n, _ in _rows(hms, table).elements())
    assert got == sorted((f * 10 + i, f"x{i}") for f in range(3) for i in range(3))


def _compact_and_die(hms_uri: str, settings: dict, table: str) -> None:
    def run(units, ctx):
        ctx.run(units[0])  # one file of the output in place, then killed
        os.kill(os.getpid(), signal.SIGKILL)

    compact(table_ref({"table": table, "metastoreUri": hms_uri, **settings}), "major",
            run_units=run)


def test_a_killed_metastore_compaction_is_rolled_back(s3_metastore):
    """A compaction killed while it writes its output in place: readers never see the output;
    once its keep-alive process aborted its transaction, the next compaction rolls the output
    back and runs."""
    hms = s3_metastore
    table = hms.create("c_" + uuid.uuid4().hex[:6])
    name = table.split(".")[1]
    for k in range(3):
        _append(hms, table, list(range(k * 4, k * 4 + 4)))
    before = _rows(hms, table)
    with hms.client() as c:
        open_before = set(c.get_open_txns_info().open_ids)
    p = mp.get_context("spawn").Process(target=_compact_and_die,
                                        args=(hms.uri, hms.settings, table))
    p.start()
    p.join(120)
    assert p.exitcode == -signal.SIGKILL
    assert [k for k in _keys(hms, f"warehouse/{name}/") if "/base_" in k and "bucket_" in k]
    assert _rows(hms, table) == before  # hidden by its install record
    deadline = time.time() + 90
    while time.time() < deadline:
        with hms.client() as c:
            if not set(c.get_open_txns_info().open_ids) - open_before:
                break
        time.sleep(0.5)
    m = compact(table_ref({"table": table, **hms.options()}), "major")
    assert m["partitionsCompacted"] == 2
    assert _rows(hms, table) == before
    claims = [k for k in _keys(hms, f"warehouse/{name}/") if k.endswith("_hiveacid_claim")]
    assert len(claims) == 2 and all(json.loads(hms.bucket.client().get_object(
        Bucket=hms.bucket.name, Key=k)["Body"].read())["compaction"] == m["txnId"]
        for k in claims)


def test_a_metastore_without_s3a_refuses_s3_locations(metastore, s3):
    """The session's shared metastore has no S3A client: it cannot create a table in a bucket
    (why the tests above run their own)."""
    from spark_hive_acid.exceptions import MetastoreError

    with metastore.client() as c, pytest.raises(MetastoreError, match="(?i)s3a"):
        c.create_table("default", "no_s3a_" + uuid.uuid4().hex[:6], COLUMNS,
                       bucket_cols=["id"], num_buckets=2, location=s3.uri("warehouse/x"))
