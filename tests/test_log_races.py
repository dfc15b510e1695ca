"""The path-mode log while checkpoints fold it (issue 25): each interleaving that lost a commit,
handed a write id out twice or let a reader skip records, forced deterministically. One writer
runs the library's own code in a thread and is stopped at the exact step (``log_pause``); the
other writers and the checkpoint run meanwhile, then the first goes on."""
from __future__ import annotations

import pyarrow as pa

import log_pause
from spark_hive_acid import read_table, write_table
from spark_hive_acid.acid import logstate
from spark_hive_acid.exceptions import CommitConflictError
from spark_hive_acid.io.filesystem import LocalFileSystem
from spark_hive_acid.txn import logmaint, pathlog


def _ids(path: str) -> list[int]:
    return sorted(read_table(path).column("id").to_pylist())


def _rows(*ids: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64())})


def _is(op: str, kind: str, nth: int = 1):
    """A pause predicate: the ``nth`` call of ``op`` on a path under ``_hiveacid_txnlog/kind``."""
    seen = [0]

    def match(called: str, path: str) -> bool:
        if called != op or f"/_hiveacid_txnlog/{kind}" not in path:
            return False
        seen[0] += 1
        return seen[0] == nth
    return match


def test_a_commit_that_returned_is_never_lost_to_a_checkpoint(tmp_path):
    """Race 1: the committer read record n and is about to create n+1; two commits land and a
    checkpoint folds n+1 and removes its file; the create then succeeds on a folded name."""
    path = str(tmp_path / "t")
    for i in range(3):
        write_table(_rows(i), path)
    pfs = log_pause.install()
    pause = pfs.pause_at(_is("create_exclusive", "events"))
    writer, result = log_pause.in_thread(lambda: write_table(_rows(100), log_pause.uri(path)))
    assert pause.wait_reached()
    write_table(_rows(101), path)  # takes n+1 ...
    write_table(_rows(102), path)  # ... and n+2
    assert logmaint.checkpoint_log(LocalFileSystem(), path) is not None  # folds n+1, removes it
    pause.release()
    writer.join(60)
    assert not isinstance(result[0], BaseException), result
    committed = result[0]["writeId"]
    assert _ids(path) == [0, 1, 2, 100, 101, 102]
    # the write stays committed through later checkpoints and the stale-writer rule
    for i in range(3):
        write_table(_rows(200 + i), path)
        logmaint.checkpoint_log(LocalFileSystem(), path)
    assert pathlog.abort_stale(LocalFileSystem(), path, timeout_s=0) == []
    assert logstate.load_state(LocalFileSystem(), path).state_of(committed) == "committed"
    assert 100 in _ids(path)


def test_a_write_id_is_never_handed_out_twice(tmp_path):
    """Race 2: the allocator picked W = high watermark + 1; another writer takes W and commits,
    a checkpoint removes W's allocation record, then the first creates it again."""
    path = str(tmp_path / "t")
    for i in range(2):
        write_table(_rows(i), path)
    pfs = log_pause.install()
    pause = pfs.pause_at(_is("create_exclusive", "writeids"))
    writer, result = log_pause.in_thread(lambda: write_table(_rows(100), log_pause.uri(path)))
    assert pause.wait_reached()
    taken = [write_table(_rows(101 + i), path)["writeId"] for i in range(2)]
    assert logmaint.checkpoint_log(LocalFileSystem(), path) is not None
    assert not (tmp_path / "t" / "_hiveacid_txnlog" / "writeids" / f"{taken[0]:019d}.json").exists()
    pause.release()
    writer.join(60)
    assert not isinstance(result[0], BaseException), result
    assert result[0]["writeId"] not in taken and result[0]["writeId"] > max(taken)
    assert _ids(path) == [0, 1, 100, 101, 102]
    history = pathlog.history(LocalFileSystem(), path)
    assert sorted(h["writeId"] for h in history) == list(range(1, 6))
    assert all(h["state"] == "committed" for h in history)


