"""Writes by table name through a real Hive Metastore (2.3.10): df.write by name, the
HiveAcidTable.forName / create API, DELETE/UPDATE/MERGE by name, and the transaction lifecycle
(no transaction, lock, heartbeat process or staging file is ever left behind)."""
from __future__ import annotations

import os
import pickle
import subprocess
import threading
import time
import uuid

import pyarrow as pa
import pytest
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from spark_hive_acid.exceptions import (
    NotAnAcidTableError,
    SchemaMismatchError,
    TableNotFoundError,
)
from spark_hive_acid.metastore import (
    LockTimeoutError,
    MetastoreNotConfiguredError,
    MetastoreUnavailableError,
    TransactionAbortedError,
    WriteConflictError,
    open_table_snapshot,
    write_transaction,
)
from spark_hive_acid.direct import read_table
from spark_hive_acid.txn.hms_keepalive import spawn_keepalive
from spark_hive_acid.txn.processes import process_info
from spark_hive_acid.spark.writer import create_writer

SCHEMA = StructType([StructField("id", IntegerType()), StructField("name", StringType())])
PSCHEMA = StructType(SCHEMA.fields + [StructField("ds", StringType())])
MARKER = "spark_hive_acid.txn.keepalive"


# --- helpers ---------------------------------------------------------------------------------------
def _create(metastore, tmp_path, partitioned=False, buckets=2):
    """A bucketed transactional table (Hive 2.3 refuses unbucketed full-ACID tables)."""
    name = f"w_{uuid.uuid4().hex[:8]}"
    loc = tmp_path / name
    with metastore.client() as c:
        c.create_table("default", name, [("id", "int"), ("name", "string")],
                       partition_keys=[("ds", "string")] if partitioned else (),
                       bucket_cols=["id"], num_buckets=buckets, location=f"file:{loc}")
    return f"default.{name}", loc


def _batch(ids, ds=None):
    cols = [pa.array(ids, pa.int32()), pa.array([f"n{i}" for i in ids])]
    names = ["id", "name"]
    if ds is not None:
        cols.append(pa.array([ds] * len(ids)))
        names.append("ds")
    return pa.record_batch(cols, names=names)


def _ids(metastore, table, **opts):
    return sorted(read_table("", table=table, metastoreUri=metastore.uri, **opts)
                  .column("id").to_pylist())


def _open_txns(metastore):
    return set(metastore.our_open_txns())  # Hive's own compactor's transactions are not ours


