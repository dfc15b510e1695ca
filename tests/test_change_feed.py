"""The change feed, without Spark: over random histories (inserts, deletes, updates, aborted
writes) laid out as Hive lays them out, the feed of (A, B] is exactly the model's changes of
those write ids, change by change, and applying it to the snapshot at A gives the snapshot at B."""
from __future__ import annotations

import random
from collections import Counter

import pytest

from spark_hive_acid.exceptions import StreamingError
from spark_hive_acid.read.changes import read_changes
from spark_hive_acid.stream.changefeed import batch_change_feed
from stream_history import History


def feed(path, start, end=None):
    opts = {"path": path, "readChangeFeed": "true", "startingVersion": str(start)}
    if end is not None:
        opts["endingVersion"] = str(end)
    fs, pairs = batch_change_feed(opts)
    rows = []
    for spec, t in pairs:
        for b in read_changes(fs, spec, t):
            rows += list(zip(*[b.column(n).to_pylist() for n in
                               ("_change_type", "a", "b", "_commit_version", "_commit_timestamp")]))
    return rows


@pytest.mark.parametrize("seed", range(4))
def test_feed_equals_the_models_changes_and_the_snapshot_difference(tmp_path, seed):
    """Then again after a minor compaction (events kept): the feed does not change."""
    rnd = random.Random(seed)
    h = History(tmp_path / "t")
    for _ in range(14):
        h.random_step(rnd)
    check_ranges(h, rnd)
    h.minor_compact()
    check_ranges(h, rnd)


def check_ranges(h, rnd):
    ids = sorted(h.changes)
    top = max(ids)
    for _ in range(5):
        a, b = sorted(rnd.sample(range(0, top + 1), 2))
        got = feed(str(h.root), a + 1, b)
        want = [(k, x, y, w) for w in ids if a < w <= b for k, x, y in h.changes[w]]
        assert Counter(r[:4] for r in got) == Counter(want), (a, b)
        assert all(r[4] is not None for r in got)  # the path-mode log knows when
        # applying the feed to the snapshot at A gives the snapshot at B
        state = Counter(h.snapshot_at(a))
        for kind, x, y, _, _ in sorted(got, key=lambda r: (r[3], r[0] not in
                                                           ("delete", "update_preimage"))):
            if kind in ("delete", "update_preimage"):
                state[(x, y)] -= 1
            else:
                state[(x, y)] += 1
        assert sorted(+state) == sorted(Counter(h.snapshot_at(b)).elements())


def test_a_major_compaction_names_the_oldest_version_the_feed_can_start_from(tmp_path):
    from acid_files import base_name, bp, inserts, write_acid_file, write_metadata_acid

    h = History(tmp_path / "t")
    for _ in range(3):
        h.write(n_insert=2)
    h.write(delete_keys=[sorted(h.live)[0]])
    # Hive's compactor: base_4 with the live rows, keeping their ROW__IDs
    rows = sorted(h.live.items())
    events = [e for (o, p, r), v in rows for e in inserts(o, p, [v], first_row_id=r)]
    write_acid_file(h.root / base_name(4) / "bucket_00000", "struct<a:int,b:string>", events)
    write_metadata_acid(h.root / base_name(4))
    h.write(n_insert=1)
    with pytest.raises(StreamingError, match="start from now is 5"):
        feed(str(h.root), 2)
    assert [r[:2] for r in feed(str(h.root), 5)] == [("insert", 6)]


def _changes(path, start):
    fs, pairs = batch_change_feed({"path": path, "readChangeFeed": "true",
                                   "startingVersion": str(start)})
    return [r for spec, t in pairs for b in read_changes(fs, spec, t) for r in b.to_pylist()]


def test_feed_of_hive_written_tables(corpus_copy):
    """Real Hive 3 files: the deleted rows' values come from Hive's base file; a delete event
    whose ROW__ID matches nothing (single_col_minor's write id 7) yields nothing."""
    rows = _changes(corpus_copy("nation25k"), 3)
    assert Counter((r["n_nationkey"], r["_change_type"], r["_commit_version"]) for r in rows) \
        == {(5, "delete", 3): 1000, (19, "delete", 4): 1000}
    assert all(r["_commit_timestamp"] is None for r in rows)  # no log: no commit times
    got = [(r["col"], r["_change_type"], r["_commit_version"])
           for r in _changes(corpus_copy("single_col_minor"), 1)]
    assert sorted(got) == [(2, "delete", 4), (2, "insert", 2)]
