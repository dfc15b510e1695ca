"""The reader on every directory layout Hive writes (hive-acid-format.md §2, §4, §5, §6, §9, §10).

Tables are built file by file with pyorc (tests/acid_files.py), never with the project's writer,
and every expected row (and ROW__ID) is written out by hand from the spec.
"""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from acid_files import (
    ROW_SCHEMA, base_name, bp, bucket_name, delta_name, deletes, inserts, txns, write_acid_file,
    write_ids, write_flush_length, write_metadata_acid, write_orc_file, write_parquet_file,
    write_text_file,
)
from spark_hive_acid.exceptions import CorruptFileError, NotEnoughHistoryError
from spark_hive_acid.io.filesystem import LocalFileSystem
from spark_hive_acid.catalog import open_scan
from spark_hive_acid.direct import read_table

ALL_TXNS = txns(1000)


# --- helpers ----------------------------------------------------------------------------------------
def rows(table: pa.Table) -> list[tuple]:
    """The data rows, sorted (reading order is not part of the contract)."""
    cols = [c for c in table.column_names if c != "row__id"]
    return sorted(tuple(r[c] for c in cols) for r in table.to_pylist())


def rows_with_ids(table: pa.Table) -> list[tuple]:
    """``((writeId, bucketId, rowId), *data)`` per row, sorted by ROW__ID."""
    out = []
    for r in table.to_pylist():
        rid = r["row__id"]
        out.append(((rid["writeId"], rid["bucketId"], rid["rowId"]),)
                   + tuple(v for k, v in r.items() if k != "row__id"))
    return sorted(out)


def read(path: Path, **options) -> pa.Table:
    return read_table(str(path), **options)


def ins(table: Path, dirname: str, write_id: int, data: list[tuple], bucket: int = 0,
        stmt: int = 0, first_row_id: int = 0, row_schema: str = ROW_SCHEMA, **kw) -> Path:
    """``dirname/bucket_N`` holding insert events of one statement (bp(N, stmt))."""
    return write_acid_file(table / dirname / bucket_name(bucket), row_schema,
                           inserts(write_id, bp(bucket, stmt), data, first_row_id), **kw)


def dele(table: Path, dirname: str, current: int, keys: list[tuple[int, int, int]],
         bucket: int = 0, row_schema: str = ROW_SCHEMA, **kw) -> Path:
    """``dirname/bucket_N`` holding delete events (full event schema, null rows)."""
    return write_acid_file(table / dirname / bucket_name(bucket), row_schema,
                           deletes(current, keys), **kw)


@pytest.fixture(autouse=True, params=["sorted", "reversed"])
def listing_order(request, monkeypatch):
    """Run every test with directory listings in name order and in reverse name order: HDFS and
    object stores list sorted, a local disk in any order, and selection must not depend on it."""
    plain = LocalFileSystem.list_dir

    def ordered(self, path):
        return sorted(plain(self, path), key=lambda f: f.name, reverse=request.param == "reversed")

    monkeypatch.setattr(LocalFileSystem, "list_dir", ordered)
    return request.param


@pytest.fixture
def t(tmp_path: Path) -> Path:
    p = tmp_path / "t"
    p.mkdir()
    return p


# --- spec §4 worked example -------------------------------------------------------------------------
def test_spec_worked_example(t):
    # compactor txns 120 and 130 committed; WL: HWM 13, 12 open, 13 aborted
    ins(t, base_name(5, 120), 5, [(1, "base5"), (2, "base5")])
    write_metadata_acid(t / base_name(5, 120))
    ins(t, base_name(10), 10, [(10, "base10"), (11, "base10")])
    ins(t, delta_name(6, 8, visibility_txn=130), 6, [(6, "d6_8")])
    ins(t, delta_name(6, 6, 0), 6, [(60, "d6")])
    # obsolete (7 <= base 10): must not delete base_10's first row even though the key matches
    dele(t, delta_name(7, 7, 0, delete=True), 7, [(10, bp(0), 0)])
    ins(t, delta_name(11, 11, 0), 11, [(110, "d11s0"), (111, "d11s0")])
    dele(t, delta_name(11, 11, 1, delete=True), 11, [(10, bp(0), 1), (11, bp(0), 1)])
    ins(t, delta_name(11, 11, 1), 11, [(112, "d11s1")], stmt=1)
    ins(t, delta_name(12, 12, 0), 12, [(120, "open")])
    ins(t, delta_name(13, 13, 0), 13, [(130, "aborted")])

    got = read(t, validWriteIds="db.t:13:12:12:13", validTxns=txns(200), includeRowId=True)
    assert got.column_names == ["row__id", "a", "b"]
    assert rows_with_ids(got) == [
        ((10, bp(0), 0), 10, "base10"),
        ((11, bp(0), 0), 110, "d11s0"),
        ((11, bp(0, 1), 0), 112, "d11s1"),
    ]


# --- base selection ---------------------------------------------------------------------------------
@pytest.mark.parametrize("hwm, expected", [
    (5, [(5, "base5")]),
    (4, [(3, "base3")]),
    (3, [(3, "base3")]),
    (2, [(1, "base1")]),
])
def test_highest_valid_base_wins(t, hwm, expected):
    ins(t, base_name(1), 1, [(1, "base1")])
    ins(t, base_name(3), 3, [(3, "base3")])
    ins(t, base_name(5), 5, [(5, "base5")])
    assert rows(read(t, validWriteIds=write_ids(hwm), validTxns=ALL_TXNS)) == expected


