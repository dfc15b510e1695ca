"""The path-mode transaction log: allocation, snapshots, commit order, conflicts, stale writers."""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import time

import pytest

from spark_hive_acid.exceptions import CommitConflictError, TransactionLogDamagedError
from spark_hive_acid.txn import pathlog as txnlog
from spark_hive_acid.io.filesystem import LocalFileSystem


def test_no_log_means_everything_committed(tmp_path, fs):
    assert txnlog.read_snapshot(fs, str(tmp_path)) is None
    assert txnlog.history(fs, str(tmp_path)) == []


def test_open_committed_aborted_in_snapshot(tmp_path, fs):
    t = str(tmp_path)
    a = txnlog.begin(fs, t, "append")
    b = txnlog.begin(fs, t, "append")
    c = txnlog.begin(fs, t, "append")
    assert (a.write_id, b.write_id, c.write_id) == (1, 2, 3)
    assert a.snapshot is None and b.snapshot.is_open(1)
    txnlog.commit(fs, b)
    txnlog.abort(fs, t, c.write_id, "test")
    snap = txnlog.read_snapshot(fs, t)
    assert snap.high_watermark == 3
    assert not snap.is_valid(1) and snap.is_open(1)  # open: invisible
    assert snap.is_valid(2)
    assert snap.is_aborted(3) and not snap.is_valid(3)
    assert snap.min_open == 1
    txnlog.commit(fs, a)
    snap = txnlog.read_snapshot(fs, t)
    assert snap.is_valid(1) and snap.is_valid(2) and not snap.is_valid(3)
    assert [(h["writeId"], h["state"]) for h in txnlog.history(fs, t)] == \
        [(3, "aborted"), (2, "committed"), (1, "committed")]
    assert txnlog.PathTransaction(t, 4, "x", snap, 0).snapshot_string == snap.to_string()


def test_first_write_id_follows_hive_dirs(tmp_path, fs):
    (tmp_path / "p=1" / "delta_0000005_0000005_0000").mkdir(parents=True)
    (tmp_path / "p=2" / "base_0000009").mkdir(parents=True)
    txn = txnlog.begin(fs, str(tmp_path), "append")
    assert txn.write_id == 10
    snap = txnlog.read_snapshot(fs, str(tmp_path))
    assert snap.is_valid(9) and snap.is_valid(5) and not snap.is_valid(10)


def test_commit_is_idempotent_and_abort_after_commit_is_refused(tmp_path, fs):
    t = str(tmp_path)
    txn = txnlog.begin(fs, t, "append")
    seq = txnlog.commit(fs, txn)
    assert txnlog.commit(fs, txn) == seq
    txnlog.abort(fs, t, txn.write_id)  # logged and ignored
    assert txnlog.read_snapshot(fs, t).is_valid(txn.write_id)


def test_dml_conflict_first_committer_wins(tmp_path, fs):
    t = str(tmp_path)
    a = txnlog.begin(fs, t, "delete")
    b = txnlog.begin(fs, t, "update")
    other = txnlog.begin(fs, t, "delete")
    app = txnlog.begin(fs, t, "append")
    txnlog.commit(fs, b, dml_partitions=["p=1", "p=2"])
    txnlog.commit(fs, other, dml_partitions=["p=3"])  # other partition: no conflict
    txnlog.commit(fs, app, partitions=["p=1"])  # appends never conflict
    with pytest.raises(CommitConflictError, match="p=1"):
        txnlog.commit(fs, a, dml_partitions=["p=1"])
    snap = txnlog.read_snapshot(fs, t)
    assert snap.is_aborted(a.write_id) and snap.is_valid(b.write_id)


def test_dml_after_seen_commit_does_not_conflict(tmp_path, fs):
    t = str(tmp_path)
    first = txnlog.begin(fs, t, "delete")
    txnlog.commit(fs, first, dml_partitions=[""])
    second = txnlog.begin(fs, t, "delete")  # its snapshot contains the first
    txnlog.commit(fs, second, dml_partitions=[""])
    assert txnlog.read_snapshot(fs, t).is_valid(second.write_id)


