"""Compaction of a table named in a real Hive Metastore (2.3.10, 3.1.3, 4.1.0;
tests/metastore_server): a compaction transaction of the metastore (no write id, a SHARED_READ
lock), output under the partitions' locations, H below an open write id, rows and ROW__IDs kept,
Hive 2.3's reader reads the result; nothing left open. On 3.1 / 4.1 Hive's own compactor threads
run meanwhile (they leave these small tables alone: too few deltas)."""
from __future__ import annotations

import os
import uuid
from collections import Counter

import pyarrow as pa
import pytest

from hive_ref import valid_txns
from hms_rows import delete_ids, rows_with_ids
from hive_ref.fixtures import hive_ref  # noqa: F401
from spark_hive_acid.catalog import table_ref
from spark_hive_acid.compaction.runner import compact
from spark_hive_acid.direct import read_table, write_table

pytestmark = pytest.mark.hive
COLUMNS = [("id", "int"), ("name", "string")]


def _create(metastore, tmp_path):
    name = f"c_{uuid.uuid4().hex[:8]}"
    with metastore.client() as c:
        c.create_table("default", name, COLUMNS, partition_keys=[("ds", "string")],
                       bucket_cols=["id"], num_buckets=2, location=f"file:{tmp_path / name}")
    return f"default.{name}", tmp_path / name


def _rows(metastore, table):
    return rows_with_ids(metastore.uri, table)


def _delete(metastore, table, ids):
    delete_ids(metastore.uri, table, ids)


def test_metastore_table_minor_and_major(metastore, tmp_path, hive_ref):  # noqa: F811
    table, loc = _create(metastore, tmp_path)
    opts = {"metastoreUri": metastore.uri}
    for k in range(3):
        ids = list(range(k * 10, k * 10 + 10))
        write_table(pa.table({"id": pa.array(ids, pa.int32()), "name": [f"n{i}" for i in ids],
                              "ds": ["a" if i % 2 else "b" for i in ids]}), table=table, options=opts)
    _delete(metastore, table, [3, 4, 15, 28])
    before = _rows(metastore, table)
    assert len(before) == 26
    ref = table_ref({"table": table, "metastoreuri": metastore.uri})
    open_writer = ref.begin("insert")  # open during both compactions
    try:
        m = compact(ref, "minor")
        assert m["partitions"] == ["ds=a", "ds=b"] and m["writeId"] is None and m["txnId"] > 0
        assert _rows(metastore, table) == before
        m = compact(ref, "major")
        assert m["highWatermark"] < open_writer.write_id  # H: a write id (Hive 2: a txn id)
        assert _rows(metastore, table) == before
        for ds in ("a", "b"):
            part = loc / f"ds={ds}"
            assert f"base_{m['highWatermark']:07d}" in os.listdir(part)
            with metastore.client() as c:  # the table's write ids (Hive 2: its txn list)
                w, _ = c.read_snapshot("default", table.split(".")[1])
            hive = hive_ref.read(part, COLUMNS, bucket_count=2, valid_txns=valid_txns(
                w.high_watermark, w.exceptions, w.min_open if w.min_open < 2**63 - 1 else None))
            ours = Counter((rid, (i, n)) for rid, i, n, d in before.elements() if d == ds)
            assert Counter((tuple(r), tuple(v)) for r, v in hive) == ours
    finally:
        open_writer.abort("test")
    assert metastore.our_open_txns() == []  # the compactions left none
    with metastore.client() as c:
        assert [lk for lk in c.show_locks("default", table.split(".")[1])] == []


