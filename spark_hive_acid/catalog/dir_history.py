"""History of a table with no log of its own (written by Hive, or named in a metastore, which keeps
no per-table history: committed transactions leave ``TXNS``), derived from its directories.

One entry per write-id range found in a ``base``/``delta``/``delete_delta`` directory name, newest
first. ``state`` is the write id's state in the given snapshot; ``operation`` is what the
directories tell: insert (delta only), delete (delete_delta only), update/merge (both),
insert_overwrite (a base), compaction (a range of write ids, or a base with a visibility txn
``_vT``, which only the compactor writes); times and row counts are not known.
"""
from __future__ import annotations

from typing import Any, Iterable

from ..acid.names import ParsedDir, parse_acid_dir
from ..acid.snapshot import ValidIdList
from ..io.filesystem import FileStatus


def history_from_dirs(places: Iterable[tuple[str, list[FileStatus]]], write_ids: ValidIdList
                      ) -> list[dict[str, Any]]:
    """``places``: (partition name, '' when unpartitioned; the partition directory's listing)."""
    by_range: dict[tuple[int, int], dict] = {}
    for part, children in places:
        for ch in children:
            d = parse_acid_dir(ch.name) if ch.is_dir else None
            if d is None:
                continue
            e = by_range.setdefault((d.min_write_id, d.max_write_id),
                                    {"dirs": [], "partitions": set()})
            e["dirs"].append(d)
            if part:
                e["partitions"].add(part)
    out = []
    for (lo, hi), e in sorted(by_range.items(), key=lambda kv: (-kv[0][1], -kv[0][0])):
        if write_ids.is_aborted(hi):
            state = "aborted"
        elif write_ids.is_open(hi) or hi > write_ids.high_watermark:
            state = "open"
        else:
            state = "committed"
        out.append({"writeId": hi, "state": state, "operation": operation_of(lo, hi, e["dirs"]),
                    "startedAt": None, "finishedAt": None, "partitions": sorted(e["partitions"]),
                    "metrics": {}, "reason": None if lo == hi else f"covers write ids {lo}..{hi}"})
    return out


def operation_of(lo: int, hi: int, dirs: list[ParsedDir]) -> str:
    kinds = {d.kind for d in dirs}
    if (lo != hi and "base" not in kinds) or any(d.is_base and d.visibility_txn for d in dirs):
        return "compaction"
    if "base" in kinds:
        return "insert_overwrite"
    if kinds == {"delta"}:
        return "insert"
    if kinds == {"delete_delta"}:
        return "delete"
    return "update/merge"
