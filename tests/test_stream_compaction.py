"""The streaming source and the change feed across this library's own compactions (issue 15's
output, not the Hive-shaped stand-ins of test_stream_source / test_change_feed): a compaction
commits in the path-mode log without writing a row, so it is neither a write the stream must read
nor a change; a minor compaction keeps every event, so neither the stream nor the feed changes;
a major one erases the history of write ids not read yet, and both say so."""
from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from compaction_ops import ModelTable
from spark_hive_acid.acid.logstate import load_state
from spark_hive_acid.exceptions import StreamingError
from spark_hive_acid.read.changes import read_changes
from spark_hive_acid.direct import read_table
from spark_hive_acid.stream.changefeed import batch_change_feed
from test_stream_source import drive_planner


def _ids(batches):
    return sorted(v for _, _, rows in batches for v in rows)


def drive(path, state=None, cap=None, **options):
    """Micro-batches until the source has nothing new, as test_stream_source drives them (rows
    by their id column); returns (batches, offset)."""
    return drive_planner({"path": path, **{k: str(v) for k, v in options.items()}}, state,
                         cap=cap, column="id")


@pytest.mark.parametrize("seed", range(2))
def test_the_stream_across_minor_and_major_compactions(tmp_path, seed):
    rnd = random.Random(seed)
    t = ModelTable(str(tmp_path / "t"), rnd, partitioned=bool(seed))
    for _ in range(6):
        t.append()
    first, offset = drive(t.path, cap=3)  # the snapshot, then part of the write ids
    t.compact("minor")  # spans the offset
    for _ in range(3):
        t.append()
    rest, offset = drive(t.path, offset, maxWriteIdsPerTrigger=2)
    assert _ids(first + rest) == sorted(t.model)  # every row once
    t.compact("major")  # only write ids the stream has read: nothing erased
    more, offset = drive(t.path, offset)
    assert more == []
    t.append()
    t.append()
    t.compact("major")  # erases the two unread write ids
    with pytest.raises(StreamingError, match="erased the history"):
        drive(t.path, offset)


def _feed(path, start, end):
    fs, pairs = batch_change_feed({"path": path, "readChangeFeed": "true",
                                   "startingVersion": str(start), "endingVersion": str(end)})
    out = []
    for spec, task in pairs:
        for b in read_changes(fs, spec, task):
            out += list(zip(b.column("_change_type").to_pylist(), b.column("id").to_pylist(),
                            b.column("v").to_pylist()))
    return out


def _snapshot(path, w):
    tab = read_table(path, validWriteIds=f"t:{w}:9223372036854775807::") if w else None
    return Counter() if tab is None else Counter(zip(tab.column("id").to_pylist(),
                                                     tab.column("v").to_pylist()))


def _check_feeds(t, snapshots, rnd):
    top = max(snapshots)
    for _ in range(6):
        a, b = sorted(rnd.sample(range(0, top + 1), 2))
        state = Counter(snapshots[a])
        for kind, i, v in _feed(t.path, a + 1, b):
            state[(i, v)] += -1 if kind in ("delete", "update_preimage") else 1
        assert +state == snapshots[b], (a, b, t.log)


@pytest.mark.parametrize("seed", range(2))
def test_the_change_feed_across_compactions(tmp_path, seed):
    rnd = random.Random(10 + seed)
    t = ModelTable(str(tmp_path / "t"), rnd, partitioned=bool(seed))
    snapshots = {0: Counter()}
    for k in range(12):
        (t.append if k == 0 else rnd.choice([t.append, t.append, t.delete, t.update, t.merge]))()
        w = load_state(t.fs, t.path).high_watermark
        snapshots[w] = _snapshot(t.path, w)
    _check_feeds(t, snapshots, rnd)
    t.compact("minor")  # every event kept: the feed of any range is unchanged
    _check_feeds(t, snapshots, rnd)
    t.compact("major")
    bases = [int(d.name[len("base_"):]) for d in Path(t.path).rglob("base_*") if d.is_dir()]
    erased = max(bases)  # the base a major compaction named after the highest write id
    with pytest.raises(StreamingError, match=f"oldest version it can start from now is {erased + 1}"):
        _feed(t.path, 1, max(snapshots))
    assert not _feed(t.path, erased + 1, load_state(t.fs, t.path).high_watermark)  # no changes