def test_a_reader_never_skips_records_a_checkpoint_folds_meanwhile(tmp_path):
    """Race 3: the reader read the newest checkpoint; another checkpoint folds records and removes
    their files before the reader lists them."""
    path = str(tmp_path / "t")
    for i in range(4):
        write_table(_rows(i), path)
    logmaint.checkpoint_log(LocalFileSystem(), path)
    pfs = log_pause.install()
    pause = pfs.pause_at(_is("list_dir", "events"))
    reader, result = log_pause.in_thread(lambda: logstate.read_events(pfs, path))
    assert pause.wait_reached()
    for i in range(3):
        write_table(_rows(10 + i), path)
    assert logmaint.checkpoint_log(LocalFileSystem(), path) is not None
    pause.release()
    reader.join(60)
    assert not isinstance(result[0], BaseException), result
    assert [e.seq for e in result[0]] == list(range(1, 8))
    assert [e.seq for e in logstate.read_events(LocalFileSystem(), path)] == list(range(1, 8))


def test_two_deletes_of_one_partition_never_both_commit_across_a_checkpoint(tmp_path):
    """Race 3's consequence: the second delete's conflict check lost the first delete's record to
    a checkpoint, so both committed (an UPDATE twice: the row doubled)."""
    path = str(tmp_path / "t")
    for i in range(3):
        write_table(_rows(i), path)
    logmaint.checkpoint_log(LocalFileSystem(), path)
    pfs = log_pause.install()
    slow = pathlog.begin(pfs, path, "delete")
    # the commit lists events/ once for the newest record, then again in its conflict check
    pause = pfs.pause_at(_is("list_dir", "events", nth=2))
    committer, result = log_pause.in_thread(
        lambda: pathlog.commit(pfs, slow, partitions=[""], dml_partitions=[""]))
    assert pause.wait_reached()
    fast = pathlog.begin(LocalFileSystem(), path, "delete")
    pathlog.commit(LocalFileSystem(), fast, partitions=[""], dml_partitions=[""])
    write_table(_rows(50), path)
    assert logmaint.checkpoint_log(LocalFileSystem(), path) is not None  # folds the first delete
    pause.release()
    committer.join(60)
    assert isinstance(result[0], CommitConflictError) and "both deleted rows" in str(result[0])
    assert logstate.load_state(LocalFileSystem(), path).state_of(slow.write_id) == "aborted"


def test_events_newest_first_sees_every_record_across_a_checkpoint(tmp_path):
    """The streaming sink's backwards read of the log, with a checkpoint between its listing and
    its reads: no record is skipped, none is yielded twice."""
    path = str(tmp_path / "t")
    for i in range(5):
        write_table(_rows(i), path)
    pfs = log_pause.install()
    pause = pfs.pause_at(_is("read_bytes", "events", nth=2))
    reader, result = log_pause.in_thread(
        lambda: [e.seq for e in logstate.events_newest_first(pfs, path)])
    assert pause.wait_reached()
    write_table(_rows(9), path)
    assert logmaint.checkpoint_log(LocalFileSystem(), path) is not None
    pause.release()
    reader.join(60)
    assert not isinstance(result[0], BaseException), result
    assert result[0] == [5, 4, 3, 2, 1]


def test_a_void_record_is_never_read_as_part_of_the_log(tmp_path):
    """While a writer's reused name exists (between its create and its removal), readers of the
    newest record and of the whole chain see only real records."""
    path = str(tmp_path / "t")
    for i in range(3):
        write_table(_rows(i), path)
    pfs = log_pause.install()
    first = pfs.pause_at(_is("create_exclusive", "events"))
    writer, result = log_pause.in_thread(lambda: write_table(_rows(100), log_pause.uri(path)))
    assert first.wait_reached()
    for i in range(2):
        write_table(_rows(101 + i), path)
    logmaint.checkpoint_log(LocalFileSystem(), path)
    removal = pfs.pause_at(_is("delete", "events"))  # stop it before it removes its void record
    first.release()
    assert removal.wait_reached()
    assert removal.path.endswith(f"{4:019d}.json")  # the name it reused
    local = LocalFileSystem()
    assert [e.seq for e in logstate.read_events(local, path)] == list(range(1, 6))
    assert logstate.load_state(local, path).seq == 5
    assert _ids(path) == [0, 1, 2, 101, 102]
    removal.release()
    writer.join(60)
    assert not isinstance(result[0], BaseException), result
    assert _ids(path) == [0, 1, 2, 100, 101, 102]
