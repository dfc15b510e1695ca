"""The streaming source's offsets and micro-batches, driven without Spark the way Spark drives
them (initialOffset, then latestOffset/partitions until the offset stops moving): over random
histories every committed inserted row comes exactly once, admission limits hold, a write id
still open holds the stream back until it ends, change commits stop it or are skipped, and
Hive-shaped compactions and streaming-ingest deltas neither repeat nor lose rows."""
from __future__ import annotations

import random
from dataclasses import replace

import pytest

from acid_files import (
    base_name, bp, delta_name, inserts, write_acid_file, write_flush_length, write_metadata_acid,
)
from spark_hive_acid.exceptions import InvalidOptionError, StreamingError
from spark_hive_acid.read.reader import TaskReader
from spark_hive_acid.stream.source import StreamPlanner
from spark_hive_acid.txn import pathlog
from stream_history import ROW, History


def drive(path, state=None, read_all=False, cap=None, **options):
    """Run micro-batches until the source has nothing new; returns (batches, offset).
    ``state``: the offset to go on from (a restart from a checkpoint)."""
    return drive_planner({"path": path, **{k: str(v) for k, v in options.items()}}, state,
                         read_all, cap)


def drive_planner(options, state=None, read_all=False, cap=None, column="a"):
    """``drive`` for any options; each batch's rows are the values of ``column``."""
    planner = StreamPlanner(options)
    offset = state or planner.initial_offset()
    batches = []
    for _ in range(100):
        end = planner.latest_offset(offset, read_all=read_all, cap=cap)
        if end == offset:
            return batches, offset
        scan, tasks, rng = planner.batch_scan(offset, end)
        spec = scan.read_spec(scan.to_arrow().schema)
        spec = replace(spec, write_ids=rng) if rng is not None else spec
        rows = sorted(v for t in tasks for b in TaskReader(scan.fs, spec).read(t)
                      for v in b.column(column).to_pylist())
        batches.append((offset.get("writeId"), end["writeId"], rows))
        offset = end
    raise AssertionError("the source never stopped")


def all_rows(batches):
    return sorted(v for _, _, rows in batches for v in rows)


@pytest.mark.parametrize("seed", range(3))
def test_every_committed_insert_once_whatever_the_limits(tmp_path, seed):
    rnd = random.Random(seed)
    h = History(tmp_path / "t")
    for _ in range(4):
        h.random_step(rnd, deletes_too=False)
    first, offset = drive(str(h.root))
    assert len(first) == 1 and first[0][2] == sorted(a for a, _ in h.live.values())  # snapshot
    before = set(first[0][2])
    for _ in range(8):
        h.random_step(rnd, deletes_too=False)
    limit = rnd.choice([1, 2, 3])
    more, _ = drive(str(h.root), offset, maxWriteIdsPerTrigger=limit)
    assert all_rows(more) == sorted(a for a, _ in h.live.values() if a not in before)
    for lo, hi, rows in more:  # each batch: at most `limit` write ids that wrote rows
        assert len([w for w in h.inserted if lo < w <= hi and h.inserted[w]]) <= limit
    again, _ = drive(str(h.root), offset, read_all=True, maxWriteIdsPerTrigger=1)
    assert len(again) == 1 and all_rows(again) == all_rows(more)  # ReadAllAvailable: one batch


def test_starting_version_latest_and_available_now_cap(tmp_path):
    h = History(tmp_path / "t")
    for _ in range(3):
        h.write(n_insert=2)
    assert all_rows(drive(str(h.root), startingVersion=2)[0]) == [2, 3, 4, 5]
    batches, offset = drive(str(h.root), startingVersion="latest")
    assert batches == [] and offset == {"writeId": 3}
    h.write(n_insert=1)
    h.write(n_insert=1)
    assert all_rows(drive(str(h.root), offset, cap=4)[0]) == [6]  # AvailableNow's target: 4
    with pytest.raises(InvalidOptionError, match="startingVersion"):
        StreamPlanner({"path": str(h.root), "startingVersion": "-3"})


def test_max_files_per_trigger(tmp_path):
    h = History(tmp_path / "t")
    h.write(n_insert=1)
    _, offset = drive(str(h.root))
    for n in range(3):
        h.write(n_insert=1, bucket=n)  # one file each
    batches, _ = drive(str(h.root), offset, maxFilesPerTrigger=2)
    assert [len(rows) for _, _, rows in batches] == [2, 1]


def test_an_open_write_id_holds_the_stream_back_until_it_ends(tmp_path):
    h = History(tmp_path / "t")
    h.write(n_insert=1)
    _, offset = drive(str(h.root))
    slow = h.write(n_insert=2, outcome="open")  # write id 2 commits last
    h.write(n_insert=1)
    batches, offset = drive(str(h.root), offset)
    assert batches == []  # 3 is committed, but 2 may still commit
    pathlog.commit(h.fs, slow)
    batches, _ = drive(str(h.root), offset)
    assert all_rows(batches) == [1, 2, 3]