def _compacted_base_table(t: Path) -> None:
    ins(t, delta_name(1, 1, 0), 1, [(1, "delta1")])
    ins(t, delta_name(2, 2, 0), 2, [(2, "delta2")])
    # major compaction by txn 150: same ROW__IDs, marked contents so the test sees the source
    write_acid_file(t / base_name(2, 150) / bucket_name(0), ROW_SCHEMA,
                    inserts(1, bp(0), [(1, "compacted")]) + inserts(2, bp(0), [(2, "compacted")]))
    ins(t, delta_name(3, 3, 0), 3, [(3, "delta3")])


@pytest.mark.parametrize("valid_txns", [txns(200, open_ids=[150]), txns(200, aborted=[150]),
                                        txns(149)])
def test_vT_base_invisible_until_compactor_txn_commits(t, valid_txns):
    _compacted_base_table(t)
    assert rows(read(t, validWriteIds=write_ids(3), validTxns=valid_txns)) == [
        (1, "delta1"), (2, "delta2"), (3, "delta3")]


def test_vT_base_visible_once_committed(t):
    _compacted_base_table(t)
    assert rows(read(t, validWriteIds=write_ids(3), validTxns=txns(200))) == [
        (1, "compacted"), (2, "compacted"), (3, "delta3")]


def test_compacted_base_beats_iow_base_with_same_write_id(t):
    ins(t, base_name(5), 5, [(5, "iow")])
    write_acid_file(t / base_name(5, 150) / bucket_name(0), ROW_SCHEMA,
                    inserts(5, bp(0), [(5, "compacted")]))
    assert rows(read(t, validWriteIds=write_ids(5), validTxns=txns(200))) == [(5, "compacted")]
    # while the compactor's txn is open only the IOW base is usable
    assert rows(read(t, validWriteIds=write_ids(5), validTxns=txns(200, open_ids=[150]))) == [
        (5, "iow")]


def test_metadata_acid_marks_a_base_compacted(t):
    """A Hive 3 compactor base is ``base_W`` + ``_metadata_acid``; it is judged with
    ``isValidBase`` (W < minOpen), an IOW base with ``isWriteIdValid``."""
    ins(t, base_name(5), 5, [(5, "b5")])
    snapshot = write_ids(6, open_ids=[4])  # 4 still open: history below 5 is not complete
    # without the marker: an IOW base of the committed write 5 is usable
    assert rows(read(t, validWriteIds=snapshot, validTxns=ALL_TXNS)) == [(5, "b5")]
    write_metadata_acid(t / base_name(5))
    with pytest.raises(NotEnoughHistoryError, match="ACID_NOT_ENOUGH_HISTORY"):
        read(t, validWriteIds=snapshot, validTxns=ALL_TXNS)


def test_metadata_acid_truncated_base_is_an_empty_iow_base(t):
    ins(t, delta_name(1, 1, 0), 1, [(1, "gone")])
    (t / base_name(2)).mkdir()
    write_metadata_acid(t / base_name(2), data_format="truncated")
    ins(t, delta_name(3, 3, 0), 3, [(3, "after")])
    assert rows(read(t, validWriteIds=write_ids(3), validTxns=ALL_TXNS)) == [(3, "after")]


def test_aborted_iow_base_ignored(t):
    ins(t, base_name(3), 3, [(3, "base3")])
    ins(t, delta_name(4, 4, 0), 4, [(4, "d4")])
    ins(t, base_name(5), 5, [(5, "aborted base5")])
    ins(t, delta_name(6, 6, 0), 6, [(6, "d6")])
    assert rows(read(t, validWriteIds=write_ids(6, aborted=[5]), validTxns=ALL_TXNS)) == [
        (3, "base3"), (4, "d4"), (6, "d6")]


def test_open_iow_base_ignored(t):
    """Documented deviation from Hive 4 (state.py): an IOW base whose W == minOpenWriteId is
    still being written, so it is not shown."""
    ins(t, base_name(3), 3, [(3, "base3")])
    ins(t, delta_name(4, 4, 0), 4, [(4, "d4")])
    ins(t, base_name(5), 5, [(5, "open base5")])
    assert rows(read(t, validWriteIds=write_ids(5, open_ids=[5]), validTxns=ALL_TXNS)) == [
        (3, "base3"), (4, "d4")]


def test_deltas_at_or_below_base_are_obsolete(t):
    ins(t, delta_name(1, 1, 0), 1, [(1, "d1")])
    ins(t, base_name(2), 2, [(2, "base2")])
    ins(t, delta_name(2, 2, 0), 2, [(20, "d2 under base")])
    ins(t, delta_name(3, 3, 0), 3, [(3, "d3")])
    assert rows(read(t, validWriteIds=write_ids(3), validTxns=ALL_TXNS)) == [
        (2, "base2"), (3, "d3")]


