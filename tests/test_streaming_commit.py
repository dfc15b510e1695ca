"""The exactly-once commit of streaming micro-batches, without Spark (fast): the path-mode log
refuses a batch committed after the transaction's snapshot atomically with its commit record, and
``commit_batch`` recognises a replayed batch from the log (path mode) or from its claim and the
metastore's state of the claiming write id (metastore mode)."""
from __future__ import annotations

import pyarrow as pa
import pytest

from spark_hive_acid.acid.layout import staging_dir
from spark_hive_acid.catalog import PathTable
from spark_hive_acid.direct import write_table
from spark_hive_acid.exceptions import AlreadyCommittedError
from spark_hive_acid.read.scan import read_table
from spark_hive_acid.stream import sink
from spark_hive_acid.txn import pathlog
from spark_hive_acid.txn.committer import commit_write
from spark_hive_acid.write.options import WriteOptions
from spark_hive_acid.write.schema import map_columns
from spark_hive_acid.write.task_writer import InsertTarget, TableSpec, stage_batches


def _staged(ref, rows):
    """Begin a transaction on ``ref`` and stage ``rows`` (ids) under it."""
    data = pa.table({"id": pa.array(rows, pa.int64())})
    layout, _ = ref.prepare_write(data.schema, WriteOptions.parse(ref.options, require_path=False))
    fs, location = ref.location()
    spec = TableSpec.of(location, layout)
    txn = ref.begin("append")
    staged = stage_batches(fs, spec, InsertTarget(txn.write_id, 0), map_columns(layout, data.schema),
                           iter(data.to_batches()),
                           fs.join(staging_dir(fs, location, txn.write_id), "t"), 0)
    return fs, spec, txn, staged


def _ids(path):
    return sorted(read_table(path).column("id").to_pylist())


def test_the_log_refuses_a_once_property_committed_after_the_snapshot(tmp_path):
    path = str(tmp_path / "t")
    write_table(pa.table({"id": pa.array([0], pa.int64())}), path)
    ref = PathTable(path)
    a, b = _staged(ref, [1]), _staged(ref, [1])  # both begun before either commits
    props = sink.batch_properties("q", 7)
    commit_write(*a, properties=props)
    with pytest.raises(AlreadyCommittedError, match="stream:q:7"):
        commit_write(*b, properties=props)
    assert _ids(path) == [0, 1]
    states = {h["writeId"]: h["state"] for h in pathlog.history(*ref.location())}
    assert states[a[2].write_id] == "committed" and states[b[2].write_id] == "aborted"
    other = _staged(ref, [2])
    commit_write(*other, properties=sink.batch_properties("q", 8))  # another batch commits
    assert _ids(path) == [0, 1, 2]


def test_a_replayed_batch_is_not_written_twice_in_path_mode(tmp_path):
    path = str(tmp_path / "t")
    write_table(pa.table({"id": pa.array([0], pa.int64())}), path)
    ref = PathTable(path)
    assert sink.commit_batch(*_staged(ref, [1, 2]), "q", 0, path_mode=True) is not None
    replay = _staged(ref, [1, 2])  # begun after batch 0 committed: the log tells
    assert sink.commit_batch(*replay, "q", 0, path_mode=True) is None
    assert sink.commit_batch(*_staged(ref, [3]), "other-query", 0, path_mode=True) is not None
    assert sink.commit_batch(*_staged(ref, [4]), "q", 1, path_mode=True) is not None
    assert _ids(path) == [0, 1, 2, 3, 4]
    fs, p = ref.location()
    assert sink.last_committed_batch(fs, p, "q") == 1
    assert not fs.exists(staging_dir(fs, p, replay[2].write_id))


def test_metastore_claims_wait_for_the_claiming_write_id(tmp_path):
    """A claim held by an open write id is waited for; committed: the batch is skipped; aborted:
    the claim is taken over."""
    path = str(tmp_path / "t")
    write_table(pa.table({"id": pa.array([0], pa.int64())}), path)
    ref = PathTable(path)
    fs, p = ref.location()
    states = {5: ["open", "open", "committed"]}

    def state(w):
        return states[w].pop(0) if len(states[w]) > 1 else states[w][0]

    assert sink._claim(fs, p, "q", 3, 5, state) is None  # first claim: ours
    assert sink._claim(fs, p, "q", 3, 5, state) is None  # ours again (same write id)
    sink.CLAIM_WAIT_S, saved = 5.0, sink.CLAIM_WAIT_S
    try:
        assert sink._claim(fs, p, "q", 3, 6, state) == 5  # waited while open, then committed
        states[5] = ["aborted"]
        assert sink._claim(fs, p, "q", 3, 6, state) is None  # taken over
        assert sink._claim_owner(fs, sink.claim_path(fs, p, "q", 3)) == 6
    finally:
        sink.CLAIM_WAIT_S = saved