def test_change_commits_stop_the_stream_or_are_skipped(tmp_path):
    h = History(tmp_path / "t")
    h.write(n_insert=3)
    _, offset = drive(str(h.root))
    h.write(n_insert=1)
    h.write(delete_keys=[sorted(h.live)[0]])  # write id 3
    h.write(n_insert=1)
    with pytest.raises(StreamingError, match="Write id 3 .*skipChangeCommits"):
        drive(str(h.root), offset)
    batches, _ = drive(str(h.root), offset, skipChangeCommits="true")
    assert [(lo, hi, rows) for lo, hi, rows in batches] == [(1, 2, [3]), (2, 3, []), (3, 4, [4])]


def test_compactions_between_batches(tmp_path):
    """Hive-shaped compactions: a minor one (delta_1_4) spanning the offset re-emits nothing; a
    major one (base_5) erasing unread write ids stops the stream, saying so."""
    h = History(tmp_path / "t")
    for _ in range(2):
        h.write(n_insert=2)
    _, offset = drive(str(h.root))  # rows 0-3 read, offset 2
    for _ in range(2):
        h.write(n_insert=2)
    # minor compaction of 1..4: every insert event, unchanged, in one delta_1_4
    events = [e for (o, p, r), v in sorted(h.live.items()) for e in inserts(o, p, [v], r)]
    write_acid_file(h.root / delta_name(1, 4) / "bucket_00000", ROW, events)
    batches, offset = drive(str(h.root), offset)
    assert all_rows(batches) == [4, 5, 6, 7]
    h.write(n_insert=1)  # write id 5
    write_acid_file(h.root / base_name(5) / "bucket_00000", ROW,
                    [e for (o, p, r), v in sorted(h.live.items()) for e in inserts(o, p, [v], r)])
    write_metadata_acid(h.root / base_name(5))
    with pytest.raises(StreamingError, match="erased the history of write ids 5 to 5"):
        drive(str(h.root), offset)


def test_a_streaming_ingest_delta_read_batch_by_batch(tmp_path):
    """Hive streaming ingest: one delta_2_5 for a batch of four transactions, 3 aborted, 5 still
    open, the flush length covering what is committed; then 5 commits and its rows flush."""
    h = History(tmp_path / "t")
    h.write(n_insert=1)  # write id 1
    _, offset = drive(str(h.root))
    txns = [pathlog.begin(h.fs, h.path, "streaming") for _ in range(4)]  # 2, 3, 4, 5
    rows = {w: [(100 * w + i, f"s{w}") for i in range(2)] for w in (2, 3, 4, 5)}
    bucket = h.root / delta_name(2, 5) / "bucket_00000"

    def lay_out(upto, unfinished_tail=False):
        events = [e for w in range(2, upto + 1) for e in inserts(w, bp(0), rows[w])]
        write_acid_file(bucket, ROW, events)
        size = bucket.stat().st_size
        if unfinished_tail:  # the open transaction's stripe, being written past the flush
            with open(bucket, "ab") as f:
                f.write(b"\x00an unfinished stripe of write id 5" * 9)
        write_flush_length(bucket, [size])  # the committed prefix

    lay_out(4, unfinished_tail=True)
    pathlog.commit(h.fs, txns[0])
    pathlog.abort(h.fs, h.path, 3, "test")
    pathlog.commit(h.fs, txns[2])
    batches, offset = drive(str(h.root), offset, maxWriteIdsPerTrigger=1)
    assert [b[2] for b in batches] == [[200, 201], [400, 401]]
    lay_out(5)
    pathlog.commit(h.fs, txns[3])
    batches, _ = drive(str(h.root), offset)
    assert all_rows(batches) == [500, 501]


def test_a_hive_written_table(corpus_copy):
    """Real Hive 3 files without a log: the snapshot first (23,000 rows), and its DELETEs (write
    ids 3 and 4) are change commits."""
    path = corpus_copy("nation25k")
    planner = StreamPlanner({"path": path})
    start = planner.initial_offset()
    end = planner.latest_offset(start)
    assert end == {"writeId": 4}
    scan, tasks, _ = planner.batch_scan(start, end)
    assert sum(b.num_rows for t in tasks for b in TaskReader(scan.fs, scan.read_spec(
        scan.to_arrow().schema)).read(t)) == 23_000
    with pytest.raises(StreamingError, match="Write id 3 "):
        drive(path, startingVersion=3)
    assert drive(path, startingVersion=3, skipChangeCommits="true")[0] == [(2, 3, []), (3, 4, [])]


