"""Compaction against a model and Hive's own readers: Hive 2.3 (tests/hive_ref), 3.1 and 4.1
(tests/hive_jvm).

Random histories of appends, overwrites, deletes, updates and merges (Spark-free writers, the one commit
path), with minor and major compactions and vacuums at random points. After every step our read
equals the model; every compaction keeps each row's ROW__ID and values exactly (our read with
ROW__IDs before == after); after every compaction and vacuum Hive 2.3's reader, run on each
partition directory with the log's snapshot, returns exactly our rows and ROW__IDs; after every
step Hive 3.1's and 4.1's readers, row by row and vectorized, do too, and every earlier snapshot
reads the same in Hive 3.1 / 4.1 as in ours (or both refuse it: not enough history).
Unpartitioned, partitioned + bucketed (bucketing version 2, and 1), and a table that starts with
Hive-written original files.
"""
from __future__ import annotations

import os
import random

import pytest

from compaction_ops import COLUMNS, ModelTable
from spark_hive_acid.acid.logstate import load_state
from spark_hive_acid.exceptions import NotEnoughHistoryError
from spark_hive_acid.acid.layout import TableLayout, save_layout
from spark_hive_acid.io.filesystem import LocalFileSystem
from hive_ref.fixtures import hive_ref  # noqa: F401
from hive_jvm.fixtures import newer_hives  # noqa: F401
from hive_jvm.server import HiveCallError

pytestmark = [pytest.mark.hive, pytest.mark.hive31, pytest.mark.hive41]


@pytest.fixture(autouse=True)
def segmented(monkeypatch):
    """Every output file of these tests with two input slices or more is written in up to 3
    segments and concatenated (compaction.segments), as a big file is on a real cluster. Yields
    the number of segments of each file so joined."""
    import compaction_ops
    from spark_hive_acid.compaction import segments

    joined: list[int] = []
    concat = segments.concat_acid_files

    def counting(fs, sources, target):
        joined.append(len(sources))
        return concat(fs, sources, target)

    monkeypatch.setattr(segments, "SEGMENT_MIN_BYTES", 1)
    monkeypatch.setattr(segments, "concat_acid_files", counting)
    monkeypatch.setattr(compaction_ops, "PARALLELISM", 3)
    yield joined

OPS = ["append", "append", "delete", "update", "merge", "overwrite", "minor", "major", "vacuum"]


def _snapshot(table: ModelTable) -> str:
    return load_state(table.fs, table.path).snapshot().to_string()


def _check_old_snapshots(table: ModelTable, snapshots: list, where: str, kind: str,
                         newer=()) -> list:
    """Every earlier snapshot reads as it did, or, after a major compaction, may be refused with
    ACID_NOT_ENOUGH_HISTORY (the compacted base erased the history it needs: Hive's rule). Hive
    3.1 and 4.1 (``newer``) read each one as ours does, or refuse it too.
    Returns the snapshots that still read."""
    still = []
    for snap, rows in snapshots:
        try:
            got = table.ours(validWriteIds=snap)
        except NotEnoughHistoryError:
            assert kind == "major", f"{where}: snapshot {snap} refused after a {kind} compaction"
            for hive in newer:
                with pytest.raises(HiveCallError, match="Not enough history"):
                    table.hive3_rows(hive, snapshot=snap)
            continue
        assert got == rows, f"{where}: snapshot {snap} reads otherwise after the {kind} compaction"
        for hive in newer:
            if hive.version.startswith("3.") and hive31_refuses(table, snap):
                with pytest.raises(HiveCallError, match="Not enough history"):
                    table.hive3_rows(hive, snapshot=snap)
                continue
            assert table.hive3_rows(hive, snapshot=snap) == rows, \
                f"{where}: {hive} reads snapshot {snap} otherwise"
        still.append((snap, rows))
    return still