def test_stale_writer_is_aborted_and_cleaned(tmp_path, fs):
    t = str(tmp_path)
    txn = txnlog.begin(fs, t, "append", timeout_s=0.05)
    published = tmp_path / "p=1" / "delta_0000001_0000001_0000"
    published.mkdir(parents=True)
    (published / "bucket_00000").write_bytes(b"x")
    txnlog.record_intent(fs, t, txn.write_id, [str(published)])
    staged = tmp_path / txnlog.STAGING_DIR / f"{txn.write_id:019d}" / "task"
    staged.mkdir(parents=True)
    time.sleep(0.1)
    # the next writer aborts it
    nxt = txnlog.begin(fs, t, "append")
    assert nxt.write_id == 2
    snap = txnlog.read_snapshot(fs, t)
    assert snap.is_aborted(1)
    assert not published.exists() and not staged.exists()
    # a late commit of the killed writer is refused
    with pytest.raises(CommitConflictError, match="aborted"):
        txnlog.commit(fs, txn)


def test_heartbeat_keeps_writer_alive(tmp_path, fs):
    t = str(tmp_path)
    txn = txnlog.begin(fs, t, "append", timeout_s=0.5)
    time.sleep(0.3)
    txnlog.heartbeat(fs, t, txn.write_id)
    assert txnlog.abort_stale(fs, t, now=time.time() + 0.3) == []
    assert txnlog.abort_stale(fs, t, now=time.time() + 1.0) == [1]


def test_unreadable_last_event_is_an_error_not_a_guess(tmp_path, fs):
    """An empty newest event (a writer died writing it, or the file was damaged) is never voided
    nor read as "open": readers and the next committer stop, naming the file (issue 13 item 2;
    this test used to assert that the event was voided after a while)."""
    t = str(tmp_path)
    a = txnlog.begin(fs, t, "append")
    txnlog.commit(fs, a)
    b = txnlog.begin(fs, t, "append")
    damaged = tmp_path / txnlog.LOG_DIR / "events" / f"{2:019d}.json"
    damaged.write_bytes(b"")
    with pytest.raises(TransactionLogDamagedError, match=str(damaged)):
        txnlog.read_snapshot(fs, t)
    with pytest.raises(TransactionLogDamagedError, match="repair"):
        txnlog.commit(fs, b)
    assert damaged.read_bytes() == b""  # nobody wrote over it or after it
    assert not (tmp_path / txnlog.LOG_DIR / "events" / f"{3:019d}.json").exists()


def _allocate_and_commit(table: str, n: int, queue) -> None:
    fs = LocalFileSystem()
    ids = []
    for _ in range(n):
        txn = txnlog.begin(fs, table, "append")
        txnlog.commit(fs, txn, partitions=[""])
        ids.append(txn.write_id)
    queue.put(ids)


def test_concurrent_processes_get_distinct_ids_and_all_commit(tmp_path):
    table = str(tmp_path)
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    procs = [ctx.Process(target=_allocate_and_commit, args=(table, 8, q)) for _ in range(4)]
    for p in procs:
        p.start()
    ids = [i for _ in procs for i in q.get(timeout=120)]
    for p in procs:
        p.join(60)
    assert sorted(ids) == list(range(1, 33))
    fs = LocalFileSystem()
    snap = txnlog.read_snapshot(fs, table)
    assert snap.high_watermark == 32 and not snap.exceptions
    events = txnlog.read_events(fs, table)
    assert [e.seq for e in events] == list(range(1, 33))
    assert sorted(e.write_id for e in events) == list(range(1, 33))


def test_log_files_are_json(tmp_path, fs):
    txn = txnlog.begin(fs, str(tmp_path), "append")
    txnlog.commit(fs, txn, partitions=["p=1"], metrics={"numInsertedRows": 3})
    ev = json.loads((tmp_path / txnlog.LOG_DIR / "events" / f"{1:019d}.json").read_text())
    assert ev["state"] == "committed" and ev["partitions"] == ["p=1"]
    assert ev["cumulative"] == {"terminated": [[1, 1]], "aborted": []}
    assert os.path.basename(txnlog.staging_dir(fs, str(tmp_path), 1)).isdigit()


def test_allocation_record_being_written_is_not_stale(tmp_path, fs, monkeypatch):
    t = str(tmp_path)
    txnlog.begin(fs, t, "append")
    rec = tmp_path / txnlog.LOG_DIR / "writeids" / f"{2:019d}.json"
    rec.write_bytes(b"")  # allocated, content not yet written
    import threading
    threading.Timer(0.01, lambda: rec.write_text('{"startedAt": %f}' % time.time())).start()
    monkeypatch.setattr(txnlog, "UNREADABLE_RECORD_GRACE_S", 2.0)
    assert txnlog.abort_stale(fs, t) == []
    rec.write_bytes(b"")  # and one whose writer died before writing it
    monkeypatch.setattr(txnlog, "UNREADABLE_RECORD_GRACE_S", 0.05)
    assert txnlog.abort_stale(fs, t) == [2]
