"""Hive's own compactor (Worker, Cleaner) at work on tables this library writes, in the real Hive
3.1.3 / 4.1.0 metastores (metastore_server: Initiator, one Worker, Cleaner and house keeping on;
3.1 compacts with MapReduce, 4.1 with queries, both in the metastore's JVM).

* A compaction requested through the metastore (``request_compaction``) is run by Hive's
  Worker; we read the result at every snapshot while a read lease holds Hive's Cleaner back:
  after a minor compaction every snapshot reads its rows; after a major one the snapshots from
  the base on do and older ones fail with NotEnoughHistoryError, as Hive's own getAcidState
  does (a compacted base "erases all history"), never with wrong rows; ROW__IDs are kept. After
  Hive's Cleaner removed what the compaction made obsolete, the same holds.
* Hive's Cleaner waits for a read planned with ``readLock`` (Hive 3: its lock is older than the
  compaction; Hive 4: its transaction is): the read survives a compaction + clean made by Hive's
  own threads; without the option the clean removes files the read planned and it fails with
  "vanished" (the data source's own planning and task code, pickled as Spark ships it).
"""
from __future__ import annotations

import os
import pickle
import re
import time
import uuid

import pytest

from hms_rows import append, delete_ids, rows_with_ids
from metastore_server.fixtures import hive_compactor_metastore  # noqa: F401
from spark_hive_acid.exceptions import NotEnoughHistoryError, StorageError
from spark_hive_acid.direct import read_table
from spark_hive_acid.txn.hms_read import ReadLease

MAX = 9223372036854775807
#: states of a compaction whose output Hive's Worker has committed
COMPACTED = {"ready for cleaning", "succeeded"}


def _table(ms, tmp_path):
    name = f"hc_{uuid.uuid4().hex[:8]}"
    with ms.client() as c:
        c.create_table("default", name, [("id", "int"), ("name", "string")],
                       bucket_cols=["id"], num_buckets=2, location=f"file:{tmp_path / name}",
                       properties={"no_auto_compaction": "true"})  # only what we request
    return f"default.{name}", tmp_path / name


def _wait(ms, table, cid, states, timeout=240.0):
    deadline = time.monotonic() + timeout
    while True:
        with ms.client() as c:
            mine = [x for x in c.compactions(*table.split(".")) if x.id == cid]
        if mine and mine[0].state in states:
            return mine[0].state
        assert time.monotonic() < deadline, f"compaction {cid} still {mine[0].state if mine else '?'}"
        assert not mine or mine[0].state not in ("failed", "refused", "did not initiate"), (
            f"Hive's compaction {cid} ended {mine[0].state}; see {ms.server.hive_log_path}")
        time.sleep(0.5)


def _ids(ms, table, w=None):
    opts = {"validWriteIds": f"{table}:{w}:{MAX}::"} if w is not None else {}
    return sorted(read_table("", table=table, metastoreUri=ms.uri, **opts)
                  .column("id").to_pylist())


def _dirs(loc):
    return sorted(n for n in os.listdir(loc) if not n.startswith(("_", ".")))


def test_hive_compacts_what_we_wrote_and_every_snapshot_reads_right(
        hive_compactor_metastore, tmp_path):  # noqa: F811
    ms = hive_compactor_metastore
    table, loc = _table(ms, tmp_path)
    model, ids = {}, set()
    for step in (range(0, 10), range(10, 20), [3, 15], range(20, 25), [21, 4]):
        if isinstance(step, range):
            w = append(ms.uri, table, list(step))["writeId"]
            ids |= set(step)
        else:
            w = delete_ids(ms.uri, table, step)
            ids -= set(step)
        model[w] = sorted(ids)
    assert {w: _ids(ms, table, w) for w in model} == model
    before = rows_with_ids(ms.uri, table)
    with ms.client() as c:
        minor = c.request_compaction(*table.split("."), kind="minor")
    _compacted_then_cleaned(ms, table, loc, minor.id, lambda: (
        # Hive's minor compaction: delta_a_b (Hive 4: delta_a_b_vT, its visibility txn)
        any(re.fullmatch(r"delta_\d+_\d+(_v\d+)?", n) for n in _dirs(loc)),
        {w: _ids(ms, table, w) for w in model} == model,  # every snapshot
        rows_with_ids(ms.uri, table) == before))  # ROW__IDs kept
    # cleaned: only the compacted deltas are left, and still every snapshot reads its rows
    assert all(re.fullmatch(r"(delete_)?delta_\d+_\d+(_v\d+)?", n) for n in _dirs(loc))
    assert {w: _ids(ms, table, w) for w in model} == model

    with ms.client() as c:  # (Hive 4 refuses it while the minor one waits for its Cleaner)
        major = c.request_compaction(*table.split("."), kind="major")
    assert major.accepted

    def after_major():
        (base,) = [n for n in _dirs(loc) if n.startswith("base_")]  # Hive 4: base_N_vT
        _snapshots_after_a_base(ms, table, model, int(base.split("_")[1]))
        return rows_with_ids(ms.uri, table) == before, any(n.startswith("delta_") for n in _dirs(loc))

    _compacted_then_cleaned(ms, table, loc, major.id, after_major)
    assert [n for n in _dirs(loc) if not n.startswith("base_")] == []
    assert after_major()[0]