# --- deltas -----------------------------------------------------------------------------------------
def test_multi_statement_deltas_of_one_write_id_all_read(t):
    ins(t, delta_name(5, 5, 0), 5, [(50, "s0"), (51, "s0")], stmt=0)
    ins(t, delta_name(5, 5, 1), 5, [(52, "s1")], stmt=1)
    ins(t, delta_name(5, 5, 2), 5, [(53, "s2")], stmt=2)
    got = read(t, validWriteIds=write_ids(5), validTxns=ALL_TXNS, includeRowId=True)
    assert rows_with_ids(got) == [
        ((5, bp(0, 0), 0), 50, "s0"),
        ((5, bp(0, 0), 1), 51, "s0"),
        ((5, bp(0, 1), 0), 52, "s1"),
        ((5, bp(0, 2), 0), 53, "s2"),
    ]


def test_minor_compacted_pair_replaces_covered_deltas(t):
    ins(t, delta_name(1, 1, 0), 1, [(1, "r1")])
    ins(t, delta_name(2, 2, 0), 2, [(2, "r2"), (22, "r2b")])
    dele(t, delta_name(3, 3, 0, delete=True), 3, [(2, bp(0), 1)])
    ins(t, delta_name(3, 3, 0), 3, [(3, "r3")])
    # minor compaction output: events copied verbatim (contents marked 'm' for the test)
    write_acid_file(t / delta_name(1, 3) / bucket_name(0), ROW_SCHEMA,
                    inserts(1, bp(0), [(1, "m1")]) + inserts(2, bp(0), [(2, "m2"), (22, "m2b")])
                    + inserts(3, bp(0), [(3, "m3")]))
    dele(t, delta_name(1, 3, delete=True), 3, [(2, bp(0), 1)])
    ins(t, delta_name(4, 4, 0), 4, [(4, "r4")])
    got = read(t, validWriteIds=write_ids(4), validTxns=ALL_TXNS, includeRowId=True)
    assert rows_with_ids(got) == [
        ((1, bp(0), 0), 1, "m1"),
        ((2, bp(0), 0), 2, "m2"),
        ((3, bp(0), 0), 3, "m3"),
        ((4, bp(0), 0), 4, "r4"),
    ]


def test_uncommitted_minor_compaction_ignored(t):
    ins(t, delta_name(1, 1, 0), 1, [(1, "r1")])
    ins(t, delta_name(2, 2, 0), 2, [(2, "r2")])
    write_acid_file(t / delta_name(1, 2, visibility_txn=300) / bucket_name(0), ROW_SCHEMA,
                    inserts(1, bp(0), [(1, "m1")]) + inserts(2, bp(0), [(2, "m2")]))
    assert rows(read(t, validWriteIds=write_ids(2), validTxns=txns(400, open_ids=[300]))) == [
        (1, "r1"), (2, "r2")]
    assert rows(read(t, validWriteIds=write_ids(2), validTxns=txns(400))) == [
        (1, "m1"), (2, "m2")]


def test_aborted_and_open_deltas_skipped(t):
    ins(t, delta_name(1, 1, 0), 1, [(1, "ok1")])
    ins(t, delta_name(2, 2, 0), 2, [(2, "aborted")])
    ins(t, delta_name(3, 3, 0), 3, [(3, "open")])
    ins(t, delta_name(4, 4, 0), 4, [(4, "ok4")])
    ins(t, delta_name(5, 5, 0), 5, [(5, "above hwm")])
    assert rows(read(t, validWriteIds=write_ids(4, open_ids=[3], aborted=[2]),
                     validTxns=ALL_TXNS)) == [(1, "ok1"), (4, "ok4")]


def test_streaming_delta_drops_rows_of_aborted_write_id(t):
    events = (inserts(5, bp(0), [(50, "w5"), (51, "w5")]) + inserts(6, bp(0), [(60, "w6")])
              + inserts(7, bp(0), [(70, "w7")]))
    write_acid_file(t / delta_name(5, 7) / bucket_name(0), ROW_SCHEMA, events)
    got = read(t, validWriteIds=write_ids(7, aborted=[6]), validTxns=ALL_TXNS, includeRowId=True)
    assert rows_with_ids(got) == [
        ((5, bp(0), 0), 50, "w5"),
        ((5, bp(0), 1), 51, "w5"),
        ((7, bp(0), 0), 70, "w7"),
    ]


def test_streaming_delta_drops_rows_of_open_write_id(t):
    events = (inserts(5, bp(0), [(50, "w5")]) + inserts(6, bp(0), [(60, "w6")])
              + inserts(7, bp(0), [(70, "w7")]))
    write_acid_file(t / delta_name(5, 7) / bucket_name(0), ROW_SCHEMA, events)
    assert rows(read(t, validWriteIds=write_ids(7, open_ids=[7], aborted=[6]),
                     validTxns=ALL_TXNS)) == [(50, "w5")]


def test_empty_delta_dir_contributes_nothing(t):
    ins(t, delta_name(1, 1, 0), 1, [(1, "d1")])
    (t / delta_name(2, 2, 0)).mkdir()
    (t / delta_name(2, 2, 0) / "_orc_acid_version").write_bytes(b"2")
    assert rows(read(t, validWriteIds=write_ids(2), validTxns=ALL_TXNS)) == [(1, "d1")]


