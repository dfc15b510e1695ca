"""Concurrent writers that replace partitions (issue 26): a static partition overwrite
(``replaceWhere``), ``truncate`` and ``dropPartitions``, each against every operation kind, in both
write-id orders and both commit orders and released together on threads; then random triples of
all kinds. Judged by the serial-order yardstick of tests/write/test_concurrency.py."""
from __future__ import annotations

import itertools
import random

import pytest

from concurrent_ops import KINDS, REPLACING, random_op
from test_concurrency import _round

PAIRS = [(a, b) for a, b in itertools.combinations_with_replacement(KINDS + REPLACING, 2)
         if a in REPLACING or b in REPLACING]


@pytest.mark.parametrize("first, second", PAIRS)
def test_every_pair_with_a_replacing_operation(tmp_path, first, second):
    rng = random.Random(f"{first}-{second}")
    for k, order in enumerate(((first, second), (second, first))):
        for c, commits in enumerate(([0, 1], [1, 0], None)):  # None: on threads, at once
            ops = [random_op(kind, rng) for kind in order]
            _round(tmp_path, f"{k}-{c}", ops, rng, commits)


def test_random_triples_with_replacing_operations(tmp_path):
    rng = random.Random(26)
    conflicts = 0
    for rep in range(15):
        kinds = [rng.choice(REPLACING)] + [rng.choice(KINDS + REPLACING) for _ in range(2)]
        ops = [random_op(kind, rng) for kind in kinds]
        conflicts += 3 - len(_round(tmp_path, f"t{rep}", ops, rng))
    assert conflicts > 0  # the rounds did collide


@pytest.mark.parametrize("kind", ["drop", "partition"])
@pytest.mark.parametrize("commits", [[0, 1], [1, 0], None])
def test_an_append_into_a_partition_the_region_creates_meanwhile_conflicts(tmp_path, kind,
                                                                          commits):
    """The append (lower write id) adds rows to p=1, which the replacement hides under its base,
    and to p=3, which did not exist when the replacement listed the table: without the region
    rule its p=3 rows would survive while its p=1 rows vanish, which no serial order gives."""
    from concurrent_ops import Op

    rows = [(7, 500, 1)] if kind == "partition" else []
    ops = [Op("append", [(8, 1, 1), (9, 1, 3)]), Op(kind, rows, parts=frozenset({1, 3}))]
    done = _round(tmp_path, "r", ops, random.Random(0), commits)
    assert len(done) == 1  # one of the two failed with CommitConflictError