def _helpers(table):
    """Pids of heartbeat helper processes of ``table`` (from /proc)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read().decode("utf-8", "replace")
        except OSError:
            continue
        if MARKER in cmd and f'"{table}"' in cmd:
            out.append(int(d))
    return out


def _eventually(check, timeout=15.0):
    deadline = time.monotonic() + timeout
    while True:
        if check():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)


def _assert_clean(metastore, table, loc, before_open):
    """No new open txn, no lock on the table, no helper process, no staging, no path-mode log."""
    db, name = table.split(".")
    with metastore.client() as c:
        assert _open_txns(metastore) - before_open == set()
        assert c.show_locks(db, name) == []
    assert _eventually(lambda: not _helpers(table)), f"heartbeat helper left: {_helpers(table)}"
    staging = loc / "_hiveacid_staging"
    assert not staging.exists()
    assert not (loc / "_hiveacid_txnlog").exists()


def _acid_dirs(loc):
    return sorted(str(p.relative_to(loc)) for p in loc.rglob("*")
                  if p.is_dir() and p.name.startswith(("base_", "delta_", "delete_delta_")))


@pytest.fixture
def ms_spark(spark):
    from spark_hive_acid.spark.table import ensure_registered

    ensure_registered(spark)
    return spark


# --- the writer lifecycle, driven in-process (what Spark's workers do, without Spark) --------------
def test_rows_invisible_until_commit_and_nothing_left(metastore, tmp_path):
    table, loc = _create(metastore, tmp_path)
    before = _open_txns(metastore)
    opts = {"table": table, "metastoreuri": metastore.uri, "heartbeatinterval": "0.2"}
    writer = create_writer(opts, SCHEMA, False)  # planning worker: txn + lock + helper
    txn = writer.handle.txn_id
    assert _helpers(table) == [writer.helper.pid]
    # executors get an unpickled copy; the task stages its files
    msg = pickle.loads(pickle.dumps(writer)).write(iter([_batch([1, 2, 3])]))
    db, name = table.split(".")
    with metastore.client() as c:
        locks = c.show_locks(db, name)
        assert [(l.txn_id, l.type, l.state) for l in locks] == [(txn, "SHARED_READ", "ACQUIRED")]
        first_beat = locks[0].last_heartbeat_ms
        # the detached helper heartbeats while the "job" runs
        assert _eventually(lambda: c.show_locks(db, name)[0].last_heartbeat_ms > first_beat)
    # a reader's snapshot taken now sees the write id open: the rows are invisible
    _, snap, _ = open_table_snapshot({"table": table, "metastoreUri": metastore.uri})
    assert snap.is_open(writer.write_id)
    assert _ids(metastore, table) == []
    # commit in another "worker", from a fresh unpickled copy
    pickle.loads(pickle.dumps(writer)).commit([msg])
    assert _ids(metastore, table) == [1, 2, 3]
    # the snapshot taken before the commit still does not see them
    assert _ids(metastore, table, validWriteIds=snap.to_string()) == []
    assert _acid_dirs(loc) == [f"delta_{writer.write_id:07d}_{writer.write_id:07d}_0000"]
    _assert_clean(metastore, table, loc, before)


def test_concurrent_writers_get_distinct_write_ids(metastore, tmp_path):
    table, loc = _create(metastore, tmp_path, partitioned=True)
    before = _open_txns(metastore)
    opts = {"table": table, "metastoreuri": metastore.uri}
    writers, errors = [None] * 3, []

    def start(k):
        try:
            writers[k] = create_writer(opts, PSCHEMA, False)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=start, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors
    ids = [w.write_id for w in writers]
    assert len(set(ids)) == 3  # all three transactions are open at once (SHARED_READ locks)
    msgs = [w.write(iter([_batch([10 * k + 1, 10 * k + 2], ds=f"d{k}")]))
            for k, w in enumerate(writers)]
    for w, m in reversed(list(zip(writers, msgs))):
        w.commit([m])
    assert _ids(metastore, table) == [1, 2, 11, 12, 21, 22]
    db, name = table.split(".")
    with metastore.client() as c:
        assert sorted(p.name for p in c.list_partitions(db, name)) == ["ds=d0", "ds=d1", "ds=d2"]
    _assert_clean(metastore, table, loc, before)


def test_partition_locations_and_overwrite_modes(metastore, tmp_path):
    table, loc = _create(metastore, tmp_path, partitioned=True)
    db, name = table.split(".")
    elsewhere = tmp_path / "elsewhere"
    with metastore.client() as c:  # a partition the metastore keeps outside the table directory
        c.add_partitions(db, name, [{"ds": "e"}], locations=[f"file:{elsewhere}"])
    before = _open_txns(metastore)
    opts = {"table": table, "metastoreuri": metastore.uri}

    def write(batches, overwrite, **extra):
        w = create_writer({**opts, **extra}, PSCHEMA, overwrite)
        w.commit([w.write(iter(batches))])
        return w.write_id

    write([_batch([1, 2], ds="e"), _batch([3], ds="f")], False)
    assert any(elsewhere.glob("delta_*/bucket_*"))  # written where the metastore says
    assert not (loc / "ds=e").exists()
    assert _ids(metastore, table) == [1, 2, 3]
    # dynamic overwrite replaces only the partitions that receive rows
    w = write([_batch([4], ds="f")], True, partitionoverwritemode="dynamic")
    assert (loc / "ds=f" / f"base_{w:07d}").is_dir() and not any(elsewhere.glob("base_*"))
    assert _ids(metastore, table) == [1, 2, 4]
    # static overwrite replaces the whole table: ds=e gets an empty base at its own location
    w = write([_batch([5], ds="g")], True)
    assert (elsewhere / f"base_{w:07d}").is_dir()
    assert _ids(metastore, table) == [5]
    with metastore.client() as c:
        assert sorted(p.name for p in c.list_partitions(db, name)) == ["ds=e", "ds=f", "ds=g"]
    _assert_clean(metastore, table, loc, before)


def test_a_commit_asks_only_for_the_partitions_it_wrote(metastore, tmp_path, monkeypatch):
    """A commit into two partitions of a table with many fetches those two from the metastore
    (get_partitions_by_names), never the table's every partition (issue 21)."""
    from spark_hive_acid.metastore.connection import MetastoreConnection

    table, loc = _create(metastore, tmp_path, partitioned=True)
    db, name = table.split(".")
    with metastore.client() as c:
        c.add_partitions(db, name, [{"ds": f"p{i:02d}"} for i in range(40)])
    fetched: list = []
    inner = MetastoreConnection._call

    def counting(self, method, *args, **kw):
        out = inner(self, method, *args, **kw)
        if isinstance(method, str) and method.startswith("get_partitions"):
            fetched.append((method, len(out)))
        return out

    w = create_writer({"table": table, "metastoreuri": metastore.uri}, PSCHEMA, False)
    message = w.write(iter([_batch([1, 2], ds="p07"), _batch([3], ds="new")]))
    monkeypatch.setattr(MetastoreConnection, "_call", counting)
    w.commit([message])
    monkeypatch.undo()
    # p07 (and not "new": absent); Hive 4 asks for the two again to mark their statistics stale
    assert fetched and all(m == "get_partitions_by_names" and n <= 2 for m, n in fetched), fetched
    assert _ids(metastore, table) == [1, 2, 3]
    with metastore.client() as c:
        assert len(c.list_partitions(db, name)) == 41