def test_snapshot_before_first_write_reads_empty(t):
    """Only an open write's delta exists: the snapshot sees nothing (Hive returns no rows)."""
    ins(t, delta_name(1, 1, 0), 1, [(1, "open")])
    got = read(t, validWriteIds=write_ids(1, open_ids=[1]), validTxns=ALL_TXNS)
    assert got.num_rows == 0
    assert got.column_names == ["a", "b"]


# --- delete events ----------------------------------------------------------------------------------
def test_delete_matches_full_key_only(t):
    ins(t, delta_name(1, 1, 0), 1, [(1, "a"), (2, "b"), (3, "c"), (4, "d")], bucket=0)
    ins(t, delta_name(1, 1, 0), 1, [(5, "e"), (6, "f")], bucket=1)
    dele(t, delta_name(2, 2, 0, delete=True), 2, [
        (1, bp(0, 0), 1),  # deletes 'b'
        (1, bp(0, 1), 2),  # same rowId but statement 1 in the bucket property: 'c' stays
        (3, bp(0, 0), 3),  # other original write id: 'd' stays
    ], bucket=0)
    dele(t, delta_name(2, 2, 0, delete=True), 2, [(1, bp(1, 0), 0)], bucket=1)  # deletes 'e'
    assert rows(read(t, validWriteIds=write_ids(2), validTxns=ALL_TXNS)) == [
        (1, "a"), (3, "c"), (4, "d"), (6, "f")]


def test_delete_event_needs_valid_current_write_id(t):
    ins(t, delta_name(1, 1, 0), 1, [(1, "a"), (2, "b"), (3, "c")])
    # a streaming delete delta holding write ids 2 and 3; 3 aborted
    write_acid_file(t / delta_name(2, 3, delete=True) / bucket_name(0), ROW_SCHEMA,
                    deletes(2, [(1, bp(0), 0)]) + deletes(3, [(1, bp(0), 1)]))
    assert rows(read(t, validWriteIds=write_ids(3, aborted=[3]), validTxns=ALL_TXNS)) == [
        (2, "b"), (3, "c")]
    assert rows(read(t, validWriteIds=write_ids(3), validTxns=ALL_TXNS)) == [(3, "c")]


@pytest.mark.parametrize("snapshot", [write_ids(3, open_ids=[3]), write_ids(3, aborted=[3]),
                                      write_ids(2)])
def test_delete_delta_of_invisible_write_does_not_apply(t, snapshot):
    ins(t, delta_name(1, 1, 0), 1, [(1, "a"), (2, "b")])
    ins(t, delta_name(2, 2, 0), 2, [(3, "c")])
    dele(t, delta_name(3, 3, 0, delete=True), 3, [(1, bp(0), 0), (2, bp(0), 0)])
    assert rows(read(t, validWriteIds=snapshot, validTxns=ALL_TXNS)) == [
        (1, "a"), (2, "b"), (3, "c")]


def test_v0_bucket_numbers(t):
    """Hive 2 files: the bucket field holds the plain bucket number (BucketCodec V0)."""
    write_acid_file(t / delta_name(1, 1) / bucket_name(1), ROW_SCHEMA,
                    inserts(1, 1, [(1, "a"), (2, "b"), (3, "c")]))
    write_acid_file(t / delta_name(2, 2, delete=True) / bucket_name(1), ROW_SCHEMA,
                    deletes(2, [(1, 1, 1)]))
    got = read(t, validWriteIds=write_ids(2), validTxns=ALL_TXNS, includeRowId=True)
    assert rows_with_ids(got) == [((1, 1, 0), 1, "a"), ((1, 1, 2), 3, "c")]


def test_delete_delta_pruning_by_statement(t):
    ins(t, delta_name(5, 5, 0), 5, [(1, "p"), (2, "q")], stmt=0)
    ins(t, delta_name(5, 5, 1), 5, [(3, "r"), (4, "s")], stmt=1)
    # statement 1's delete delta: hits statement 0's rows, never its own statement's rows
    dele(t, delta_name(5, 5, 1, delete=True), 5, [(5, bp(0, 0), 0), (5, bp(0, 1), 1)])
    assert rows(read(t, validWriteIds=write_ids(5), validTxns=ALL_TXNS)) == [
        (2, "q"), (3, "r"), (4, "s")]


def test_update_split_into_delete_and_insert(t):
    ins(t, delta_name(1, 1, 0), 1, [(1, "old"), (2, "keep")])
    dele(t, delta_name(2, 2, 0, delete=True), 2, [(1, bp(0), 0)])
    ins(t, delta_name(2, 2, 0), 2, [(1, "new")])
    got = read(t, validWriteIds=write_ids(2), validTxns=ALL_TXNS, includeRowId=True)
    assert rows_with_ids(got) == [((1, bp(0), 1), 2, "keep"), ((2, bp(0), 0), 1, "new")]
    # before write 2 commits the old value is visible
    assert rows(read(t, validWriteIds=write_ids(2, open_ids=[2]), validTxns=ALL_TXNS)) == [
        (1, "old"), (2, "keep")]


