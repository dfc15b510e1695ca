"""Snapshots, write transactions, locks and heartbeats against a real Hive Metastore (2.3.10,
3.1.3, 4.1.0; what differs per version is spelled out where it matters).

Every test checks that it leaves no open transaction and no lock behind (except the SIGKILL test,
which shows what an abandoned transaction looks like and then aborts it as an administrator).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from metastore_server.fixtures import metastore  # noqa: F401  (session fixture)
from spark_hive_acid.acid.snapshot import ValidIdList
from spark_hive_acid.exceptions import CommitConflictError
from spark_hive_acid.metastore import (
    LockSpec,
    LockTimeoutError,
    TransactionAbortedError,
    WriteConflictError,
    open_table_snapshot,
    write_transaction,
)

COLS = [("id", "int"), ("name", "string")]
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def hms(metastore):  # noqa: F811
    with metastore.client() as client:
        yield client


@pytest.fixture
def table(hms):
    name = f"t_{uuid.uuid4().hex[:10]}"
    hms.create_table("default", name, COLS, bucket_cols=["id"], num_buckets=2)
    return name


def _opts(metastore, **extra):  # noqa: F811
    return metastore.options(**{k: str(v) for k, v in extra.items()})


def _write_lock(metastore):  # noqa: F811
    """UPDATE/DELETE's lock: SHARED_WRITE (Hive 2/3), EXCL_WRITE (Hive 4, hive.txn.xlock.write)."""
    return "EXCL_WRITE" if metastore.major >= 4 else "SHARED_WRITE"


def _locks(hms, table):
    return hms.show_locks("default", table)


def _assert_clean(hms, table, *txn_ids):
    """No lock on the table; none of the transactions is still open."""
    assert _locks(hms, table) == []
    info = hms.get_open_txns_info()
    still_open = [t for t in txn_ids if t is not None and t in info.open_ids]
    assert still_open == [], f"transactions left open: {still_open}"