def test_a_compacted_partition_no_unread_write_id_wrote(tmp_path):
    """A compactor names its base after the table's highest write id: a base_3 in a partition
    that no unread write id wrote erased nothing (the log says which partitions each wrote)."""
    from spark_hive_acid.io.registry import get_filesystem

    root = tmp_path / "t"
    fs, path = get_filesystem(str(root), {})

    def write(part, rows):
        txn = pathlog.begin(fs, path, "append")
        w = txn.write_id
        write_acid_file(root / f"p={part}" / delta_name(w, w, 0) / "bucket_00000", ROW,
                        inserts(w, bp(0), rows))
        pathlog.commit(fs, txn, partitions=[f"p={part}"])

    def compact(part, events):
        write_acid_file(root / f"p={part}" / base_name(3) / "bucket_00000", ROW, events)
        write_metadata_acid(root / f"p={part}" / base_name(3))

    write(0, [(1, "a")])
    write(1, [(2, "b")])
    _, offset = drive(str(root))  # write ids 1, 2 read
    write(1, [(3, "c")])
    compact(0, inserts(1, bp(0), [(1, "a")]))
    batches, _ = drive(str(root), offset)
    assert all_rows(batches) == [3]
    compact(1, inserts(2, bp(0), [(2, "b")]) + inserts(3, bp(0), [(3, "c")]))
    with pytest.raises(StreamingError, match="p=1/base_0000003.*write ids 3 to 3"):
        drive(str(root), offset)


def test_an_insert_overwrite_is_a_change_commit(tmp_path):
    h = History(tmp_path / "t")
    h.write(n_insert=2)
    _, offset = drive(str(h.root))
    h.write(n_insert=1)  # 2
    h.overwrite(2)  # 3: base_0000003
    h.write(n_insert=1)  # 4
    with pytest.raises(StreamingError, match="Write id 3 .*base_0000003"):
        drive(str(h.root), offset)
    batches, _ = drive(str(h.root), offset, skipChangeCommits="true")
    assert [(lo, hi, rows) for lo, hi, rows in batches] == [(1, 2, [2]), (2, 3, []), (3, 4, [5])]


def test_an_insert_only_table(tmp_path):
    """Insert-only (MM) tables: no write id in the files, each delta is one write id; the change
    feed is refused (they only ever get inserts)."""
    import pyarrow as pa

    from spark_hive_acid.direct import write_table
    from spark_hive_acid.exceptions import UnsupportedOperationError
    from spark_hive_acid.stream.changefeed import batch_change_feed

    path = str(tmp_path / "mm")
    mm = {"tableProperties": "transactional_properties=insert_only", "fileFormat": "parquet"}

    def append(ids):
        write_table(pa.table({"a": pa.array(ids, pa.int32())}), path, options=mm)

    append([1, 2])
    _, offset = drive(path)
    append([3])
    append([4, 5])
    batches, _ = drive(path, offset, maxWriteIdsPerTrigger=1)
    assert [rows for _, _, rows in batches] == [[3], [4, 5]]
    with pytest.raises(UnsupportedOperationError, match="insert-only"):
        batch_change_feed({"path": path, "readChangeFeed": "true", "startingVersion": "1"})


@pytest.mark.parametrize("seed", range(3))
def test_skipping_change_commits_over_random_histories(tmp_path, seed):
    """Inserts, deletes, updates, overwrites, aborted writes: with skipChangeCommits the stream
    returns exactly the rows of the write ids that only inserted, each once."""
    rnd = random.Random(100 + seed)
    h = History(tmp_path / "t")
    h.write(n_insert=3)
    _, offset = drive(str(h.root))
    for _ in range(12):
        h.random_step(rnd)
    changed = h.overwrites | {w for w, ch in h.changes.items() if any(k != "insert" for k, *_ in ch)}
    want = sorted(a for w, rows in h.inserted.items() if w > 1 and w not in changed
                  for a in rows)
    batches, _ = drive(str(h.root), offset, skipChangeCommits="true",
                       maxWriteIdsPerTrigger=rnd.choice([1, 3]))
    assert all_rows(batches) == want


@pytest.mark.parametrize("seed", range(2))
def test_a_minor_compaction_mid_stream_repeats_and_loses_nothing(tmp_path, seed):
    rnd = random.Random(200 + seed)
    h = History(tmp_path / "t")
    for _ in range(10):
        h.random_step(rnd, deletes_too=False)
    first, offset = drive(str(h.root), startingVersion=1,
                          cap=rnd.randint(2, max(h.changes) - 1))  # part of the write ids
    h.minor_compact()  # delta_lo_hi spanning the offset
    for _ in range(3):
        h.random_step(rnd, deletes_too=False)
    rest, _ = drive(str(h.root), offset, maxWriteIdsPerTrigger=2)
    assert all_rows(first + rest) == sorted(a for rows in h.inserted.values() for a in rows)