# --- original files ---------------------------------------------------------------------------------
def _originals(t: Path) -> None:
    write_orc_file(t / "000000_0", rows=[(1, "a0"), (2, "a1")])
    write_orc_file(t / "000000_0_copy_1", rows=[(3, "c1")])
    write_orc_file(t / "000000_0_copy_10", rows=[(4, "c10")])
    write_orc_file(t / "000000_0_copy_2", rows=[(5, "c2a"), (6, "c2b")])
    write_orc_file(t / "000001_0", rows=[(7, "b0"), (8, "b1")])
    write_orc_file(t / "HIVE_UNION_SUBDIR_1" / "000000_0", rows=[(9, "u")])


def test_original_files_get_synthetic_row_ids(t):
    _originals(t)
    got = read(t, includeRowId=True)
    # bucket 0 numbered across files in path order: 000000_0 < _copy_1 < _copy_10 < _copy_2
    # < HIVE_UNION_SUBDIR_1/000000_0; bucket 1 numbered separately
    assert rows_with_ids(got) == [
        ((0, bp(0), 0), 1, "a0"),
        ((0, bp(0), 1), 2, "a1"),
        ((0, bp(0), 2), 3, "c1"),
        ((0, bp(0), 3), 4, "c10"),
        ((0, bp(0), 4), 5, "c2a"),
        ((0, bp(0), 5), 6, "c2b"),
        ((0, bp(0), 6), 9, "u"),
        ((0, bp(1), 0), 7, "b0"),
        ((0, bp(1), 1), 8, "b1"),
    ]


def test_deletes_apply_to_original_files(t):
    _originals(t)
    dele(t, delta_name(1, 1, 0, delete=True), 1, [(0, bp(0), 3), (0, bp(0), 6)], bucket=0)
    dele(t, delta_name(1, 1, 0, delete=True), 1, [(0, bp(1), 0)], bucket=1)
    ins(t, delta_name(1, 1, 0), 1, [(10, "new")])
    got = read(t, validWriteIds=write_ids(1), validTxns=ALL_TXNS, includeRowId=True)
    assert rows_with_ids(got) == [
        ((0, bp(0), 0), 1, "a0"),
        ((0, bp(0), 1), 2, "a1"),
        ((0, bp(0), 2), 3, "c1"),
        ((0, bp(0), 4), 5, "c2a"),
        ((0, bp(0), 5), 6, "c2b"),
        ((0, bp(1), 1), 8, "b1"),
        ((1, bp(0), 0), 10, "new"),
    ]


def test_originals_ignored_once_a_base_exists(t):
    _originals(t)
    # major compaction of the converted table: rows keep their synthetic ROW__IDs
    write_acid_file(t / base_name(1) / bucket_name(0), ROW_SCHEMA,
                    inserts(0, bp(0), [(1, "a0")]))
    write_metadata_acid(t / base_name(1))
    got = read(t, validWriteIds=write_ids(1), validTxns=ALL_TXNS, includeRowId=True)
    assert rows_with_ids(got) == [((0, bp(0), 0), 1, "a0")]


def test_original_named_file_with_acid_schema_is_read_as_acid(t):
    # e.g. a base whose file has a task-style name: the schema, not the name, decides
    write_acid_file(t / base_name(3) / "000000_0", ROW_SCHEMA,
                    inserts(2, bp(0, 1), [(1, "x"), (2, "y")], first_row_id=5, current=2))
    got = read(t, validWriteIds=write_ids(3), validTxns=ALL_TXNS, includeRowId=True)
    assert rows_with_ids(got) == [((2, bp(0, 1), 5), 1, "x"), ((2, bp(0, 1), 6), 2, "y")]


def test_lower_case_acid_field_names(t):
    """Hive 3.1's compactor wrote the ACID columns in lower case."""
    write_acid_file(t / base_name(2) / bucket_name(0), ROW_SCHEMA,
                    inserts(1, bp(0), [(1, "a"), (2, "b")]), lowercase_names=True)
    write_metadata_acid(t / base_name(2))
    dele(t, delta_name(3, 3, delete=True), 3, [(1, bp(0), 0)], lowercase_names=True)
    ins(t, delta_name(3, 3), 3, [(3, "c")], lowercase_names=True)
    got = read(t, validWriteIds=write_ids(3), validTxns=ALL_TXNS, includeRowId=True)
    assert rows_with_ids(got) == [((1, bp(0), 1), 2, "b"), ((3, bp(0), 0), 3, "c")]


# --- raw (LOAD DATA) deltas -------------------------------------------------------------------------
def _load_data_table(t: Path) -> None:
    ins(t, delta_name(1, 1, 0), 1, [(1, "acid")])
    raw = t / delta_name(7, 7, 0)
    write_orc_file(raw / "000000_0", rows=[(70, "l0"), (71, "l1")])
    write_orc_file(raw / "000000_0_copy_1", rows=[(72, "l2")])
    write_orc_file(raw / "000001_0", rows=[(73, "m0")])


def test_load_data_delta_gets_its_write_id(t):
    _load_data_table(t)
    got = read(t, validWriteIds=write_ids(7), validTxns=ALL_TXNS, includeRowId=True)
    assert rows_with_ids(got) == [
        ((1, bp(0), 0), 1, "acid"),
        ((7, bp(0), 0), 70, "l0"),
        ((7, bp(0), 1), 71, "l1"),
        ((7, bp(0), 2), 72, "l2"),
        ((7, bp(1), 0), 73, "m0"),
    ]


