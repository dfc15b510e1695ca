"""ROW__ID columns proven by stripe statistics are not decoded, and the rows and row ids read are
exactly those of decoding them (the oracle: the events written, minus the deletes, in Python)."""
from __future__ import annotations

import pytest

from acid_files import base_name, bp, delta_name, deletes, inserts, stripe_row_counts, write_acid_file
from spark_hive_acid.read import reader
from spark_hive_acid.direct import read_table

KEYS = ("originalTransaction", "bucket", "rowId")


@pytest.fixture
def decoded(monkeypatch):
    """Records, per file and stripe, which ACID key columns were decoded."""
    seen: dict[tuple[str, int], set[str]] = {}
    original = reader.TaskReader._read_stripe

    def spy(self, orc, s, stripe, columns):
        seen[(s.path.rsplit("/", 2)[-2], stripe)] = {c for c in columns if c in KEYS}
        return original(self, orc, s, stripe, columns)

    monkeypatch.setattr(reader.TaskReader, "_read_stripe", spy)
    monkeypatch.setattr(reader, "ASSEMBLY_ROWS", 333)  # several chunks per stripe: row id offsets
    return seen


def _events_table(tmp_path):
    table = tmp_path / "t"
    rows = [(i, f"r{i}") for i in range(3000)]
    # a compacted base: write id 1 with gaps in its row ids (deleted rows compacted away), then
    # write id 2; several stripes, some with one write id, one spanning both
    base = ([e for e in inserts(1, bp(0), rows[:2000]) if e[3] % 3] +
            inserts(2, bp(0), rows[2000:2600], first_row_id=0))
    write_acid_file(table / base_name(2) / "bucket_00000", events=base, stripe_size=1,
                    batch_size=400)
    # an insert delta: consecutive row ids, several stripes
    delta = inserts(3, bp(0), rows[:2500], first_row_id=0)
    write_acid_file(table / delta_name(3, 3, 0) / "bucket_00000", events=delta, stripe_size=1,
                    batch_size=500)
    dead = {(1, bp(0), r) for r in range(1, 2000, 7) if r % 3} | {(2, bp(0), r) for r in range(5, 600, 11)} \
        | {(3, bp(0), r) for r in range(0, 2500, 13)}
    write_acid_file(table / f"delete_delta_{4:07d}_{4:07d}_0000" / "bucket_00000",
                    events=deletes(4, dead), stripe_size=1, batch_size=100)
    expected = {(e[1], e[2], e[3], e[5][0]) for e in base + delta} - \
        {(w, b, r, row[0]) for (_, w, b, r, _, row) in base + delta if (w, b, r) in dead}
    return table, expected, len(stripe_row_counts((table / base_name(2) / "bucket_00000").read_bytes()))


def test_known_keys_are_not_decoded_and_rows_match(tmp_path, decoded):
    table, expected, base_stripes = _events_table(tmp_path)
    assert base_stripes >= 4
    got = read_table(str(table), includeRowId=True)
    ids = got.column("row__id").to_pylist()
    result = {(k["writeId"], k["bucketId"], k["rowId"], a) for k, a in zip(ids, got.column("a").to_pylist())}
    assert len(ids) == len(result) == len(expected)
    assert result == expected

    delta_stripes = {k: v for k, v in decoded.items() if k[0].startswith("delta_")}
    assert len(delta_stripes) >= 3 and all(v == set() for v in delta_stripes.values())
    base = [v for k, v in sorted(decoded.items()) if k[0].startswith("base_")]
    assert {"rowId"} in base  # one write id, gapped row ids: only the row ids are decoded
    assert set(KEYS) in base  # the stripe where write id 1 ends and 2 begins: all three


def test_without_deletes_or_row_id_no_key_is_read(tmp_path, decoded):
    table = tmp_path / "t"
    write_acid_file(table / delta_name(1, 1, 0) / "bucket_00000",
                    events=inserts(1, bp(0), [(i, "x") for i in range(1000)]), stripe_size=1,
                    batch_size=250)
    assert read_table(str(table)).column("a").to_pylist() == list(range(1000))
    assert decoded and all(v == set() for v in decoded.values())


def test_only_row_id_requested_from_known_keys(tmp_path, decoded):
    """columns=row__id on a delta: every key comes from statistics; the row count from the
    cheapest column."""
    table = tmp_path / "t"
    write_acid_file(table / delta_name(7, 7, 0) / "bucket_00001",
                    events=inserts(7, bp(1), [(i, "x") for i in range(900)], first_row_id=100),
                    stripe_size=1, batch_size=300)
    got = read_table(str(table), columns="row__id").column("row__id").to_pylist()
    assert got == [{"writeId": 7, "bucketId": bp(1), "rowId": 100 + i} for i in range(900)]
    assert all(v == set() for v in decoded.values())


def test_deletes_on_proven_key_ranges_without_row_ids(tmp_path, decoded, monkeypatch):
    """Without ROW__IDs in the output, stripes whose keys are a proven range look their deletes
    up by range (no key arrays); the surviving rows must be exactly the oracle's."""
    from collections import Counter

    from spark_hive_acid.read.delete_events import DeleteEventSet

    calls = []
    original = DeleteEventSet.deleted_range_mask

    def spy(self, *args):
        calls.append(args)
        return original(self, *args)

    monkeypatch.setattr(DeleteEventSet, "deleted_range_mask", spy)
    table, expected, _ = _events_table(tmp_path)
    got = read_table(str(table)).column("a").to_pylist()
    assert Counter(got) == Counter(a for (_, _, _, a) in expected)
    assert len(calls) >= 3  # the delta's stripes and the base's one-write-id, gap-free ones


def test_zero_column_read_counts_survivors_on_every_key_path(tmp_path, monkeypatch):
    """No output column at all (a ``count()``): proven ranges, gapped row ids and mixed stripes
    still apply their deletes, and the ``row`` struct is never decoded."""
    from spark_hive_acid.catalog import open_scan

    read: set[str] = set()
    original = reader.TaskReader._read_stripe

    def spy(self, orc, s, stripe, columns):
        read.update(columns)
        return original(self, orc, s, stripe, columns)

    monkeypatch.setattr(reader.TaskReader, "_read_stripe", spy)
    table, expected, _ = _events_table(tmp_path)
    got = open_scan({"path": str(table)}).to_arrow(columns=[])
    assert got.num_columns == 0
    assert got.num_rows == len(expected)
    assert read and "row" not in read