def test_aborted_transaction_commits_nothing(metastore, tmp_path):
    table, loc = _create(metastore, tmp_path)
    before = _open_txns(metastore)
    writer = create_writer({"table": table, "metastoreuri": metastore.uri}, SCHEMA, False)
    msg = writer.write(iter([_batch([1, 2])]))
    with metastore.client() as c:  # an administrator aborts it (or the metastore timed it out)
        c.abort_txns([writer.handle.txn_id])
    with pytest.raises(TransactionAbortedError, match="nothing was written"):
        writer.commit([msg])
    writer.abort([msg])  # what Spark does after a failed commit: harmless
    assert _ids(metastore, table) == []
    assert _acid_dirs(loc) == []
    _assert_clean(metastore, table, loc, before)


def test_abort_removes_staged_files(metastore, tmp_path):
    table, loc = _create(metastore, tmp_path)
    before = _open_txns(metastore)
    writer = create_writer({"table": table, "metastoreuri": metastore.uri}, SCHEMA, True)
    msg = writer.write(iter([_batch([1, 2])]))
    assert any((loc / "_hiveacid_staging").rglob("bucket_*"))
    pickle.loads(pickle.dumps(writer)).abort([msg])
    with metastore.client() as c:
        assert c.get_open_txns_info().get(writer.handle.txn_id).is_aborted
    assert _ids(metastore, table) == []
    assert _acid_dirs(loc) == []
    _assert_clean(metastore, table, loc, before)


def test_helper_aborts_when_its_owner_dies(metastore, tmp_path):
    table, _ = _create(metastore, tmp_path)
    db, name = table.split(".")
    txn = write_transaction(metastore.options(), db, name, "insert").begin()
    handle = txn.detach()
    assert handle.lock_id is not None and txn.state == "detached"
    owner = subprocess.Popen(["sleep", "300"])
    try:
        start = process_info(owner.pid).start
        helper = spawn_keepalive(handle, 0.2, (owner.pid, start))
        assert helper.alive()
        with metastore.client() as c:
            beat = c.get_open_txns_info().get(handle.txn_id).last_heartbeat_ms
            assert _eventually(lambda: c.get_open_txns_info().get(handle.txn_id)
                               .last_heartbeat_ms > beat)
    finally:
        owner.kill()
        owner.wait()
    assert _eventually(lambda: not helper.alive())
    with metastore.client() as c:
        assert c.get_open_txns_info().get(handle.txn_id).is_aborted
        assert c.show_locks(db, name) == []


