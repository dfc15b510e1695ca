"""Running a compaction: begin, plan, write the units, commit, install (docs/compaction.md).

1. ``table.begin("compact")``: a transaction of the one protocol (path-mode log or metastore);
   its snapshot gives the compactor's high watermark H (``plan.compactor_snapshot``).
2. The table is planned at that snapshot (``read.scan.TableScan``) and cut into units
   (``plan.plan_partitions``), which ``run_units`` writes (Spark tasks, or this process) under
   the compaction's staging directory, each output directory with ``_orc_acid_version`` and a
   base with Hive 3's ``_metadata_acid`` "compacted" marker.
3. ``txn.committer.commit_compaction`` commits the transaction (two compactions of one partition
   conflict: the second fails and leaves nothing) and renames each output directory into its
   partition: a ``base_H`` appears in one step. Minor compaction's ``delete_delta_a_b`` is
   renamed before its ``delta_a_b`` (see docs/compaction.md, "What readers see").
4. Nothing is deleted: ``vacuum`` removes what the output made obsolete, later.

Any failure before the commit aborts the transaction and removes the staged output; the table is
exactly as before.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import pyarrow as pa

from ..acid.names import METADATA_FILE, bucket_file_name
from ..catalog.base import TableRef
from ..exceptions import CommitConflictError, LockTimeoutError
from ..io.filesystem import FileSystem
from ..progress import Progress
from ..read.reader import ReadSpec
from ..txn.logmaint import finish_interrupted_installs, roll_back_in_place
from ..txn.committer import commit_compaction, compaction_id, compaction_staging_dir
from ..txn.abort import abort_and_clean
from ..txn.base import Transaction
from ..write.acid_file import write_acid_version_file
from ..write.plain_file import plain_file_name
from ..write.schema import row_type_of
from .plan import PartitionJob, Unit, check_writable, compactor_snapshot, exact_type, \
    parse_kind, plan_partitions, read_spec_for
from .cleaner import remove_aborted_compaction_staging
from .in_place import check_outputs, claim_outputs
from .rewrite import UnitResult, run_unit
from .segments import join, plan_work

log = logging.getLogger(__name__)

COMPACTED_MARKER = b'{"thisFileVersion":"0","dataFormat":"compacted"}'
OPERATION = "compact"
WHOLE_FILES = 1 << 62  # split size: every slice a whole file (units keep files in key order)


@dataclass(frozen=True)
class UnitContext:
    """What every unit of one compaction needs besides itself (picklable)."""

    fs: FileSystem
    spec: ReadSpec  # nanosecond timestamps (exact_type)
    row_type: pa.StructType
    compression: str
    fallback: Optional[tuple[ReadSpec, pa.StructType]] = None  # microseconds
    plain_format: Optional[str] = None  # an insert-only table's file format

    def run(self, unit: Unit) -> UnitResult:
        return run_unit(self.fs, unit, self.spec, self.row_type, self.compression, self.fallback,
                        self.plain_format)


RunUnits = Callable[[Sequence[Unit], UnitContext], list[UnitResult]]


def run_locally(units: Sequence[Unit], ctx: UnitContext) -> list[UnitResult]:
    with Progress(f"compaction: {len(units)} output file(s)", len(units), "files") as progress:
        return [ctx.run(u) for u in progress.iterate(units)]


@dataclass
class CompactionResult:
    """What a compaction did (also what the transaction's commit records)."""

    kind: str
    write_id: int
    partitions: list[str] = field(default_factory=list)
    details: dict = field(default_factory=dict)

    @property
    def metrics(self) -> dict:
        return dict(self.details)


def compact(table: TableRef, kind: str, partitions: Optional[Sequence[str]] = None,
            run_units: RunUnits = run_locally, parallelism: int = 1) -> dict:
    """Compact ``table`` (``kind`` "major" or "minor"), all partitions or ``partitions``
    (relative names like ``p=1/q=a``); returns the metrics (see docs/compaction.md).
    ``parallelism``: how many units ``run_units`` runs at once; a big output file is then
    written in up to that many segments (``compaction.segments``)."""
    kind = parse_kind(kind)
    started = time.time()
    fs, path = table.location()
    fs.check_writable(path)
    finish_interrupted_installs(fs, path, state_of=table.compaction_state)
    try:
        txn = table.begin(OPERATION)  # aborts stale write ids: a killed compaction's among them
    except LockTimeoutError as e:
        raise CommitConflictError(
            f"Another compaction of {table.display} is running, or an INSERT OVERWRITE holds it: "
            f"this one did nothing; run it again later ({e})") from e
    try:
        remove_aborted_compaction_staging(fs, path)
    except Exception as e:  # noqa: BLE001 - housekeeping must not fail a compaction
        log.warning("Could not remove the staging of aborted compactions of %s: %s", path, e)
    cid = compaction_id(txn)
    stage = compaction_staging_dir(fs, path, cid)
    in_place = fs.writes_in_place  # object stores: outputs written at their final names
    try:
        with txn.keep_alive():
            snap = compactor_snapshot(txn.read_snapshot()[0])
            scan = table.scan({"splitSize": str(WHOLE_FILES)}).at(snap)
            layout = table.layout(adopt=lambda: pa.schema(
                [pa.field(c.name, c.type) for c in scan.data_columns]))
            check_writable(scan.insert_only, layout.file_format, table.display)
            row_type_us = row_type_of(layout)
            row_type = exact_type(row_type_us)
            jobs = plan_partitions(fs, scan.plan, kind, snap.high_watermark,
                                   None if in_place else stage, partitions,
                                   plain_file_name if scan.insert_only else bucket_file_name)
            if not jobs:
                txn.abort("nothing to compact")
                return _metrics(kind, cid, snap.high_watermark, [], [], started)
            if in_place:  # hidden from readers and claimed before the first byte
                claim_outputs(fs, path, cid, jobs)
            ctx = UnitContext(fs, read_spec_for(scan, row_type), row_type, layout.compression,
                              None if row_type.equals(row_type_us) else
                              (read_spec_for(scan, row_type_us), row_type_us),
                              layout.file_format if scan.insert_only else None)
            units = [u for j in jobs for u in j.units]
            log.info("Compacting %s (%s, write ids <= %d): %d partition(s), %d file(s) to write",
                     table.display, kind, snap.high_watermark, len(jobs), len(units))
            work = plan_work(fs, units, parallelism, segmentable=not scan.insert_only)
            parts = run_units([p for w in work for p in w.parts], ctx)
            results = join(fs, work, parts, lambda redo: run_units(redo, ctx))
            installs = _finish_staging(fs, None if in_place else stage, jobs,
                                       scan.insert_only)
            if in_place:
                check_outputs(fs, path, cid, jobs, results)
    except BaseException as e:
        _abort(fs, path, txn, stage, e)
        if in_place:
            roll_back_in_place(fs, path, cid)
        raise
    metrics = _metrics(kind, cid, snap.high_watermark, jobs, results, started)
    metrics.update({"writeId": None}, **txn.ids())  # a metastore compaction has a txn id only
    outcome = CompactionResult(kind, cid, sorted(j.partition for j in jobs), metrics)
    commit_compaction(fs, path, txn, outcome, installs, [j.partition for j in jobs],
                      table.txn_high_watermark)
    metrics["durationSeconds"] = round(time.time() - started, 3)
    return metrics


def _abort(fs: FileSystem, path: str, txn: Transaction, stage: str, e: BaseException) -> None:
    abort_and_clean(fs, path, txn, f"compaction failed: {type(e).__name__}: {e}", staged_dir=stage)


def _finish_staging(fs: FileSystem, stage: Optional[str], jobs: Sequence[PartitionJob],
                    insert_only: bool = False) -> list[tuple[str, str]]:
    """Complete each staged output directory (version file, except in an insert-only table,
    whose directories hold data files only; base marker; a minor compaction's insert directory
    exists even without rows) and list the renames, in install order. Without ``stage`` the
    outputs are in place: the pairs are ``("", final)`` (nothing to rename)."""
    installs = []
    for job in jobs:
        for out in job.outputs:
            if stage is None:
                final = fs.join(job.path, out)
                if not insert_only:
                    write_acid_version_file(fs, final)
                if out.startswith("base_"):
                    fs.write_bytes(fs.join(final, METADATA_FILE), COMPACTED_MARKER)
                installs.append(("", final))
                continue
            staged = fs.join(stage, *([job.partition] if job.partition else []), out)
            fs.mkdirs(staged)
            if not insert_only:
                write_acid_version_file(fs, staged)
            if out.startswith("base_"):
                fs.write_bytes(fs.join(staged, METADATA_FILE), COMPACTED_MARKER)
            installs.append((staged, fs.join(job.path, out)))
    return installs


def _metrics(kind: str, write_id: int, hwm: int, jobs: Sequence[PartitionJob],
             results: Sequence[UnitResult], started: float) -> dict:
    written = sum(r.inserts + r.deletes for r in results)
    read = sum(r.read_events for r in results)
    return {
        "kind": kind,
        "writeId": write_id,
        "highWatermark": hwm,
        "partitionsCompacted": len(jobs),
        "partitions": sorted(j.partition for j in jobs),
        "outputs": sorted(f"{j.partition}/{o}" if j.partition else o for j in jobs for o in j.outputs),
        "writeIdRange": [min((j.low for j in jobs), default=0), max((j.high for j in jobs), default=0)]
        if kind == "minor" else [0, hwm],
        "dirsBefore": sum(len(j.inputs) for j in jobs),
        "dirsAfter": sum(len(j.outputs) for j in jobs),
        "filesBefore": sum(j.input_files for j in jobs),
        "filesAfter": len(results),
        "bytesBefore": sum(j.input_bytes for j in jobs),
        "bytesAfter": sum(r.bytes for r in results),
        "rowsWritten": sum(r.inserts for r in results),
        "deleteEventsWritten": sum(r.deletes for r in results),
        "eventsDropped": max(read - written, 0),
        "numInsertedRows": 0,
        "numDeletedRows": 0,
        "numFiles": len(results),
        "durationSeconds": round(time.time() - started, 3),
    }


def compact_if_needed(table: TableRef, run_units: RunUnits = run_locally,
                      parallelism: int = 1) -> dict:
    """Hive's Initiator rules (``compaction.initiator``) per partition, then the compactions they
    call for: one major compaction of the partitions that need it, one minor of the others.
    Returns ``{"decisions": [...per partition...], "major": metrics|None, "minor": metrics|None}``."""
    from .initiator import decide_for_table

    decisions = decide_for_table(table)
    out: dict = {"decisions": decisions, "major": None, "minor": None}
    for kind in ("major", "minor"):
        parts = [d["partition"] for d in decisions if d["decision"] == kind]
        if parts:
            out[kind] = compact(table, kind, parts, run_units, parallelism)
    return out