def test_metastore_vacuum_waits_for_older_transactions_and_locks(metastore, tmp_path):
    """Hive's Cleaner rule: the directories a compaction made obsolete stay while a transaction
    or a lock older than the compaction is open (a reader that planned before it), then go."""
    from spark_hive_acid.compaction.hms_clean import vacuum_metastore_table
    from spark_hive_acid.txn.hms import HmsTransaction

    table, loc = _create(metastore, tmp_path)
    opts = {"metastoreUri": metastore.uri}
    for k in range(2):
        ids = list(range(k * 4, k * 4 + 4))
        write_table(pa.table({"id": pa.array(ids, pa.int32()), "name": [f"n{i}" for i in ids],
                              "ds": ["a"] * 4}), table=table, options=opts)
    _delete(metastore, table, [1])
    before = _rows(metastore, table)
    ref = table_ref({"table": table, "metastoreuri": metastore.uri})
    with metastore.client() as c:
        reader = HmsTransaction(c, "default", table.split(".")[1], "read").begin()  # a slow read
    try:
        compact(ref, "major")
        old = sorted(n for n in os.listdir(loc / "ds=a") if n.startswith("del"))
        got = vacuum_metastore_table(ref, 0, False)
        assert got["removed"] == [] and len(got["kept"]) == 3
        assert "open and may read" in next(iter(got["reasons"].values()))
        assert sorted(n for n in os.listdir(loc / "ds=a") if n.startswith("del")) == old
        assert _rows(metastore, table) == before
    finally:
        reader.commit()
    assert vacuum_metastore_table(ref, 1, False)["removed"] == []  # younger than 1 h
    dry = vacuum_metastore_table(ref, 0, True)
    assert len(dry["removed"]) == 3 and all(os.path.exists(p) for p in dry["removed"])
    done = vacuum_metastore_table(ref, 0, False)
    assert sorted(done["removed"]) == sorted(dry["removed"])
    assert [n for n in os.listdir(loc / "ds=a") if not n.startswith("_")] == [
        n for n in os.listdir(loc / "ds=a") if n.startswith("base_")]
    assert _rows(metastore, table) == before


@pytest.mark.parametrize("read_lock", [True, False])
def test_a_read_in_flight_keeps_its_files_through_a_compaction_and_clean(metastore, tmp_path,
                                                                         read_lock):
    """The data source's own planning and task code (what Spark runs), with a compaction and a
    clean (Hive's Cleaner rule) between planning and the tasks: with readLock the clean waits for
    the read's lease and the read returns its rows; without it the clean removes files the read
    planned, and the read fails naming them (what readLock prevents)."""
    import pickle

    from spark_hive_acid.compaction.hms_clean import vacuum_metastore_table
    from spark_hive_acid.exceptions import StorageError
    from spark_hive_acid.spark.datasource import HiveAcidDataSource

    table, loc = _create(metastore, tmp_path)
    opts = {"metastoreUri": metastore.uri}
    for k in range(3):
        ids = list(range(k * 4, k * 4 + 4))
        write_table(pa.table({"id": pa.array(ids, pa.int32()), "name": [f"n{i}" for i in ids],
                              "ds": ["a"] * 4}), table=table, options=opts)
    _delete(metastore, table, [2])
    expected = sorted(i for i in range(12) if i != 2)
    open_before = set(metastore.our_open_txns())
    source = HiveAcidDataSource({"table": table, "metastoreUri": metastore.uri,
                                 "readLock": str(read_lock).lower()})
    reader = source.reader(source.schema())
    tasks = reader.partitions()  # planned: the snapshot and its files are fixed now
    reader = pickle.loads(pickle.dumps(reader))  # what Spark ships to the executors
    assert (reader.lease is not None) == read_lock
    ref = table_ref({"table": table, "metastoreuri": metastore.uri})
    compact(ref, "major")
    cleaned = vacuum_metastore_table(ref, 0, False)
    try:
        if read_lock:
            assert cleaned["removed"] == [] and len(cleaned["kept"]) == 4
            got = sorted(i for t in tasks for b in reader.read(t) for i in b.column("id").to_pylist())
            assert got == expected
            reader.lease.release()
            assert len(vacuum_metastore_table(ref, 0, False)["removed"]) == 4
        else:
            assert len(cleaned["removed"]) == 4
            with pytest.raises(StorageError, match="vanished"):
                [b for t in tasks for b in reader.read(t)]
    finally:
        assert set(metastore.our_open_txns()) == open_before
    assert sorted(read_table("", table=table, metastoreUri=metastore.uri).column("id").to_pylist()) \
        == expected