def _compacted_then_cleaned(ms, table, loc, cid, checks):
    """Hold a read lease (Hive's Cleaner waits for it), wait for Hive's Worker to commit
    compaction ``cid``, assert ``checks()`` (all true), release, wait for the Cleaner."""
    lease = ReadLease.open({"table": table, "metastoreuri": ms.uri})
    try:
        assert _wait(ms, table, cid, COMPACTED) in COMPACTED
        assert all(checks())
        lease.beat()
    finally:
        lease.release()
    assert _wait(ms, table, cid, {"succeeded"}) == "succeeded"  # the Cleaner ran


def _snapshots_after_a_base(ms, table, model, h):
    """Snapshots from the base on read its rows; older ones fail as Hive's getAcidState does
    (a compacted base "erases all history"), never with wrong rows."""
    for w, want in model.items():
        if w >= h:
            assert _ids(ms, table, w) == want
        else:
            with pytest.raises(NotEnoughHistoryError, match="ACID_NOT_ENOUGH_HISTORY"):
                _ids(ms, table, w)


@pytest.mark.parametrize("read_lock", [True, False])
def test_hive_cleaner_waits_for_a_read_holding_read_lock(hive_compactor_metastore, tmp_path,
                                                         read_lock):  # noqa: F811
    from spark_hive_acid.spark.datasource import HiveAcidDataSource

    ms = hive_compactor_metastore
    table, loc = _table(ms, tmp_path)
    for k in range(3):
        append(ms.uri, table, list(range(k * 4, k * 4 + 4)))
    delete_ids(ms.uri, table, [2])
    expected = sorted(i for i in range(12) if i != 2)
    source = HiveAcidDataSource({"table": table, "metastoreUri": ms.uri,
                                 "readLock": str(read_lock).lower()})
    reader = source.reader(source.schema())
    tasks = reader.partitions()  # planned: the snapshot and its files are fixed now
    reader = pickle.loads(pickle.dumps(reader))  # what Spark ships to the executors
    assert (reader.lease is not None) == read_lock
    planned = _dirs(loc)
    with ms.client() as c:
        req = c.request_compaction(*table.split("."), kind="major")
    try:
        if read_lock:
            assert _wait(ms, table, req.id, COMPACTED) in COMPACTED
            time.sleep(5)  # five rounds of Hive's Cleaner (hive.compactor.cleaner.run.interval)
            reader.lease.beat()
            with ms.client() as c:
                state = [x.state for x in c.compactions(*table.split(".")) if x.id == req.id]
            assert state == ["ready for cleaning"]  # the Cleaner waits for the read
            assert set(planned) <= set(_dirs(loc))
            got = sorted(i for t in tasks for b in reader.read(t) for i in b.column("id").to_pylist())
            assert got == expected
            reader.lease.release()
            assert _wait(ms, table, req.id, {"succeeded"}) == "succeeded"
            assert not set(planned) & set(_dirs(loc))  # now it cleaned
        else:
            assert _wait(ms, table, req.id, {"succeeded"}) == "succeeded"
            assert not set(planned) & set(_dirs(loc))
            with pytest.raises(StorageError, match="vanished"):
                [b for t in tasks for b in reader.read(t)]
    finally:
        if reader.lease is not None:
            reader.lease.release()
    assert _ids(ms, table) == expected
    if reader.lease is not None:
        assert reader.lease.txn_id not in ms.our_open_txns()  # released


def test_hive_reads_what_our_compaction_wrote(hive_compactor_metastore, tmp_path):  # noqa: F811
    """Our compaction's output (base_H / delta_a_b, no _vT visibility suffix, the
    _metadata_acid marker) read by Hive's own engine, then compacted again by Hive's Worker."""
    from metastore_server.hive_sql import rows, run_sql
    from spark_hive_acid.catalog import table_ref
    from spark_hive_acid.compaction.runner import compact

    ms = hive_compactor_metastore
    table, loc = _table(ms, tmp_path)
    for k in range(3):
        append(ms.uri, table, list(range(k * 4, k * 4 + 4)))
    delete_ids(ms.uri, table, [2, 9])
    ref = table_ref({"table": table, "metastoreuri": ms.uri})
    compact(ref, "minor")
    append(ms.uri, table, [20, 21])
    compact(ref, "major")
    expected = sorted(set(range(12)) - {2, 9} | {20, 21})
    assert _ids(ms, table) == expected
    assert [n for n in _dirs(loc) if n.startswith("base_")]  # ours: base_H, no _vT
    # a plain SELECT is a fetch task (no MapReduce job): Hive 3.1 runs it on Java 17 too
    got = run_sql(ms.version, ms.uri, tmp_path / "hive", [f"select id from {table}"])
    assert sorted(int(r) for r in rows(got[0])) == expected
    with ms.client() as c:
        req = c.request_compaction(*table.split("."), kind="major")
    append(ms.uri, table, [30])  # Hive's Worker compacts over our base
    assert _wait(ms, table, req.id, {"succeeded"}) == "succeeded"
    assert _ids(ms, table) == expected + [30]