def test_errors_open_nothing(metastore, tmp_path, monkeypatch):
    table, loc = _create(metastore, tmp_path)
    with metastore.client() as c:
        hwm = c.get_open_txns_info().high_watermark
    opts = {"table": table, "metastoreuri": metastore.uri}
    bad = StructType([StructField("id", StringType()), StructField("extra", IntegerType())])
    with pytest.raises(SchemaMismatchError, match="extra") as e:
        create_writer(opts, bad, False)
    assert "Nothing was written" in str(e.value)
    with pytest.raises(TableNotFoundError, match="nope"):
        create_writer({**opts, "table": "default.nope"}, SCHEMA, False)
    plain = f"plain_{uuid.uuid4().hex[:8]}"
    with metastore.client() as c:
        c.create_table("default", plain, [("id", "int")], properties={"transactional": "false"},
                       location=f"file:{tmp_path / plain}")
    with pytest.raises(NotAnAcidTableError, match="spark.read.table"):
        create_writer({**opts, "table": f"default.{plain}"}, SCHEMA, False)
    with pytest.raises(Exception, match="partitioned by"):
        create_writer({**opts, "partitionby": "name"}, SCHEMA, False)
    from metastore_server.server import free_port

    down = f"thrift://127.0.0.1:{free_port()}"
    with pytest.raises(MetastoreUnavailableError, match=down):
        create_writer({**opts, "metastoreuri": down}, SCHEMA, False)
    monkeypatch.delenv("HIVE_CONF_DIR", raising=False)
    monkeypatch.setenv("SPARK_PYTHON_RUNTIME", "PYTHON_WORKER")  # as in a planning worker
    with pytest.raises(MetastoreNotConfiguredError, match="HiveAcidTable.forName.*Python workers "
                                                          "do not see it"):
        create_writer({"table": table}, SCHEMA, False)
    monkeypatch.delenv("SPARK_PYTHON_RUNTIME")
    with metastore.client() as c:  # none of these opened a transaction
        assert c.get_open_txns_info().high_watermark == hwm
    assert not loc.exists() or _acid_dirs(loc) == []


def test_lock_wait_timeout(metastore, tmp_path):
    table, loc = _create(metastore, tmp_path)
    db, name = table.split(".")
    before = _open_txns(metastore)
    with write_transaction(metastore.options(), db, name, "insert_overwrite") as holder:
        opts = {"table": table, "metastoreuri": metastore.uri, "lockwaittimeout": "1"}
        with pytest.raises(LockTimeoutError, match=f"txn {holder.txn_id}"):
            create_writer(opts, SCHEMA, False)
        with metastore.client() as c:
            assert [l.txn_id for l in c.show_locks(db, name)] == [holder.txn_id]
    _assert_clean(metastore, table, loc, before)