def _compact_and_die(uri: str, table: str) -> None:
    import signal

    def run(units, ctx):
        ctx.run(units[0])
        os.kill(os.getpid(), signal.SIGKILL)

    compact(table_ref({"table": table, "metastoreuri": uri}), "major", run_units=run)


def test_metastore_compaction_with_a_concurrent_delete_and_a_kill(metastore, tmp_path):
    """A DELETE that commits while the compaction writes (its row is being compacted) still
    applies after it; a compaction killed (SIGKILL) while it writes leaves the table as before,
    and the next one proceeds."""
    import multiprocessing as mp
    import signal

    from spark_hive_acid.compaction.runner import run_locally

    table, loc = _create(metastore, tmp_path)
    opts = {"metastoreUri": metastore.uri}
    for k in range(3):
        ids = list(range(k * 6, k * 6 + 6))
        write_table(pa.table({"id": pa.array(ids, pa.int32()), "name": [f"n{i}" for i in ids],
                              "ds": ["a" if i % 3 else "b" for i in ids]}), table=table, options=opts)
    before = _rows(metastore, table)
    open_before = set(metastore.our_open_txns())
    p = mp.get_context("fork").Process(target=_compact_and_die, args=(metastore.uri, table))
    p.start()
    p.join(120)
    assert p.exitcode == -signal.SIGKILL
    assert _rows(metastore, table) == before
    assert not any(n.startswith("base_") for d in ("ds=a", "ds=b") for n in os.listdir(loc / d))
    import time
    deadline = time.time() + 60
    while True:  # its transaction's keep-alive process aborts it once the compaction is dead
        dead = set(metastore.our_open_txns()) - open_before
        if not dead or time.time() > deadline:
            break
        time.sleep(0.5)
    assert dead == set()

    def during(units, ctx):
        _delete(metastore, table, [1, 13])
        return run_locally(units, ctx)

    m = compact(table_ref({"table": table, "metastoreuri": metastore.uri}), "major",
                run_units=during)
    assert m["partitions"] == ["ds=a", "ds=b"]
    expected = Counter({k: n for k, n in before.items() if k[1] not in (1, 13)})
    assert _rows(metastore, table) == expected


def test_two_compactions_of_a_metastore_table_one_wins(metastore, tmp_path):
    """A second compaction of the table while one runs fails at once with CommitConflictError
    (Hive's lock manager: both take an EXCLUSIVE claim beside the table) and leaves nothing;
    writers are not held up by either."""
    from spark_hive_acid.compaction.runner import run_locally
    from spark_hive_acid.exceptions import CommitConflictError

    table, loc = _create(metastore, tmp_path)
    opts = {"metastoreUri": metastore.uri}
    for k in range(2):
        write_table(pa.table({"id": pa.array([k * 2, k * 2 + 1], pa.int32()), "name": ["x", "y"],
                              "ds": ["a", "a"]}), table=table, options=opts)
    before = _rows(metastore, table)
    ref = table_ref({"table": table, "metastoreuri": metastore.uri})
    seen = {}

    def racing(units, ctx):
        dirs = sorted(os.listdir(loc / "ds=a"))
        with pytest.raises(CommitConflictError, match="Another compaction"):
            compact(ref, "minor")
        assert sorted(os.listdir(loc / "ds=a")) == dirs  # the loser left nothing
        _delete(metastore, table, [0])  # a DELETE is not held up (SHARED_WRITE vs SHARED_READ)
        seen["deleted"] = True
        return run_locally(units, ctx)

    m = compact(ref, "major", run_units=racing)
    assert seen and m["partitions"] == ["ds=a"]
    assert _rows(metastore, table) == Counter({k: n for k, n in before.items() if k[1] != 0})
    with metastore.client() as c:
        assert [lk for lk in c.show_locks("default") if "hiveacid_compaction" in (lk.table or "")] == []
