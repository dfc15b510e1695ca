"""The columnar delete-event set against a plain Python set of keys."""
import numpy as np
import pytest

from spark_hive_acid.read.delete_events import DeleteEventSet


def _random_events(rng, n, pairs):
    owid = rng.choice([p[0] for p in pairs], n).astype(np.int64)
    bp = np.array([dict(pairs)[w] for w in owid], dtype=np.int32)
    rid = rng.integers(0, 50_000, n).astype(np.int64)
    return owid, bp, rid


@pytest.mark.parametrize("seed", range(5))
def test_membership_matches_python_set(seed):
    rng = np.random.default_rng(seed)
    pairs = [(2, 536870912), (5, 536936448), (9, 537067522), (0, 3)]
    dw, db, dr = _random_events(rng, 20_000, pairs)
    events = DeleteEventSet.build(dw, db, dr)
    expected = set(zip(dw.tolist(), db.tolist(), dr.tolist()))
    assert len(events) == len(expected)  # duplicates collapse
    qw, qb, qr = _random_events(rng, 30_000, pairs + [(7, 536870912)])
    mask = events.deleted_mask(qw, qb, qr)
    want = np.array([k in expected for k in zip(qw.tolist(), qb.tolist(), qr.tolist())])
    got = np.zeros(len(qr), bool) if mask is None else mask
    assert (got == want).all() and want.any()


def test_full_bucket_property_matters():
    events = DeleteEventSet.build(np.array([2], np.int64), np.array([536870913], np.int32),
                                  np.array([0], np.int64))  # statement 1
    assert events.deleted_mask(np.array([2], np.int64), np.array([536870912], np.int32),
                               np.array([0], np.int64)) is None  # statement 0: not deleted
    assert events.deleted_mask(np.array([2], np.int64), np.array([536870913], np.int32),
                               np.array([0], np.int64)).tolist() == [True]


def test_constant_pair_fast_path_and_empty():
    events = DeleteEventSet.build(np.full(3, 4, np.int64), np.full(3, 536870912, np.int32),
                                  np.array([5, 1, 3], np.int64))
    n = 7
    mask = events.deleted_mask(np.full(n, 4, np.int64), np.full(n, 536870912, np.int32),
                               np.arange(n, dtype=np.int64))
    assert mask.tolist() == [False, True, False, True, False, True, False]
    assert DeleteEventSet.empty().deleted_mask(np.zeros(1, np.int64), np.zeros(1, np.int32),
                                               np.zeros(1, np.int64)) is None


def test_memory_is_at_most_16_bytes_per_event():
    rng = np.random.default_rng(1)
    n = 1_000_000
    events = DeleteEventSet.build(np.full(n, 3, np.int64), np.full(n, 536870912, np.int32),
                                  rng.permutation(n).astype(np.int64))
    assert len(events) == n
    assert events.nbytes / n <= 16


@pytest.mark.parametrize("seed", range(3))
def test_streaming_fallback_equals_in_memory_set(tmp_path, seed):
    """Beyond maxDeleteEventsInMemory the sort-merge path must delete exactly the same rows."""
    from acid_files import bp, delta_name, deletes, inserts, stripe_row_counts, write_acid_file
    from spark_hive_acid.direct import read_table

    rng = np.random.default_rng(seed)
    table = tmp_path / "t"
    n = 3000
    rows = [(int(i), "x" * int(rng.integers(1, 40))) for i in range(n)]
    write_acid_file(table / delta_name(1, 1, 0) / "bucket_00000", "struct<a:int,b:string>",
                    inserts(1, bp(0), rows), stripe_size=1, batch_size=500)
    write_acid_file(table / delta_name(2, 2, 0) / "bucket_00000", "struct<a:int,b:string>",
                    inserts(2, bp(0), rows[:500]), stripe_size=1, batch_size=100)
    expected_deleted = set()
    for w in range(3, 7):
        keys = sorted({(1 if rng.random() < 0.8 else 2, bp(0), int(r))
                       for r in rng.integers(0, 500 if w % 2 else n, 300)})
        keys = [k for k in keys if k[0] == 1 or k[2] < 500]
        expected_deleted |= {(k[0], k[2]) for k in keys}
        write_acid_file(table / f"delete_delta_{w:07d}_{w:07d}_0000" / "bucket_00000",
                        "struct<a:int,b:string>", deletes(w, keys), stripe_size=1, batch_size=64)
    first = (table / delta_name(1, 1, 0) / "bucket_00000").read_bytes()
    assert len(stripe_row_counts(first)) > 3  # the merge really walks several stripes
    in_memory = read_table(str(table), includeRowId=True)
    streamed = read_table(str(table), includeRowId=True, maxDeleteEventsInMemory=1)
    survivors = {(r["writeId"], r["rowId"]) for r in in_memory.column("row__id").to_pylist()}
    assert survivors == {(w, i) for w, m in ((1, n), (2, 500)) for i in range(m)} - expected_deleted
    assert sorted(map(str, streamed.to_pylist())) == sorted(map(str, in_memory.to_pylist()))