# --- Spark ------------------------------------------------------------------------------------------
@pytest.mark.spark
def test_create_append_overwrite_by_name(ms_spark, metastore, tmp_path):
    from spark_hive_acid.spark.table import HiveAcidTable

    spark = ms_spark
    name = f"default.c_{uuid.uuid4().hex[:8]}"
    loc = tmp_path / "c"
    # the metastore from the Spark conf (no option)
    spark.conf.set("spark.hadoop.hive.metastore.uris", metastore.uri)
    try:
        t = HiveAcidTable.create(spark, name, "id int, name string", bucketBy=["id"],
                                 numBuckets=2, location=f"file:{loc}",
                                 properties={"owner.team": "etl"})
    finally:
        spark.conf.unset("spark.hadoop.hive.metastore.uris")
    info = t.info()
    assert info.is_full_acid and info.bucket_cols == ("id",) and info.num_buckets == 2
    assert info.parameters["owner.team"] == "etl" and info.bucketing_version == 2
    with pytest.raises(Exception, match="already exists"):
        HiveAcidTable.create(spark, name, "id int", options=metastore.options())
    before = _open_txns(metastore)

    def write(rows, mode):
        (spark.createDataFrame(rows, "id int, name string").write.format("hiveacid")
         .option("table", name).option("metastoreUri", metastore.uri).mode(mode).save())

    write([(1, "a"), (2, "b"), (3, "c")], "append")
    write([(4, "d")], "append")
    df = (spark.read.format("hiveacid").option("table", name)
          .option("metastoreUri", metastore.uri).load())
    assert sorted(tuple(r) for r in df.collect()) == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
    _assert_clean(metastore, name, loc, before)
    write([(7, "x")], "overwrite")
    assert sorted(tuple(r) for r in t.toDF().collect()) == [(7, "x")]
    hist = [(r.state, r.operation) for r in t.history().collect()]
    assert hist == [("committed", "insert_overwrite"), ("committed", "insert"),
                    ("committed", "insert")]
    dirs = _acid_dirs(loc)
    # bucketed appends: one delta_W_W_S per task (S = task index), as in path mode
    assert dirs[0].startswith("base_") and all(d.startswith("delta_") for d in dirs[1:])
    _assert_clean(metastore, name, loc, before)
    # a task that raises: the job fails, nothing becomes visible, nothing is left behind
    from pyspark.sql import functions as F

    @F.udf("string")
    def boom(i):
        if i == 9:
            raise ValueError("boom in a task")
        return "ok"

    bad = spark.createDataFrame([(8, "p"), (9, "q")], "id int, name string").repartition(2) \
        .withColumn("name", boom("id"))
    with pytest.raises(Exception, match="boom in a task"):
        bad.write.format("hiveacid").option("table", name) \
            .option("metastoreUri", metastore.uri).mode("append").save()
    assert sorted(tuple(r) for r in t.toDF().collect()) == [(7, "x")]
    assert _acid_dirs(loc) == dirs
    _assert_clean(metastore, name, loc, before)
    # schema errors surface before anything is opened
    with pytest.raises(Exception, match="column"):
        spark.createDataFrame([(1, 2)], "id int, qty int").write.format("hiveacid") \
            .option("table", name).option("metastoreUri", metastore.uri).mode("append").save()
    _assert_clean(metastore, name, loc, before)
    assert t.requestCompaction("major").accepted
    assert [r.type for r in t.compactions().collect()] == ["major"]


@pytest.mark.spark
def test_partitioned_writes_and_dml_by_name(ms_spark, metastore, tmp_path):
    from spark_hive_acid.spark.table import HiveAcidTable

    spark = ms_spark
    name = f"default.p_{uuid.uuid4().hex[:8]}"
    loc = tmp_path / "p"
    t = HiveAcidTable.create(spark, name, PSCHEMA, partitionBy="ds", bucketBy="id",
                             numBuckets=2, location=f"file:{loc}", options=metastore.options())
    db, tbl = name.split(".")
    before = _open_txns(metastore)
    rows = [(1, "a", "x"), (2, "b", "x"), (3, "c", "y"), (4, "d", None)]
    (spark.createDataFrame(rows, PSCHEMA).write.format("hiveacid").option("table", name)
     .option("metastoreUri", metastore.uri).mode("append").save())

    def parts():
        with metastore.client() as c:
            return sorted(p.name for p in c.list_partitions(db, tbl))

    def content():
        return sorted(tuple(r) for r in t.toDF().collect())

    assert parts() == ["ds=__HIVE_DEFAULT_PARTITION__", "ds=x", "ds=y"]
    assert content() == [(1, "a", "x"), (2, "b", "x"), (3, "c", "y"), (4, "d", None)]
    _assert_clean(metastore, name, loc, before)

    m = t.delete("id = 1")
    assert m["numDeletedRows"] == 1
    _assert_clean(metastore, name, loc, before)
    t.update("id = 3", set={"name": "'C'", "ds": "'z'"})  # moves the row to a new partition
    assert parts() == ["ds=__HIVE_DEFAULT_PARTITION__", "ds=x", "ds=y", "ds=z"]
    src = spark.createDataFrame([(2, "B", "x"), (5, "e", "w")], PSCHEMA)
    m = (t.alias("t").merge(src.alias("s"), "t.id = s.id").whenMatchedUpdateAll()
         .whenNotMatchedInsertAll().execute())
    assert (m["numInsertedRows"], m["numDeletedRows"]) == (2, 1)
    assert content() == [(2, "B", "x"), (3, "C", "z"), (4, "d", None), (5, "e", "w")]
    assert t.count() == 4  # zero-column read of the metastore's snapshot
    assert "ds=w" in parts()
    _assert_clean(metastore, name, loc, before)
    # a DML whose tasks fail: aborted, nothing changes, nothing left
    with pytest.raises(Exception, match="dml boom"):
        t.update("id = 2", set={"name": "raise_error('dml boom')"})
    assert content() == [(2, "B", "x"), (3, "C", "z"), (4, "d", None), (5, "e", "w")]
    _assert_clean(metastore, name, loc, before)
    # a concurrent UPDATE committed first: this DELETE waits for its lock, then is refused
    holder = write_transaction(metastore.options(), db, tbl, "update").begin()
    holder.record_partitions(["ds=__HIVE_DEFAULT_PARTITION__"])  # it updated id 4's partition
    errors = []

    def delete():
        try:
            t.delete("id = 4")
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    th = threading.Thread(target=delete)
    th.start()
    with metastore.client() as c:
        assert _eventually(lambda: any(l.state == "WAITING" for l in c.show_locks(db, tbl)), 120)
    holder.commit()
    th.join(300)
    assert len(errors) == 1 and isinstance(errors[0], WriteConflictError), errors
    assert content() == [(2, "B", "x"), (3, "C", "z"), (4, "d", None), (5, "e", "w")]
    _assert_clean(metastore, name, loc, before)
    # static overwrite: partitions without new rows get an empty base
    (spark.createDataFrame([(9, "n", "x")], PSCHEMA).write.format("hiveacid")
     .option("table", name).option("metastoreUri", metastore.uri).mode("overwrite").save())
    assert content() == [(9, "n", "x")]
    _assert_clean(metastore, name, loc, before)
    with pytest.raises(TableNotFoundError, match="nope"):
        HiveAcidTable.forName(spark, "default.nope", options=metastore.options())


