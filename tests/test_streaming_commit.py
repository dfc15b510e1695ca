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
from spark_hive_acid.direct import read_table
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
    # the claims of batches before the previous one go with each commit
    for b in range(4):
        sink.claim_for_task(fs, p, "q", b, replay[2])
    assert sink.commit_batch(*_staged(ref, [5]), "q", 4, path_mode=True) is not None
    assert sorted(x.name for x in (tmp_path / "t" / sink.CLAIMS_DIR / "q").iterdir()) == \
        [f"{3:019d}.json"]


def test_metastore_claims_end_the_earlier_attempt(tmp_path):
    """A claim held by another write id: committed, the batch is skipped; still open, the earlier
    attempt is aborted (then taken over); aborted, taken over."""
    path = str(tmp_path / "t")
    write_table(pa.table({"id": pa.array([0], pa.int64())}), path)
    fs, p = PathTable(path).location()
    states = {5: "open"}
    aborted = []

    def abort(claim):
        aborted.append((claim["writeId"], claim["txnId"]))
        states[claim["writeId"]] = "aborted"

    def claim(w, txn=None):
        return sink._claim(fs, p, "q", 3, {"writeId": w, "txnId": txn or w + 100},
                           lambda c: states[c["writeId"]], abort)

    assert claim(5) is None  # first claim: ours
    assert claim(5) is None  # ours again (its tasks made it)
    assert claim(6) is None and aborted == [(5, 105)]  # 5 was open: aborted, taken over
    assert sink._claim_owner(fs, sink.claim_path(fs, p, "q", 3)) == 6
    states[6] = "committed"
    assert claim(7) == 6  # committed: the batch is in
    assert sink._read_claim(fs, sink.claim_path(fs, p, "q", 3))["txnId"] == 106
    # a claim marked committed (by its commit) needs no metastore answer
    sink._mark_committed(fs, p, "q", 3, type("T", (), {"write_id": 6, "txn_id": 106})())
    states[6] = "aborted"  # what Hive 3.1 would make of a forgotten write id is not asked
    assert claim(8) == 6


def test_a_batch_committed_before_a_log_checkpoint_is_still_recognised(tmp_path):
    """vacuum() folds the log's records into a checkpoint; a replay of a batch committed before
    it must still be recognised (else the batch is written twice)."""
    from spark_hive_acid.txn.logmaint import checkpoint_log

    path = str(tmp_path / "t")
    write_table(pa.table({"id": pa.array([0], pa.int64())}), path)
    ref = PathTable(path)
    fs, p = ref.location()
    assert sink.commit_batch(*_staged(ref, [1]), "q", 0, path_mode=True) is not None
    for k in range(3):  # newer records of other writers, so the batch's record gets folded
        write_table(pa.table({"id": pa.array([10 + k], pa.int64())}), path)
    assert checkpoint_log(fs, p) is not None
    assert sink.last_committed_batch(fs, p, "q") == 0
    assert sink.commit_batch(*_staged(ref, [1]), "q", 0, path_mode=True) is None
    assert _ids(path) == [0, 1, 10, 11, 12]