def test_load_data_delta_statement_id_in_bucket_property(t):
    """§6.5: a raw file's synthetic bucket property is V1.encode(N, the delta's statement id)."""
    ins(t, delta_name(7, 7, 0), 7, [(1, "insert stmt 0")])
    write_orc_file(t / delta_name(7, 7, 1) / "000002_0", rows=[(2, "load stmt 1")])
    dele(t, delta_name(8, 8, 0, delete=True), 8, [(7, bp(2, 0), 0)], bucket=2)  # wrong stmt bits
    got = read(t, validWriteIds=write_ids(8), validTxns=ALL_TXNS, includeRowId=True)
    assert rows_with_ids(got) == [((7, bp(0, 0), 0), 1, "insert stmt 0"),
                                  ((7, bp(2, 1), 0), 2, "load stmt 1")]


@pytest.mark.parametrize("snapshot", [write_ids(6), write_ids(7, open_ids=[7]),
                                      write_ids(7, aborted=[7])])
def test_load_data_delta_visible_only_when_valid(t, snapshot):
    _load_data_table(t)
    assert rows(read(t, validWriteIds=snapshot, validTxns=ALL_TXNS)) == [(1, "acid")]


def test_deletes_apply_to_load_data_rows(t):
    _load_data_table(t)
    dele(t, delta_name(8, 8, 0, delete=True), 8, [(7, bp(0), 2)], bucket=0)
    dele(t, delta_name(8, 8, 0, delete=True), 8, [(7, bp(1), 0)], bucket=1)
    assert rows(read(t, validWriteIds=write_ids(8), validTxns=ALL_TXNS)) == [
        (1, "acid"), (70, "l0"), (71, "l1")]


# --- hidden names and side files --------------------------------------------------------------------
def test_hidden_names_ignored(t):
    ins(t, delta_name(1, 1, 0), 1, [(1, "visible")])
    # staging / temporary output that a non-hidden name would turn into originals or deltas
    write_orc_file(t / "_tmp.x" / "000000_0", rows=[(90, "tmp")])
    write_orc_file(t / ".hive-staging_hive_2024-01-01_00-00-00_000_1" / "-ext-10000" / "000000_0",
                   rows=[(91, "staging")])
    ins(t, "_" + delta_name(2, 2, 0), 2, [(92, "hidden delta")])
    ins(t, "." + delta_name(2, 2, 1), 2, [(93, "hidden delta")], stmt=1)
    write_text_file(t / "_SUCCESS", "done")
    write_text_file(t / ".000000_0.crc", "crc of a file that is not there")
    write_text_file(t / delta_name(1, 1, 0) / ".bucket_00000.crc", "crc bytes")
    write_text_file(t / delta_name(1, 1, 0) / "_tmp_bucket_00000", "partial")
    assert rows(read(t, validWriteIds=write_ids(2), validTxns=ALL_TXNS)) == [(1, "visible")]


