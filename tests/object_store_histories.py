"""The history tests every object store's write tests run (tests/test_azure_write.py,
tests/test_gcs_write.py): path-mode writes, DML, compaction and vacuum renaming nothing, and a
seeded random history, each checked against the model (:class:`compaction_ops.ModelTable`)."""
from __future__ import annotations

import random
from typing import Callable

from compaction_ops import ModelTable


def writes_dml_and_compaction_rename_nothing(uri: str, keys: Callable[[], list[str]],
                                             renamed: list, buckets: int) -> None:
    """Appends, an overwrite, a delete, compactions, a vacuum (and, unbucketed, an update and a
    merge) on ``uri``, read back after each; ``renamed`` (the ``no_rename`` fixture's list) stays
    empty, nothing is staged, the base directory is claimed (``keys()``: the table's objects)."""
    t = ModelTable(uri, random.Random(7), partitioned=True, buckets=buckets)
    for op in ("append", "append", "overwrite", "delete", "minor", "append", "major", "vacuum"):
        if op in ("minor", "major"):
            t.compact(op)
        else:
            getattr(t, op)()
        assert t.values(t.ours()) == t.expected(), (op, t.log)
    if not buckets:
        t.update()
        t.merge()
        assert t.values(t.ours()) == t.expected(), t.log
    assert renamed == []
    found = keys()
    assert not [k for k in found if "_hiveacid_staging" in k], found
    assert [k for k in found if "/base_" in k and k.endswith("_hiveacid_claim")]


def random_history_matches_the_model(uri: str, seed: int = 22, steps: int = 14) -> None:
    """A seeded random history of appends, overwrites, DML, compactions and vacuums on ``uri``,
    the table checked against the model after every step."""
    rng = random.Random(seed)
    t = ModelTable(uri, rng, partitioned=True)
    ops = ["append", "append", "overwrite", "delete", "update", "merge", "minor", "major",
           "vacuum"]
    for step in range(steps):
        op = rng.choice(ops) if step else "append"
        if op in ("minor", "major"):
            t.compact(op)
        else:
            getattr(t, op)()
        assert t.values(t.ours()) == t.expected(), (step, op, t.log)