@pytest.mark.parametrize("order", ["consecutive", "gaps", "shuffled", "repeats"])
def test_one_group_batches_match_python_set(order):
    """One-(writeId, bucket) batches take a windowed path; every row-id shape must agree."""
    rng = np.random.default_rng(7)
    deleted = np.unique(rng.integers(0, 100_000, 20_000)).astype(np.int64)
    other = np.unique(rng.integers(0, 100_000, 5_000)).astype(np.int64)  # same rowIds, other writeId
    events = DeleteEventSet.build(
        np.concatenate([np.full(len(deleted), 3), np.full(len(other), 4)]).astype(np.int64),
        np.full(len(deleted) + len(other), 536870912, np.int32), np.concatenate([deleted, other]))
    rid = {"consecutive": np.arange(40_000, 60_000),
           "gaps": np.sort(rng.choice(100_000, 20_000, replace=False)),
           "shuffled": rng.permutation(np.arange(40_000, 60_000)),
           "repeats": np.sort(rng.integers(40_000, 60_000, 20_000))}[order].astype(np.int64)
    mask = events.deleted_mask(np.full(len(rid), 3, np.int64), np.full(len(rid), 536870912, np.int32), rid)
    want = np.isin(rid, deleted)
    assert want.any() and not want.all()
    assert (mask == want).all()
    outside = np.arange(200_000, 200_010, dtype=np.int64)  # beyond every deleted rowId: no window
    assert events.deleted_mask(np.full(10, 3, np.int64), np.full(10, 536870912, np.int32), outside) is None
    assert events.deleted_mask(np.array([3], np.int64), np.array([536870912], np.int32),
                               deleted[5:6]).tolist() == [True]


@pytest.mark.parametrize("first, n", [(0, 1), (0, 100_000), (40_000, 20_000), (99_990, 50),
                                      (100_000, 10), (123, 1)])
def test_range_mask_matches_python_set(first, n):
    """Rows proven to be one (writeId, bucket) and a rowId range are looked up without their
    key arrays; the answer must be that of the plain set."""
    rng = np.random.default_rng(11)
    deleted = np.unique(rng.integers(0, 100_000, 20_000)).astype(np.int64)
    other = np.unique(rng.integers(0, 100_000, 5_000)).astype(np.int64)
    events = DeleteEventSet.build(
        np.concatenate([np.full(len(deleted), 3), np.full(len(other), 4)]).astype(np.int64),
        np.full(len(deleted) + len(other), 536870912, np.int32), np.concatenate([deleted, other]))
    dead = set(deleted.tolist())
    want = [r in dead for r in range(first, first + n)]
    mask = events.deleted_range_mask(3, 536870912, first, n)
    assert (mask.tolist() if mask is not None else [False] * n) == want
    assert events.deleted_range_mask(5, 536870912, first, n) is None  # a writeId with no deletes
    assert events.deleted_range_mask(3, 536870913, first, n) is None  # another statement


def test_range_mask_beyond_the_key_layout_is_not_a_false_hit():
    """rowIds at 2^40 would spill into the next group's keys: no match may come from there."""
    events = DeleteEventSet.build(np.array([3, 4], np.int64), np.full(2, 536870912, np.int32),
                                  np.array([5, 0], np.int64))
    mask = events.deleted_range_mask(3, 536870912, (1 << 40) - 2, 4)
    assert mask is None or not mask.any()
    assert events.deleted_range_mask(3, 536870912, 4, 3).tolist() == [False, True, False]
    mixed = events.deleted_mask(np.array([3, 4], np.int64), np.full(2, 536870912, np.int32),
                                np.array([1 << 40, 7], np.int64))  # two groups: the general path
    assert mixed is None or not mixed.any()
