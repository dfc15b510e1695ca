"""Concurrent writers in path mode, judged by the serial-order yardstick (issue 13 items 3-6): with
several writes at once, the table afterwards equals the operations that succeeded applied one after
the other in some order, and the only failure allowed is CommitConflictError.

Every pair of operation kinds (append, static and dynamic overwrite, delete, update, merge) runs
concurrently, in both write-id orders, committing in both orders and released together on real
threads; then random triples. The operations are the library's own writer and commit code (``concurrent_ops.py``)."""
from __future__ import annotations

import itertools
import random
import threading

import pytest

from spark_hive_acid.exceptions import CommitConflictError

from concurrent_ops import INITIAL_ROWS, KINDS, Op, new_table, random_op, serial_results, table_rows

INITIAL = INITIAL_ROWS


def _round(tmp_path, name: str, ops: list[Op], rng: random.Random,
           commit_order: list[int] | None = None) -> list[Op]:
    """Prepare the ops in the given order (their write ids follow it), then commit them in
    ``commit_order``, or, without one, release their commits together on threads; check the
    yardstick; returns the ops that committed."""
    path = str(tmp_path / name)
    new_table(path, INITIAL)
    for op in ops:
        op.prepare(path)
    outcome: dict[int, BaseException | None] = {}

    def run(k: int, op: Op, barrier: threading.Barrier | None = None) -> None:
        if barrier is not None:
            barrier.wait()
        try:
            op.commit()
            outcome[k] = None
        except BaseException as e:  # noqa: BLE001 - judged below
            outcome[k] = e

    if commit_order is not None:
        for k in commit_order:
            run(k, ops[k])
    else:
        barrier = threading.Barrier(len(ops))
        threads = [threading.Thread(target=run, args=(k, op, barrier))
                   for k, op in enumerate(ops)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(120)
    errors = [e for e in outcome.values() if e is not None]
    assert all(isinstance(e, CommitConflictError) for e in errors), errors
    done = [op for k, op in enumerate(ops) if outcome[k] is None]
    final = table_rows(path)
    assert final in serial_results(INITIAL, done), \
        f"{ops} (committed: {done}) left {sorted(final.elements())}"
    return done


@pytest.mark.parametrize("first, second", list(itertools.combinations_with_replacement(KINDS, 2)))
def test_every_pair_of_operation_kinds(tmp_path, first, second):
    rng = random.Random(f"{first}-{second}")
    for rep in range(3):
        for k, order in enumerate(((first, second), (second, first))):
            for c, commits in enumerate(([0, 1], [1, 0], None)):  # None: on threads, at once
                ops = [random_op(kind, rng) for kind in order]
                _round(tmp_path, f"{rep}-{k}-{c}", ops, rng, commits)


def test_random_triples(tmp_path):
    rng = random.Random(13)
    conflicts = 0
    for rep in range(25):
        ops = [random_op(rng.choice(KINDS), rng) for _ in range(3)]
        conflicts += 3 - len(_round(tmp_path, f"t{rep}", ops, rng))
    assert conflicts > 0  # the rounds did collide


def test_update_concurrent_with_a_static_overwrite_never_brings_rows_back(tmp_path):
    """Item 3: an UPDATE with a higher write id than a concurrent INSERT OVERWRITE used to commit
    its new row versions above the new base: the overwritten rows came back, updated."""
    rng = random.Random(3)
    overwrite = Op("static", [(7, 1, 0)])
    update = Op("update", ids=frozenset({0, 1, 2}))
    done = _round(tmp_path, "t", [overwrite, update], rng)
    assert len(done) == 1


def test_append_below_a_static_overwrite_is_hidden_or_refused(tmp_path):
    """Item 4: an append with a lower write id than a concurrent static overwrite, into a partition
    that did not exist when the overwrite committed, used to stay visible."""
    rng = random.Random(4)
    for k, commits in enumerate(([0, 1], [1, 0], None)):
        append = Op("append", [(8, 1, 3), (9, 1, 0)])  # p=3 is new; p=0 will be overwritten
        overwrite = Op("static", [(7, 1, 0)])
        assert len(_round(tmp_path, f"t{k}", [append, overwrite], rng, commits)) == 1


def test_two_merges_inserting_the_same_new_key(tmp_path):
    """Item 5: two concurrent upserts of one new key both inserted it."""
    rng = random.Random(5)
    done = _round(tmp_path, "t", [Op("merge", [(9, 1, 0)]), Op("merge", [(9, 2, 0)])], rng)
    assert len(done) == 1


def test_two_static_overwrites_and_an_append(tmp_path):
    """Item 6: two static overwrites and an append at once lost an appended row."""
    rng = random.Random(6)
    for rep in range(4):
        ops = [Op("static", [(7, 1, 0)]), Op("append", [(8, 1, 1)]), Op("static", [(9, 1, 2)])]
        rng.shuffle(ops)
        _round(tmp_path, f"t{rep}", ops, rng)
