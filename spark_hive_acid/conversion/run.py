"""The conversion: one resolved Hive table, one target, the write ids between them.

``convert`` makes a new target table: the table as of the oldest write id whose history is still
readable (a major compaction erased what was before: that first snapshot holds it), then one
target commit per committed write id after it, in order. ``mirror`` does the same on a first run
and, on later runs, applies only the write ids committed since the last one the target records
(``Target.last_write_id``: in the target's own metadata, committed with the data), so a crash
and a rerun neither skip nor repeat one. Hive's writers keep working meanwhile: a run converts up
to the table's low watermark (every write id up to it has ended).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import pyarrow as pa

from ..catalog import TableRef
from ..exceptions import InvalidOptionError
from ..read.ranges import snapshot_at
from ..read.scan import TableScan
from .changes import change_of, compacted_since, end_version, first_version, partition_of, \
    write_ids_present
from .keys import GroupKey
from .target import Step, Target
from .writing import Want, WrittenFile, write_groups

log = logging.getLogger(__name__)

CONVERT, MIRROR = "convert", "mirror"
Progress = Callable[[dict[str, Any]], None]


@dataclass
class ConvertResult:
    """What a run did. ``collapsed_up_to``: the history up to this write id is one snapshot
    (compacted away in Hive, or ``history=False``)."""

    source: str
    target: str
    mode: str
    previous_write_id: Optional[int]  # the target's last write id before the run
    write_id: Optional[int]  # ... after it
    collapsed_up_to: Optional[int] = None
    steps: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)  # committed write ids that changed no row
    rows_written: int = 0
    files_added: int = 0
    files_removed: int = 0
    seconds: float = 0.0
    verdict: Optional[Any] = None

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "verdict"}
        out["verdict"] = self.verdict.to_dict() if self.verdict is not None else None
        return out


class _Run:
    def __init__(self, ref: TableRef, target: Target, mode: str, workers: int,
                 progress: Optional[Progress]):
        self.ref, self.target, self.mode = ref, target, mode
        self.workers, self.progress = workers, progress
        self.index: dict[GroupKey, list[Any]] = {}
        self.pending: list[WrittenFile] = []
        self.started = time.monotonic()
        self.rows = 0
        self._last_log = 0.0

    def _count(self, n: int) -> None:
        self.rows += n
        now = time.monotonic()
        if now - self._last_log > 10:
            self._last_log = now
            log.info("%s -> %s: %d rows read so far (%.0f s)", self.ref.display,
                     self.target.display, self.rows, now - self.started)

    def step(self, scan: TableScan, columns: list[str], wants: dict[str, Want],
             drop: set[GroupKey], step: Step, result: ConvertResult) -> None:
        files = write_groups(scan, wants, self.target, columns, step.write_id, self.workers,
                             self._count)
        self.pending += files
        step.adds = files
        step.removes = [h for k in sorted(drop) for h in self.index.pop(k, [])]
        for f in files:
            self.index.setdefault(f.group, []).append(self.target.handle(f))
        self.target.apply(step)
        if self.target.commits_each_step:
            self.pending = []
        rows = sum(f.rows for f in files)
        info = {"writeId": step.write_id, "operation": step.operation, "filesAdded": len(files),
                "filesRemoved": len(step.removes), "rowsWritten": rows}
        result.steps.append(info)
        result.rows_written += rows
        result.files_added += len(files)
        result.files_removed += len(step.removes)
        log.info("%s -> %s: write id %d (%s): +%d/-%d files, %d rows (%.1f s)",
                 self.ref.display, self.target.display, step.write_id, step.operation,
                 len(files), len(step.removes), rows, time.monotonic() - self.started)
        if self.progress is not None:
            self.progress(dict(info, seconds=time.monotonic() - self.started))


def run(ref: TableRef, target: Target, mode: str = CONVERT, *, history: bool = True,
        up_to: Optional[int] = None, workers: int = 2,
        progress: Optional[Progress] = None) -> ConvertResult:
    """Convert (``mode="convert"``: the target must not exist) or mirror ``ref`` into ``target``
    up to write id ``up_to`` (default: the table's current version)."""
    if mode not in (CONVERT, MIRROR):
        raise InvalidOptionError(f"mode {mode!r}: use {CONVERT!r} or {MIRROR!r}")
    now = ref.scan()
    snap = now.write_ids
    end = end_version(snap, now, up_to)
    source = ref.metastore_uri and f"{ref.metastore_uri}#{ref.full_name}" or \
        (ref.full_name or now.source.location)
    exists = target.exists()
    if exists and mode == CONVERT:
        raise InvalidOptionError(
            f"{target.display} exists already; mirror() applies the write ids committed since "
            "its conversion, or give a new target")
    if exists and target.source() not in (None, source):
        raise InvalidOptionError(f"{target.display} mirrors {target.source()}, not {source}")
    last = target.last_write_id() if exists else None
    result = ConvertResult(ref.display, target.display, mode, last, last)
    at_end = now.at(snapshot_at(snap, end))
    cols = [c for c in at_end.all_columns(False)]
    schema = pa.schema([pa.field(c.name, c.type) for c in cols])
    names = [c.name for c in cols]
    parts = [c.name for c in at_end.partition_columns]
    target.start(schema, parts, source)
    r = _Run(ref, target, mode, workers, progress)
    times = {ev.write_id: ev.time for ev in ref.commit_records() or () if ev.committed}
    ops = {ev.write_id: ev.operation for ev in ref.commit_records() or ()
           if ev.committed and ev.operation}
    try:
        if exists:
            r.index = target.current_files()
        if last is None:
            low = end if not history else first_version(at_end)
            ids = write_ids_present(at_end, low, end) if history else []
            if low > 0 or not ids:
                collapsed = low if low > 0 else None
                _full(r, now, snap, low, names, Step(low, "convert", times.get(low),
                                                      collapsed_up_to=collapsed), result)
                result.collapsed_up_to = collapsed
        elif last >= end:
            ids = []
        else:
            compacted = compacted_since(at_end, last)
            ids = write_ids_present(at_end, last, end)
            if compacted:  # the events of (last, C] are gone: the table as of C, in one step
                c = max(compacted.values())
                log.warning("%s was major-compacted up to write id %d since write id %d was "
                            "mirrored: its rows are rewritten as of %d in one snapshot",
                            ref.display, c, last, c)
                _full(r, now, snap, c, names, Step(c, "resync", times.get(c), collapsed_up_to=c),
                      result, drop_all=True)
                result.collapsed_up_to = c
                ids = [w for w in ids if w > c]
        for w in ids:
            scan_w = now.at(snapshot_at(snap, w))
            ch = change_of(scan_w, w)
            if ch.empty:
                result.skipped.append(w)
                continue
            wants: dict[str, Want] = {}
            for p in ch.replaced:
                wants[p] = Want(all=True)
            for p in ch.inserted | set(ch.deleted):
                if p not in wants:
                    wants[p] = Want(write_id=w if p in ch.inserted else None,
                                    groups=frozenset(ch.deleted.get(p, ())))
            drop = {k for k in r.index if k.partition in ch.replaced
                    or (k.partition in wants and (k.write_id == w or (k.write_id, k.bucket, k.chunk)
                                                  in wants[k.partition].groups))}
            op = ops.get(w) or ch.operation
            r.step(scan_w, names, wants, drop, Step(w, op, times.get(w)), result)
        target.finish()
    except BaseException:
        target.abort(r.pending)
        raise
    result.write_id = target.last_write_id()
    result.seconds = round(time.monotonic() - r.started, 3)
    return result


def _full(r: _Run, now: TableScan, snap: Any, version: int, names: list[str], step: Step,
          result: ConvertResult, drop_all: bool = False) -> None:
    """One step holding the whole table as of ``version``."""
    scan = now.at(snapshot_at(snap, version))
    wants = {partition_of(scan.plan, pl): Want(all=True) for pl in scan.plan.partitions}
    drop = set(r.index) if drop_all else set()
    r.step(scan, names, wants, drop, step, result)
