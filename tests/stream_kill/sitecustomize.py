"""Pause points for the streaming kill tests (tests/test_streaming_sink.py).

This directory is put on PYTHONPATH of a driver the test kills, so every Python process of that
Spark application (driver, planning, executor and commit workers) imports this file at start-up.
With ``HIVEACID_TEST_PAUSE=<point>:<batch>`` the commit of that micro-batch stops at <point>,
writes ``HIVEACID_TEST_PAUSED`` (a file the test waits for) and sleeps until it is killed:

* ``before``: the commit worker has the batch's messages; nothing published yet;
* ``during``: the batch's directories are published (renamed into the table), not committed;
* ``after``: the transaction is committed; Spark has not recorded the batch as done.
"""
import os
import time

_spec = os.environ.get("HIVEACID_TEST_PAUSE")


def _pause(point: str, batch: int) -> None:
    want, _, want_batch = (_spec or "").partition(":")
    if want == point and int(want_batch) == batch:
        with open(os.environ["HIVEACID_TEST_PAUSED"], "w") as f:
            f.write(f"{point}:{batch}:{os.getpid()}")
        while True:
            time.sleep(1)


if _spec:
    from spark_hive_acid.stream import sink as _sink

    _commit_batch, _commit_write = _sink.commit_batch, _sink.commit_write

    def commit_batch(fs, table, txn, staged, query_id, batch_id, **kw):
        _pause("before", batch_id)
        _current["batch"] = batch_id
        result = _commit_batch(fs, table, txn, staged, query_id, batch_id, **kw)
        _pause("after", batch_id)
        return result

    def commit_write(fs, table, txn, staged, **kw):
        commit = txn.commit

        def paused_commit(*a, **k):
            _pause("during", _current["batch"])
            return commit(*a, **k)

        txn.commit = paused_commit
        return _commit_write(fs, table, txn, staged, **kw)

    _current = {"batch": -1}
    _sink.commit_batch, _sink.commit_write = commit_batch, commit_write