@pytest.mark.parametrize("lengths", [lambda n: [n], lambda n: [n // 2, n]])
def test_flush_length_side_file_honoured(t, lengths):
    path = write_acid_file(t / delta_name(1, 3) / bucket_name(0), ROW_SCHEMA,
                           inserts(1, bp(0), [(1, "w1")]) + inserts(2, bp(0), [(2, "w2")]))
    committed = path.stat().st_size
    with open(path, "ab") as f:  # the streaming writer's uncommitted tail
        f.write(b"\x00garbage of an unfinished stripe" * 7)
    write_flush_length(path, lengths(committed))
    got = read(t, validWriteIds=write_ids(3, open_ids=[3]), validTxns=ALL_TXNS, includeRowId=True)
    assert rows_with_ids(got) == [((1, bp(0), 0), 1, "w1"), ((2, bp(0), 0), 2, "w2")]


# --- insert-only (MM) tables ------------------------------------------------------------------------
MM = {"transactionalProperties": "insert_only"}


def test_insert_only_orc(t):
    write_orc_file(t / "000000_0", rows=[(0, "original")])
    write_orc_file(t / delta_name(1, 1, 0) / "000000_0", rows=[(1, "d1")])
    write_orc_file(t / delta_name(1, 1, 0) / "000001_0", rows=[(11, "d1")])
    write_orc_file(t / delta_name(2, 2, 0) / "000000_0", rows=[(2, "aborted")])
    write_orc_file(t / delta_name(3, 3, 0) / "000000_0", rows=[(3, "open")])
    write_orc_file(t / delta_name(4, 4, 0) / "HIVE_UNION_SUBDIR_1" / "000000_0", rows=[(4, "u1")])
    write_orc_file(t / delta_name(4, 4, 0) / "HIVE_UNION_SUBDIR_2" / "000000_0", rows=[(44, "u2")])
    write_text_file(t / delta_name(4, 4, 0) / "_SUCCESS", "x")
    assert rows(read(t, validWriteIds=write_ids(4, open_ids=[3], aborted=[2]),
                     validTxns=ALL_TXNS, **MM)) == [(1, "d1"), (4, "u1"), (11, "d1"), (44, "u2")]


def test_insert_only_snapshot_before_first_write_reads_empty(t):
    write_orc_file(t / delta_name(1, 1, 0) / "000000_0", rows=[(1, "open")])
    got = read(t, validWriteIds=write_ids(1, open_ids=[1]), validTxns=ALL_TXNS, **MM)
    assert got.num_rows == 0
    assert got.column_names == ["a", "b"]


def test_insert_only_base(t):
    write_orc_file(t / "000000_0", rows=[(0, "original")])
    write_orc_file(t / delta_name(1, 1, 0) / "000000_0", rows=[(1, "d1")])
    write_orc_file(t / base_name(2) / "000000_0", rows=[(2, "iow")])
    write_orc_file(t / delta_name(3, 3, 0) / "000000_0", rows=[(3, "d3")])
    assert rows(read(t, validWriteIds=write_ids(3), validTxns=ALL_TXNS, **MM)) == [
        (2, "iow"), (3, "d3")]
    assert rows(read(t, validWriteIds=write_ids(1), validTxns=ALL_TXNS, **MM)) == [(1, "d1")]


def test_insert_only_parquet(t):
    def pq(path, a, b):
        write_parquet_file(path, {"a": a, "b": b}, {"a": pa.int32(), "b": pa.string()})

    pq(t / "000000_0", [0], ["original"])
    pq(t / delta_name(1, 1, 0) / "000000_0", [1, 2], ["d1", "d1"])
    pq(t / delta_name(2, 2, 0) / "000000_0", [3], ["aborted"])
    pq(t / base_name(3) / "000000_0", [4], ["base3"])
    pq(t / delta_name(4, 4, 0) / "000000_0", [5], ["d4"])
    pq(t / delta_name(5, 5, 0) / "000000_0", [6], ["above hwm"])
    assert rows(read(t, validWriteIds=write_ids(2, aborted=[2]), validTxns=ALL_TXNS, **MM)) == [
        (1, "d1"), (2, "d1")]
    assert rows(read(t, validWriteIds=write_ids(4), validTxns=ALL_TXNS, **MM)) == [
        (4, "base3"), (5, "d4")]


# --- schema evolution -------------------------------------------------------------------------------
def test_added_column_reads_null_in_older_files(t):
    ins(t, delta_name(1, 1, 0), 1, [(1, "old")])
    ins(t, delta_name(2, 2, 0), 2, [(2, "new", 2.5)], row_schema="struct<a:int,b:string,c:double>")
    got = read(t, validWriteIds=write_ids(2), validTxns=ALL_TXNS)
    assert got.column_names == ["a", "b", "c"]
    assert got.schema.field("c").type == pa.float64()
    assert rows(got) == [(1, "old", None), (2, "new", 2.5)]


def test_int_widened_to_bigint(t):
    ins(t, delta_name(1, 1, 0), 1, [(1, "int")])
    ins(t, delta_name(2, 2, 0), 2, [(2**40, "bigint")], row_schema="struct<a:bigint,b:string>")
    got = read(t, validWriteIds=write_ids(2), validTxns=ALL_TXNS)
    assert got.schema.field("a").type == pa.int64()
    assert rows(got) == [(1, "int"), (2**40, "bigint")]


# --- stripes and splits -----------------------------------------------------------------------------
def test_split_by_stripes_gives_same_rows_and_row_ids(t):
    n = 1000
    ins(t, delta_name(1, 1, 0), 1, [(i, f"r{i}") for i in range(n)], stripe_size=1, batch_size=10)
    dele(t, delta_name(2, 2, 0, delete=True), 2, [(1, bp(0), 3), (1, bp(0), 500), (1, bp(0), 999)])
    opts = {"path": str(t), "validWriteIds": write_ids(2), "validTxns": ALL_TXNS,
            "includeRowId": "true"}
    split = open_scan({**opts, "splitSize": "1"})
    assert len(split.tasks()) > 1
    assert any(s.first_stripe > 0 for task in split.tasks() for s in task.slices)
    expected = [((1, bp(0), i), i, f"r{i}") for i in range(n) if i not in (3, 500, 999)]
    assert rows_with_ids(split.to_arrow()) == expected
    assert rows_with_ids(open_scan(opts).to_arrow()) == expected


def test_split_original_file_keeps_synthetic_row_ids(t):
    n = 600
    write_orc_file(t / "000000_0", rows=[(i, f"o{i}") for i in range(n)], stripe_size=1,
                   batch_size=10)
    write_orc_file(t / "000000_0_copy_1", rows=[(n, "copy")])
    dele(t, delta_name(1, 1, 0, delete=True), 1, [(0, bp(0), 7), (0, bp(0), 450), (0, bp(0), n)])
    opts = {"path": str(t), "validWriteIds": write_ids(1), "validTxns": ALL_TXNS,
            "includeRowId": "true", "splitSize": "1"}
    scan = open_scan(opts)
    assert len(scan.tasks()) > 1
    expected = [((0, bp(0), i), i, f"o{i}") for i in range(n) if i not in (7, 450)]
    assert rows_with_ids(scan.to_arrow()) == expected


# --- history ----------------------------------------------------------------------------------------
def test_not_enough_history(t):
    write_acid_file(t / base_name(10) / bucket_name(0), ROW_SCHEMA,
                    inserts(3, bp(0), [(3, "c")]))
    write_metadata_acid(t / base_name(10))
    with pytest.raises(NotEnoughHistoryError, match="ACID_NOT_ENOUGH_HISTORY"):
        read(t, validWriteIds=write_ids(5), validTxns=ALL_TXNS)
    assert rows(read(t, validWriteIds=write_ids(10), validTxns=ALL_TXNS)) == [(3, "c")]


def test_not_enough_history_with_vT_base(t):
    write_acid_file(t / base_name(10, 100) / bucket_name(0), ROW_SCHEMA,
                    inserts(3, bp(0), [(3, "c")]))
    with pytest.raises(NotEnoughHistoryError, match="ACID_NOT_ENOUGH_HISTORY"):
        read(t, validWriteIds=write_ids(12, open_ids=[8]), validTxns=ALL_TXNS)


def test_older_usable_base_avoids_history_error(t):
    ins(t, base_name(4), 4, [(4, "iow4")])
    ins(t, delta_name(5, 5, 0), 5, [(5, "d5")])
    write_acid_file(t / base_name(10, 100) / bucket_name(0), ROW_SCHEMA,
                    inserts(4, bp(0), [(4, "iow4")]) + inserts(5, bp(0), [(5, "d5")]))
    assert rows(read(t, validWriteIds=write_ids(5), validTxns=ALL_TXNS)) == [
        (4, "iow4"), (5, "d5")]


# --- more edge cases (spec §6.6, §10) ---------------------------------------------------------------
def test_direct_insert_attempt_suffix(t):
    """Hive 4 direct insert writes ``bucket_N_A``; it is bucket N, for data and deletes alike."""
    write_acid_file(t / delta_name(1, 1, 0) / "bucket_00000_3", ROW_SCHEMA,
                    inserts(1, bp(0), [(1, "a"), (2, "b")]))
    write_acid_file(t / delta_name(2, 2, 0, delete=True) / "bucket_00000_1", ROW_SCHEMA,
                    deletes(2, [(1, bp(0), 0)]))
    assert rows(read(t, validWriteIds=write_ids(2), validTxns=ALL_TXNS)) == [(2, "b")]


@pytest.mark.parametrize("delete", [False, True])
def test_zero_length_bucket_file_fails_the_read_naming_it(t, delete):
    """Issue 25 item 7: a truncated data file is damage, never "no rows" (Hive's writers and ours
    always write at least the ORC footer)."""
    ins(t, delta_name(1, 1, 0), 1, [(1, "a")])
    (t / delta_name(2, 2, 0, delete=delete)).mkdir()
    empty = t / delta_name(2, 2, 0, delete=delete) / bucket_name(0)
    empty.write_bytes(b"")
    with pytest.raises(CorruptFileError, match="empty \\(0 bytes\\)") as e:
        read(t, validWriteIds=write_ids(2), validTxns=ALL_TXNS)
    assert str(empty) in str(e.value)
    # outside the snapshot it is not read at all
    assert rows(read(t, validWriteIds=write_ids(1), validTxns=ALL_TXNS)) == [(1, "a")]


def test_empty_iow_base_with_plain_schema(t):
    """INSERT OVERWRITE of zero rows leaves an empty ORC file, possibly with the row schema."""
    ins(t, delta_name(1, 1, 0), 1, [(1, "gone")])
    write_orc_file(t / base_name(2) / bucket_name(0), rows=[])
    ins(t, delta_name(3, 3, 0), 3, [(3, "after")])
    assert rows(read(t, validWriteIds=write_ids(3), validTxns=ALL_TXNS)) == [(3, "after")]
    assert rows(read(t, validWriteIds=write_ids(2), validTxns=ALL_TXNS)) == []


def test_partitioned_table(t):
    p1, p2, pnull = t / "p=1", t / "p=2", t / "p=__HIVE_DEFAULT_PARTITION__"
    ins(p1, delta_name(1, 1, 0), 1, [(1, "p1"), (2, "p1")])
    ins(p2, delta_name(1, 1, 0), 1, [(1, "p2"), (2, "p2")])
    ins(p2, base_name(2), 2, [(3, "p2 iow")])
    ins(pnull, delta_name(3, 3, 0), 3, [(4, "null part")])
    # same key as p1's first row, but a delete only applies within its own partition
    dele(p2, delta_name(3, 3, 0, delete=True), 3, [(2, bp(0), 0)])
    dele(p1, delta_name(3, 3, 0, delete=True), 3, [(1, bp(0), 1)])
    got = read(t, validWriteIds=write_ids(3), validTxns=ALL_TXNS)
    assert got.column_names == ["a", "b", "p"]
    assert sorted(got.to_pylist(), key=lambda r: (r["a"], r["b"])) == [
        {"a": 1, "b": "p1", "p": 1},
        {"a": 4, "b": "null part", "p": None},
    ]
    assert sorted(rows(read(t, validWriteIds=write_ids(2), validTxns=ALL_TXNS)),
                  key=lambda r: (r[2], r[0])) == [(1, "p1", 1), (2, "p1", 1), (3, "p2 iow", 2)]
