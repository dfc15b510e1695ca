"""Which partitions a restore to version V rewrites: those whose content may differ from V's.

A partition whose visible directories all have write ids at or below V holds exactly what it
held at V (directories above V are the only way content changes), so it is left alone; every
other partition the table has now, or had at V, gets ``base_W`` with its rows at V (an empty
one where it had none). Rows are copied, not referenced: Hive's format has no way to point a new
base at older files.
"""
from __future__ import annotations

from ..acid.partitions import partition_name
from ..read.plan import TablePlan


def _name(plan: TablePlan, values: tuple) -> str:
    return partition_name(plan.partition_names, list(values)) if plan.partition_names else ""


def partition_names(plan: TablePlan) -> set[str]:
    """Relative names of the plan's partitions."""
    return {_name(plan, pl.values) for pl in plan.partitions}


def partitions_to_restore(now: TablePlan, then: TablePlan, version: int) -> list[str]:
    """Relative partition names (``''``: the unpartitioned table) a restore to ``version``
    rewrites; ``now`` / ``then``: the plans of the table now and at ``version``."""
    changed: set[str] = set()
    present: set[str] = set()
    for pl in now.partitions:
        name = _name(now, pl.values)
        present.add(name)
        st = pl.state
        dirs = ([st.base] if st.base is not None else []) + st.deltas + st.delete_deltas
        if any(d.max_write_id > version for d in dirs):
            changed.add(name)
    for pl in then.partitions:
        name = _name(then, pl.values)
        if name not in present and (pl.state.has_acid_dirs or pl.state.original_files):
            changed.add(name)
    return sorted(changed)