def _wait_for(predicate, timeout=20.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


# -- snapshots ------------------------------------------------------------------------------------


def test_snapshot_with_open_and_aborted_txns(hms, metastore, table):  # noqa: F811
    def writer():  # a txn that writes the table: (txn id, write id)
        t = hms.open_txn()
        w = hms.allocate_write_id(t, "default", table)
        # its lock records the write (TXN_COMPONENTS): else Hive 3.1's Initiator forgets the
        # txn once it is aborted, and its write id then counts as committed
        hms.lock([LockSpec("SHARED_READ", "INSERT", "default", table)], t)
        return t, w

    a, wa = writer()  # stays open
    b, wb = writer()
    hms.abort_txn(b)  # aborted
    c, wc = writer()
    hms.commit_txn(c)  # committed: the new high watermark
    try:
        for _ in range(5):  # Hive's own compactor (3.1 / 4.1) may open or end a txn meanwhile
            info = hms.get_open_txns_info()
            write_ids, txns = hms.read_snapshot("default", table)
            if hms.get_open_txns_info() == info and info.high_watermark == c:
                break
        open_ids, aborted = info.open_ids, info.aborted_ids
        assert a in open_ids and b in aborted
        assert txns == ValidIdList.of(c, open_ids, aborted)
        # written out by hand: HWM:minOpen:open,...:aborted,...
        expected = (f"{c}:{min(open_ids)}:{','.join(map(str, sorted(open_ids)))}:"
                    f"{','.join(map(str, sorted(aborted)))}")
        assert txns.to_string() == expected
        if metastore.major == 2:  # the transaction id is the write id: the txn list, renamed
            assert (wa, wb, wc) == (a, b, c)
            assert write_ids.to_string() == f"default.{table}:{expected}"
        else:  # the table's own write ids 1, 2, 3 (Hive's TableValidWriteIds, abortedBits)
            assert (wa, wb, wc) == (1, 2, 3)
            assert write_ids.to_string() == f"default.{table}:3:1:1:2"
        assert write_ids.is_valid(wc) and write_ids.is_aborted(wb) and write_ids.is_open(wa)
        assert not write_ids.is_valid(wc + 1)

        # the data source entry point gives the same answer
        info, w2, t2 = open_table_snapshot(_opts(metastore, table=f"default.{table}"))
        assert info.name == table and (w2, t2) == (write_ids, txns)

        # from inside a later transaction d: d sees itself, not e (opened after it)
        (d, wd), (e, we) = writer(), writer()
        w_in, t_in = hms.read_snapshot("default", table, current_txn=d)
        now = hms.get_open_txns_info()  # Hive's compactor (3.1 / 4.1) may have ended some
        assert t_in == ValidIdList.of(d, [t for t in now.open_ids if t < d],
                                      [t for t in now.aborted_ids if t < d])
        assert a in t_in.exceptions and b in t_in.aborted
        assert w_in.is_valid(wd) and not w_in.is_valid(we) and w_in.is_open(wa)
        hms.abort_txns([d, e])
    finally:
        hms.abort_txn(a)
    _assert_clean(hms, table, a)


# -- write transactions ---------------------------------------------------------------------------


def test_commit_takes_and_releases_the_lock(hms, metastore, table):  # noqa: F811
    with write_transaction(_opts(metastore), "default", table, "insert") as txn:
        assert txn.state == "open"
        # Hive 2: the txn id is the write id; Hive 3+: the table's first write id
        assert txn.write_id == (txn.txn_id if metastore.major == 2 else 1)
        (lock,) = _locks(hms, table)
        assert (lock.lock_id, lock.txn_id, lock.type, lock.state) == (
            txn.lock_id, txn.txn_id, "SHARED_READ", "ACQUIRED")
        assert hms.get_open_txns_info().get(txn.txn_id).is_open
        handle = txn.handle()
        assert (handle.txn_id, handle.write_id, handle.table) == (txn.txn_id, txn.write_id, table)
    assert txn.state == "committed" and not txn.client.is_open
    _assert_clean(hms, table, txn.txn_id)
    assert hms.get_open_txns_info().get(txn.txn_id) is None  # committed txns leave TXNS
    write_ids, _ = hms.read_snapshot("default", table)
    assert write_ids.is_valid(txn.write_id)


def test_explicit_abort_and_exception_abort(hms, metastore, table):  # noqa: F811
    txn = write_transaction(_opts(metastore), "default", table, "insert").begin()
    txn.abort()
    txn.abort()  # idempotent
    assert txn.state == "aborted"
    with pytest.raises(RuntimeError, match="boom"):
        with write_transaction(_opts(metastore), "default", table, "delete") as txn2:
            assert _locks(hms, table)[0].type == _write_lock(metastore)
            raise RuntimeError("boom")
    assert txn2.state == "aborted"
    _assert_clean(hms, table, txn.txn_id, txn2.txn_id)
    write_ids, _ = hms.read_snapshot("default", table)
    assert not write_ids.is_valid(txn.write_id) and not write_ids.is_valid(txn2.write_id)
    if metastore.major < 4:  # Hive 4 lists an aborted write id only once a later one commits:
        # until then it is above the table's high watermark (invalid all the same)
        assert write_ids.is_aborted(txn.write_id) and write_ids.is_aborted(txn2.write_id)


def test_heartbeats_reach_the_metastore(hms, metastore, table):  # noqa: F811
    with write_transaction(_opts(metastore, heartbeatInterval=0.2), "default", table,
                           "update") as txn:
        started = hms.get_open_txns_info().get(txn.txn_id).started_ms
        _wait_for(lambda: txn.heartbeats_sent >= 2, what="two heartbeats")
        (lock,) = _locks(hms, table)
        assert lock.last_heartbeat_ms > 0  # the lock was heartbeated too
        assert hms.get_open_txns_info().get(txn.txn_id).last_heartbeat_ms > started
    _assert_clean(hms, table, txn.txn_id)
    # default interval: a third of the server's hive.txn.timeout (300 s on the test server)
    with write_transaction(_opts(metastore), "default", table, "insert") as txn2:
        assert txn2.heartbeat_interval == pytest.approx(100.0)
    _assert_clean(hms, table, txn2.txn_id)


def test_a_txn_aborted_behind_our_back_cannot_commit(hms, metastore, table):  # noqa: F811
    txn = write_transaction(_opts(metastore, heartbeatInterval=0.1), "default", table,
                            "insert").begin()
    hms.abort_txn(txn.txn_id)  # e.g. an administrator, or the timeout reaper
    _wait_for(lambda: txn.heartbeat_error is not None, what="the heartbeat to notice")
    with pytest.raises(TransactionAbortedError, match=str(txn.txn_id)):
        txn.commit()
    assert txn.state == "aborted"
    _assert_clean(hms, table, txn.txn_id)


def test_detach_and_resume_in_another_connection(hms, metastore, table):  # noqa: F811
    """A Spark write hands its txn from the planning worker to commit(): detach, then resume."""
    from spark_hive_acid.txn.hms import HmsTransaction as Transaction

    txn = write_transaction(_opts(metastore), "default", table, "insert").begin()
    handle = txn.detach()
    assert txn.state == "detached" and not txn.client.is_open
    assert handle.lock_id == txn.lock_id and hms.get_open_txns_info().get(txn.txn_id).is_open
    (lock,) = _locks(hms, table)  # detaching keeps the lock
    resumed = Transaction.resume(metastore.client(), handle, heartbeat_interval=0.2)
    assert (resumed.txn_id, resumed.write_id, resumed.lock_id) == (txn.txn_id, txn.write_id, lock.lock_id)
    _wait_for(lambda: resumed.heartbeats_sent >= 1, what="a heartbeat of the resumed txn")
    resumed.commit()
    _assert_clean(hms, table, txn.txn_id)
    assert hms.read_snapshot("default", table)[0].is_valid(txn.write_id)

    gone = write_transaction(_opts(metastore), "default", table, "insert").begin()
    handle = gone.detach()
    hms.abort_txn(handle.txn_id)  # e.g. timed out while nobody heartbeated it
    with pytest.raises(TransactionAbortedError, match=f"{handle.txn_id}.*run the job again"):
        Transaction.resume(metastore.client(), handle)
    _assert_clean(hms, table, handle.txn_id)


def test_concurrent_writers_get_different_write_ids(hms, metastore, table):  # noqa: F811
    results, errors = [], []

    def insert():
        try:
            with write_transaction(_opts(metastore), "default", table, "insert") as t:
                results.append(t.write_id)
                time.sleep(0.2)  # overlap with the others: SHARED_READ locks don't conflict
        except Exception as e:  # noqa: BLE001
            errors.append(e)
    threads = [threading.Thread(target=insert) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert errors == [] and len(results) == 4 and len(set(results)) == 4
    _assert_clean(hms, table, *results)
    write_ids, _ = hms.read_snapshot("default", table)
    assert all(write_ids.is_valid(w) for w in results)


# -- locks ----------------------------------------------------------------------------------------


def test_exclusive_lock_blocks_writers_until_commit(hms, metastore, table):  # noqa: F811
    owner = write_transaction(_opts(metastore), "default", table, "insert_overwrite").begin()
    assert [(l.type, l.state) for l in _locks(hms, table)] == [("EXCLUSIVE", "ACQUIRED")]

    # a second writer times out with a clear error naming the blocker; it leaves nothing behind
    blocked = write_transaction(_opts(metastore, lockWaitTimeout=0.5), "default", table, "insert")
    with pytest.raises(LockTimeoutError) as ei:
        blocked.begin()
    msg = str(ei.value)
    assert f"default.{table}" in msg and f"txn {owner.txn_id}" in msg and "EXCLUSIVE" in msg
    assert blocked.state == "aborted"
    assert [l.txn_id for l in _locks(hms, table)] == [owner.txn_id]

    # a patient writer waits (its lock shows WAITING) and goes ahead once the owner commits
    waiter = write_transaction(_opts(metastore, lockWaitTimeout=60), "default", table, "insert")
    th = threading.Thread(target=waiter.begin)
    th.start()
    _wait_for(lambda: any(l.state == "WAITING" for l in _locks(hms, table)),
              what="a WAITING lock")
    owner.commit()
    th.join(60)
    assert waiter.state == "open"
    assert [(l.txn_id, l.state) for l in _locks(hms, table)] == [(waiter.txn_id, "ACQUIRED")]
    waiter.commit()
    _assert_clean(hms, table, owner.txn_id, blocked.txn_id, waiter.txn_id)


def test_shared_lock_blocks_exclusive(hms, metastore, table):  # noqa: F811
    reader = write_transaction(_opts(metastore), "default", table, "read").begin()
    assert [(l.type, l.state) for l in _locks(hms, table)] == [("SHARED_READ", "ACQUIRED")]
    with write_transaction(_opts(metastore), "default", table, "insert") as inserter:
        assert len(_locks(hms, table)) == 2  # shared + shared: both acquired
    with write_transaction(_opts(metastore, lockWaitTimeout=5), "default", table,
                           "delete") as deleter:  # SHARED_READ + SHARED/EXCL_WRITE coexist
        assert {l.state for l in _locks(hms, table)} == {"ACQUIRED"}
    with pytest.raises(LockTimeoutError, match=f"txn {reader.txn_id}"):
        write_transaction(_opts(metastore, lockWaitTimeout=0.3), "default", table,
                          "insert_overwrite").begin()
    reader.commit()
    _assert_clean(hms, table, reader.txn_id, inserter.txn_id, deleter.txn_id)


def test_concurrent_updates_conflict_at_commit(hms, metastore, table):  # noqa: F811
    first = write_transaction(_opts(metastore), "default", table, "update").begin()
    second = write_transaction(_opts(metastore, lockWaitTimeout=60), "default", table, "update")
    th = threading.Thread(target=second.begin)
    th.start()  # SHARED_WRITE vs SHARED_WRITE (Hive 4: EXCL_WRITE): waits for the first
    _wait_for(lambda: any(l.state == "WAITING" for l in _locks(hms, table)),
              what="the second update to wait")
    first.commit()
    th.join(60)
    assert second.state == "open"
    with pytest.raises(WriteConflictError) as ei:
        second.commit()  # it started before the first committed: Hive's write-set check
    assert isinstance(ei.value, CommitConflictError) and "write conflict" in str(ei.value)
    assert second.state == "aborted"
    _assert_clean(hms, table, first.txn_id, second.txn_id)


def test_dynamic_and_static_partition_writes(hms, metastore):  # noqa: F811
    name = f"p_{uuid.uuid4().hex[:10]}"
    hms.create_table("default", name, COLS, [("ds", "string")], ["id"], 2)
    with write_transaction(_opts(metastore), "default", name, "insert") as txn:
        assert txn.dynamic_partition_write
        (lock,) = _locks(hms, name)
        assert lock.partition is None  # table-level lock for a dynamic partition write
        added = txn.add_partitions([{"ds": "a"}, {"ds": "b"}])
        assert [p.name for p in added] == ["ds=a", "ds=b"] and txn.partitions_written == [
            "ds=a", "ds=b"]
    assert sorted(p.name for p in hms.list_partitions("default", name)) == ["ds=a", "ds=b"]
    with write_transaction(_opts(metastore), "default", name, "update",
                           partitions=[{"ds": "a"}]) as txn2:
        (lock,) = _locks(hms, name)
        assert (lock.partition, lock.type) == ("ds=a", _write_lock(metastore))
        assert not txn2.dynamic_partition_write
    _assert_clean(hms, name, txn.txn_id, txn2.txn_id)


# -- a writer process that dies ------------------------------------------------------------------

_CHILD = """
import sys, time
from spark_hive_acid.metastore import write_transaction
txn = write_transaction({"metastoreUri": sys.argv[1], "heartbeatInterval": "0.2"},
                        "default", sys.argv[2], "insert").begin()
print(txn.txn_id, flush=True)
time.sleep(300)
"""


def test_killed_writer_leaves_an_open_txn_until_aborted(hms, metastore, table):  # noqa: F811
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get(
        "PYTHONPATH", "")]))
    child = subprocess.Popen([sys.executable, "-c", _CHILD, metastore.uri, table],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = child.stdout.readline()
        assert line.strip().isdigit(), f"child failed: {child.stderr.read() if not line else line}"
        txn_id = int(line)

        def last_beat():
            return hms.get_open_txns_info().get(txn_id).last_heartbeat_ms
        first = last_beat()
        _wait_for(lambda: last_beat() > first, what="the child's heartbeat")  # it is alive
    finally:
        os.kill(child.pid, signal.SIGKILL)  # no chance to abort
        child.wait(30)
        child.stdout.close()
        child.stderr.close()

    beat = last_beat()
    time.sleep(1.0)  # five heartbeat intervals
    status = hms.get_open_txns_info().get(txn_id)
    assert status.is_open and status.last_heartbeat_ms == beat  # heartbeats stopped
    assert [(l.txn_id, l.state) for l in _locks(hms, table)] == [(txn_id, "ACQUIRED")]
    # Hive would abort it after hive.txn.timeout only if the metastore runs the house keeper
    # (hive.compactor.initiator.on=true); this one does not, so an administrator must:
    hms.abort_txns([txn_id])
    assert hms.get_open_txns_info().get(txn_id).is_aborted
    _assert_clean(hms, table, txn_id)