_SLOW_DRIVER = r"""
import os, sys, time
os.environ["PYSPARK_PYTHON"] = sys.executable
from pyspark.sql import SparkSession, functions as F
spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false").getOrCreate())
from spark_hive_acid.spark.table import ensure_registered
ensure_registered(spark)

@F.udf("string")
def slow(i):
    time.sleep(1)
    return "x"

df = spark.range(0, 1000, numPartitions=2).selectExpr("cast(id as int) id").withColumn("name", slow("id"))
df.write.format("hiveacid").option("table", sys.argv[2]).option("metastoreUri", sys.argv[1]) \
    .mode("append").save()
"""


@pytest.mark.skipif(not os.environ.get("HIVE_ACID_SLOW_TESTS"),
                    reason="starts a second Spark driver (~40 s); set HIVE_ACID_SLOW_TESTS=1")
def test_killed_spark_driver_gets_its_txn_aborted(metastore, tmp_path):
    """A real Spark driver SIGKILLed in the middle of a write by name: the heartbeat helper sees
    the driver JVM die and aborts the transaction (no house keeper needed)."""
    import json
    import signal
    import sys

    table, loc = _create(metastore, tmp_path, buckets=1)
    db, name = table.split(".")
    before = _open_txns(metastore)
    script = tmp_path / "driver.py"
    script.write_text(_SLOW_DRIVER)
    proc = subprocess.Popen([sys.executable, str(script), metastore.uri, table],
                            start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        assert _eventually(lambda: _helpers(table), 300), "the write never started"
        with open(f"/proc/{_helpers(table)[0]}/cmdline", "rb") as f:
            cfg = json.loads(f.read().decode().split("\0")[3])
        with open(f"/proc/{cfg['watch_pid']}/comm") as f:
            assert f.read().strip() == "java"  # it watches the driver JVM
        assert _open_txns(metastore) - before == {cfg["txn"]}
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    assert _eventually(lambda: not _helpers(table), 10)
    with metastore.client() as c:
        assert c.get_open_txns_info().get(cfg["txn"]).is_aborted
        assert c.show_locks(db, name) == []
    assert _ids(metastore, table) == []