def hive31_refuses(table: ModelTable, snap: str) -> bool:
    """Hive 3.1.3's getAcidState refuses a snapshot (ACID_NOT_ENOUGH_HISTORY) when a partition
    has bases and none is usable, *whatever made them*; Hive 4 (and the library) only when the
    oldest is a compactor's base, since an insert-overwrite base erased no history (its deltas
    stay until cleaned). Usable: an insert-overwrite base_W whose W is valid; a compacted one
    (``_metadata_acid``) whose W is below minOpenWriteId and <= HWM."""
    from spark_hive_acid.acid.snapshot import parse_write_ids

    wl = parse_write_ids(snap)
    for d, _ in table.partition_dirs():
        bases = [n for n in os.listdir(d) if n.startswith("base_")]
        usable = [n for n in bases
                  if (wl.is_valid_base(int(n[5:])) if os.path.exists(f"{d}/{n}/_metadata_acid")
                      else wl.is_valid(int(n[5:])))]
        if bases and not usable:
            return True
    return False


def _check_newer_hives(table: ModelTable, newer, got, where: str) -> None:
    for hive in newer:
        for vectorized in (False, True):
            assert table.hive3_rows(hive, vectorized=vectorized) == got, \
                f"{where}: {hive} ({'vectorized' if vectorized else 'row by row'}) reads otherwise"


def _run(table: ModelTable, hive_ref, steps: int, hive_ok=lambda: True,  # noqa: F811
         newer=()) -> None:
    rng = table.rng
    table.append()
    snapshots = [(_snapshot(table), table.ours())]
    for step in range(steps):
        op = rng.choice(OPS)
        before = table.ours()
        if op in ("minor", "major"):
            parts = None
            if table.partitioned and rng.random() < 0.3:
                parts = [f"p={rng.randrange(3)}"]
                parts = [p for p in parts if os.path.isdir(f"{table.path}/{p}")] or None
            table.compact(op, parts)
        else:
            getattr(table, op)()
        got = table.ours()
        where = f"step {step} ({op}); history: {table.log}"
        assert table.values(got) == table.expected(), where
        _check_newer_hives(table, newer, got, where)
        if op in ("minor", "major", "vacuum"):
            assert got == before, f"{where}: compaction changed rows or ROW__IDs"
            if hive_ok():
                assert table.hive_rows(hive_ref) == got, f"{where}: Hive 2.3 reads otherwise"
        if op in ("minor", "major"):
            snapshots = _check_old_snapshots(table, snapshots, where, op, newer)
        if op == "vacuum":  # older snapshots are past the retention now (0 hours here)
            snapshots = []
        snapshots.append((_snapshot(table), got))


@pytest.mark.parametrize("seed", [1, 2])
def test_unpartitioned_history_matches_model_and_hive(hive_ref, newer_hives, tmp_path, seed,  # noqa: F811
                                                       segmented):
    t = ModelTable(str(tmp_path / "t"), random.Random(seed))
    _run(t, hive_ref, 16, newer=newer_hives)
    # whatever the random choices were, end with a major compaction of several files
    t.append()
    t.append()
    t.delete()
    before = t.ours()
    t.compact("major")
    assert t.ours() == before
    assert t.hive_rows(hive_ref) == before
    _check_newer_hives(t, newer_hives, before, "final major compaction")
    assert segmented, "no output file was written in segments"


@pytest.mark.parametrize("seed, version", [(3, 2), (4, 1)])
def test_partitioned_bucketed_history_matches_model_and_hive(hive_ref, newer_hives, tmp_path,  # noqa: F811
                                                             seed, version, segmented):
    t = ModelTable(str(tmp_path / "t"), random.Random(seed), partitioned=True, buckets=2,
                   bucketing_version=version)
    _run(t, hive_ref, 16, newer=newer_hives)
    # whatever the random choices were, end with both kinds everywhere
    t.append()
    t.delete()
    before = t.ours()
    t.compact("minor")
    t.compact("major")
    assert t.ours() == before
    assert t.hive_rows(hive_ref) == before
    _check_newer_hives(t, newer_hives, before, "final minor + major compaction")
    assert segmented, "no output file was written in segments"


