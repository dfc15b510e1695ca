"""One big output file written by several tasks: segments, concatenated at the stripe level.

Hive's layout has one ``bucket_N`` file per writer id, so a table written by one writer compacts
into one file, which one task would write on one core (ORC compression is most of the cost). A
unit of at least :data:`SEGMENT_MIN_BYTES` of input is cut instead into up to ``parallelism``
*segments*: contiguous runs of its input slices (already in output order: originals, base, deltas
by write id; a big file is cut at stripe boundaries, ``read.plan.balance_slices``), each written
by its own task like a unit, to a hidden file next to the output. The driver then checks that the
segments follow each other in ROW__ID order and concatenates them without decoding
(``write.acid_file.concat_acid_files``): the same rows, order, ROW__IDs and footer metadata as
one writer would give, only the stripe boundaries differ.

When the check fails (a foreign writer's rows out of order across a segment boundary, or
segments written with different timestamp precisions) the unit is written again whole, as
without segments (``rewrite.run_unit`` sorts it in memory if it must).
"""
from __future__ import annotations

import dataclasses
import logging
import math
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from ..exceptions import CorruptFileError
from ..io.filesystem import FileSystem
from ..read.plan import FileSlice, balance_slices
from ..write.acid_file import concat_acid_files
from .plan import Unit
from .rewrite import KeyRange, UnitResult, file_size, slice_rows

log = logging.getLogger(__name__)

#: a unit with less input than this is written by one task
SEGMENT_MIN_BYTES = 64 << 20


@dataclass(frozen=True)
class Work:
    """A unit and the units that write it: itself, or its segments."""

    unit: Unit
    parts: tuple[Unit, ...]

    @property
    def segmented(self) -> bool:
        return self.parts != (self.unit,)


def _input_bytes(unit: Unit) -> int:
    return sum(s.size for s in unit.slices)


def segment_path(unit: Unit, k: int) -> str:
    """Segment ``k``'s file: hidden (``.`` prefix) next to the unit's, removed once joined."""
    head, _, name = unit.path.rpartition("/")
    return f"{head}/.{name}.segment-{k:03d}"


def plan_work(fs: FileSystem, units: Sequence[Unit], parallelism: int,
              segmentable: bool = True) -> list[Work]:
    """Each unit with what writes it. A unit gets a share of ``parallelism`` by its share of the
    input bytes (at least one task per :data:`SEGMENT_MIN_BYTES`); only insert units of
    full-ACID tables (``segmentable``) are cut."""
    total = sum(_input_bytes(u) for u in units if not u.delete_files) or 1
    out = []
    for u in units:
        size = _input_bytes(u)
        k = 1
        if segmentable and not u.delete_files and parallelism > 1 and size >= SEGMENT_MIN_BYTES:
            k = min(parallelism, math.ceil(size / SEGMENT_MIN_BYTES),
                    max(1, round(parallelism * size / total)))
        groups = _contiguous(fs, list(u.slices), k) if k > 1 else []
        if len(groups) < 2:
            out.append(Work(u, (u,)))
        else:
            out.append(Work(u, tuple(dataclasses.replace(u, path=segment_path(u, i),
                                                         slices=tuple(g))
                                     for i, g in enumerate(groups))))
    return out


def _contiguous(fs: FileSystem, slices: list[FileSlice], k: int) -> list[list[FileSlice]]:
    """``slices`` cut into at most ``k`` runs of about equal bytes, order kept."""
    size = sum(s.size for s in slices)
    cut = balance_slices(fs, slices, max(1, size // k))
    groups: list[list[FileSlice]] = [[] for _ in range(k)]
    done = 0
    for s in cut:
        g = min(k - 1, int((done + s.size / 2) * k // max(size, 1)))
        groups[g].append(s)
        done += s.size
    return [g for g in groups if g]


def join(fs: FileSystem, work: Sequence[Work], results: Sequence[UnitResult],
         run_whole: Callable[[list[Unit]], list[UnitResult]]) -> list[UnitResult]:
    """The result of every unit of ``work`` (``results``: those of all the parts, in order):
    segments concatenated into their unit's file and removed; a unit whose segments cannot be
    joined is written again whole by ``run_whole``."""
    by_path = {r.path: r for r in results}
    out: list[UnitResult] = []
    redo: list[Unit] = []
    for w in work:
        if not w.segmented:
            out.append(by_path[w.unit.path])
            continue
        parts = [by_path[p.path] for p in w.parts]
        reason = _why_not_joinable(parts)
        if reason is None:
            try:
                summary = concat_acid_files(fs, [p.path for p in parts], w.unit.path)
            except CorruptFileError as e:
                reason = str(e)
                _remove(fs, [w.unit.path])
        _remove(fs, [p.path for p in parts])
        if reason is not None:
            log.warning("%s: writing it again in one task (%s)", w.unit.path, reason)
            redo.append(w.unit)
            continue
        out.append(UnitResult(w.unit.partition, w.unit.dir_name, w.unit.bucket, w.unit.path,
                              summary.inserts, 0, slice_rows(fs, w.unit),
                              file_size(fs, w.unit.path),
                              _span([p.keys for p in parts]), parts[0].fallback))
    if redo:
        out.extend(run_whole(redo))
    log.info("%d output file(s) written by %d segment(s)", sum(w.segmented for w in work),
             sum(len(w.parts) for w in work if w.segmented))
    return out


def _why_not_joinable(parts: list[UnitResult]) -> Optional[str]:
    if len({p.fallback for p in parts}) > 1:
        return "its segments hold timestamps of different precisions"
    last = None
    for p in parts:
        if p.keys is None:
            continue
        if last is not None and p.keys[0] <= last:
            return f"segment {p.path} starts at ROW__ID {p.keys[0]}, not after {last}"
        last = p.keys[1]
    return None


def _span(keys: list[Optional[KeyRange]]) -> Optional[KeyRange]:
    present = [k for k in keys if k is not None]
    return (present[0][0], present[-1][1]) if present else None


def _remove(fs: FileSystem, paths: list[str]) -> None:
    """Remove segment files; a failure fails the compaction (nothing of it gets installed)."""
    for p in paths:
        fs.delete(p)
