"""Checkpoints of the path-mode log (txn.logmaint.checkpoint_log): the number of files stays
bounded, every record's content stays readable (history, read_events, snapshots, conflict checks),
and a kill -9 at any point of a checkpoint loses nothing."""
from __future__ import annotations

import multiprocessing as mp
import os
import random
import signal

import pytest

from compaction_ops import ModelTable
from spark_hive_acid.acid import logstate
from spark_hive_acid.exceptions import CommitConflictError
from spark_hive_acid.txn import logmaint, pathlog


def _history_table(tmp_path, steps=14) -> ModelTable:
    t = ModelTable(str(tmp_path / "t"), random.Random(9))
    t.append()
    for i in range(steps):
        [t.append, t.delete, t.update][i % 3]()
    pathlog.abort(t.fs, t.path, pathlog.begin(t.fs, t.path, "append").write_id, "test abort")
    t.compact("minor")
    return t


def _log_view(t: ModelTable):
    return (pathlog.history(t.fs, t.path), [e.folded() for e in logstate.read_events(t.fs, t.path)],
            logstate.read_snapshot(t.fs, t.path))


def _files(t: ModelTable, kind: str) -> list[str]:
    return os.listdir(os.path.join(t.path, "_hiveacid_txnlog", kind))


def test_checkpoint_keeps_every_record_and_bounds_the_files(tmp_path):
    t = _history_table(tmp_path)
    before = _log_view(t)
    assert len(_files(t, "events")) == len(before[1]) > 15
    seq = logmaint.checkpoint_log(t.fs, t.path)
    assert seq == len(before[1]) - 1
    assert _log_view(t) == before
    assert len(_files(t, "events")) == 1 and len(_files(t, "writeids")) == 1
    assert logmaint.checkpoint_log(t.fs, t.path) is None  # nothing new to fold
    rows = t.ours()
    for _ in range(5):
        t.append()
    seq2 = logmaint.checkpoint_log(t.fs, t.path)
    assert seq2 == seq + 5 and _files(t, "checkpoints") == [f"{seq2:019d}.json"]
    history = pathlog.history(t.fs, t.path)
    assert [h["writeId"] for h in history] == list(range(history[0]["writeId"], 0, -1))
    assert history[len(history) - len(before[0]):] == before[0]
    assert t.values(t.ours()) == t.expected() and set(rows) <= set(t.ours())


def test_conflict_check_sees_records_folded_after_its_snapshot(tmp_path):
    t = _history_table(tmp_path, steps=3)
    slow = pathlog.begin(t.fs, t.path, "delete")  # its snapshot predates the next records
    t.delete()  # commits a delete of the same partition first
    t.append()
    logmaint.checkpoint_log(t.fs, t.path)
    with pytest.raises(CommitConflictError, match="both deleted rows"):
        pathlog.commit(t.fs, slow, partitions=[""], dml_partitions=[""])


def test_a_reader_that_loses_files_to_a_checkpoint_reads_them_from_it(tmp_path, monkeypatch):
    t = _history_table(tmp_path, steps=4)
    expected = _log_view(t)[1]
    real = logstate.read_event
    calls = []

    def read_event(fs, table_path, seq, wait_s=0.0):
        if not calls:  # the listing is taken; now a checkpoint removes the files
            calls.append(seq)
            logmaint.checkpoint_log(fs, table_path)
        return real(fs, table_path, seq, wait_s)

    monkeypatch.setattr(logstate, "read_event", read_event)
    got = [e.folded() for e in logstate.read_events(t.fs, t.path)]
    assert got == expected and calls


def _checkpoint_and_die(path: str, nth: int) -> None:
    from spark_hive_acid.io.filesystem import LocalFileSystem

    real = LocalFileSystem.delete
    count = [0]

    def delete(self, p, recursive=False):
        count[0] += 1
        if count[0] == nth:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(self, p, recursive)

    LocalFileSystem.delete = delete
    logmaint.checkpoint_log(LocalFileSystem(), path)
    os.kill(os.getpid(), signal.SIGKILL)  # finished: die anyway, like a kill just after


@pytest.mark.parametrize("nth", [1, 7, 30])
def test_kill9_during_a_checkpoint_loses_nothing(tmp_path, nth):
    t = _history_table(tmp_path, steps=8)
    before = _log_view(t)
    p = mp.get_context("fork").Process(target=_checkpoint_and_die, args=(t.path, nth))
    p.start()
    p.join(60)
    assert p.exitcode == -signal.SIGKILL
    assert _log_view(t) == before
    t.append()  # the log goes on, and a later checkpoint completes the job
    logmaint.checkpoint_log(t.fs, t.path)
    assert pathlog.history(t.fs, t.path)[1:] == before[0]
    assert len(_files(t, "events")) == 1