def test_original_files_become_acid_rows_with_their_synthetic_row_ids(hive_ref, newer_hives,  # noqa: F811
                                                                     tmp_path, segmented):
    """A table Hive wrote before it became transactional: two original files of bucket 0
    (``000000_0``, ``000000_0_copy_1``) and one of bucket 1. A major compaction turns their rows
    into ACID rows keeping the synthetic ROW__IDs our reader (Hive 3's rules) gave them, so
    deletes written against them before the compaction still apply after it."""
    path = str(tmp_path / "t")
    rng = random.Random(7)
    table = ModelTable(path, rng)
    files = {"000000_0": range(0, 5), "000000_0_copy_1": range(5, 8), "000001_0": range(8, 12)}
    for name, ids in files.items():
        hive_ref.write_original(f"{path}/{name}", COLUMNS, [(i, f"o{i}") for i in ids])
        table.model.update({i: (f"o{i}", 0) for i in ids})
    table.next_id = 12
    # ALTER TABLE ... SET TBLPROPERTIES ('transactional'='true'): the layout file marks it ACID
    save_layout(table.fs, path, TableLayout(columns=COLUMNS))
    table.append()
    table.delete()
    table.update()
    before = table.ours()
    synthetic = {k for k in before if k[0][0] == 0}
    assert {k[0][1] for k in synthetic} <= {536870912, 536936448}  # V1 (bucket 0/1, stmt 0)
    # Hive 3.1 / 4.1 give the original files' rows the same synthetic ROW__IDs, and apply the
    # deletes written against them
    _check_newer_hives(table, newer_hives, before, "original files + DML")
    minor = table.compact("minor")
    assert table.ours() == before
    _check_newer_hives(table, newer_hives, before, "after the minor compaction")
    assert os.path.exists(f"{path}/000000_0"), "minor compaction leaves original files alone"
    assert minor["partitionsCompacted"] == 1
    table.compact("major")
    after = table.ours()
    assert after == before
    assert sorted(os.listdir(f"{path}/base_{table_hwm(table):07d}")) == [
        "_metadata_acid", "_orc_acid_version", "bucket_00000", "bucket_00001"]
    assert table.hive_rows(hive_ref, bucket_count=2) == after
    _check_newer_hives(table, newer_hives, after, "after the major compaction")
    assert len(segmented) == 2, "the minor and major compactions did not write segments"
    table.vacuum()
    assert not os.path.exists(f"{path}/000000_0")
    assert table.ours() == before


def table_hwm(table: ModelTable) -> int:
    return max(int(n[5:]) for n in os.listdir(table.path) if n.startswith("base_"))


@pytest.mark.parametrize("far", [False, True])
def test_nanosecond_timestamps_are_copied_whole(hive_ref, tmp_path, far, segmented,  # noqa: F811
                                                caplog):
    """Hive writes timestamps with nanoseconds; a compaction copies them whole (a read for Spark
    keeps microseconds), and Hive 2.3 reads the compacted table as it read the original. When a
    file of the bucket holds a value beyond the nanosecond range (year 9999), that bucket is
    copied in microseconds instead (documented): written in segments, only the first segment
    meets that file, so the segments cannot be joined and the bucket is written again whole."""
    from spark_hive_acid.catalog.path import PathTable
    from spark_hive_acid.compaction.runner import compact

    cols = [("id", "bigint"), ("ts", "timestamp")]
    path = tmp_path / "t"
    first = [(1, "2020-01-02 03:04:05.123456789"), (2, "1999-12-31 23:59:59.000000001"),
             (3, "9999-12-31 23:59:59.5" if far else "2262-04-11 23:47:16.854775807")]
    hive_ref.write(path, cols, txn=1, inserts=first)
    hive_ref.write(path, cols, txn=2, inserts=[(4, "2001-01-01 00:00:00.999999999")])
    hive_ref.write(path, cols, txn=3, deletes=[(1, 0, 0)])
    save_layout(LocalFileSystem(), str(path), TableLayout(columns=cols))
    before = sorted(hive_ref.read(path, cols))
    assert [v for _, v in before][0] == (2, "1999-12-31 23:59:59.000000001")
    compact(PathTable(str(path)), "major", parallelism=3)
    if far:
        before = [(rid, (i, _micros(ts))) for rid, (i, ts) in before]
    assert sorted(hive_ref.read(path, cols)) == before
    again = "writing it again in one task (its segments hold timestamps of different precisions)"
    assert (again in caplog.text) == far
    assert segmented == ([] if far else [2])


def _micros(ts: str) -> str:
    """Hive's text form of ``ts`` with its fraction cut to microseconds."""
    whole, _, frac = ts.partition(".")
    frac = frac[:6].rstrip("0")
    return f"{whole}.{frac}" if frac else whole
