"""What a compaction rewrites: the compactor's snapshot, and per partition the units of work.

A compaction reads the table at the *compactor snapshot* (Hive's ``ValidCompactorWriteIdList``):
high watermark H = the highest write id below every open one, aborted ids as exceptions. Nothing
at or below H can change any more, so the output (``base_H``, or ``delta_a_b`` +
``delete_delta_a_b`` with b <= H) stays correct whatever commits while it runs: later writes have
write ids above H and stay visible above it, and a delete of a compacted row still applies because
every row keeps its ROW__ID.

Work is cut into :class:`Unit` objects, one per (partition, output file): picklable, so Spark
tasks can run them (``compaction.rewrite.run_unit``).
"""
from __future__ import annotations

import dataclasses
import functools
import logging
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import pyarrow as pa

from ..acid.names import base_dir_name, bucket_file_name, delta_dir_name, parse_bucket_file
from ..acid.snapshot import ValidIdList
from ..exceptions import InvalidOptionError, UnsupportedOperationError
from ..io.filesystem import FileSystem
from ..read.listing import PartitionListing
from ..read.plan import ORIGINAL, RAW, FileSlice, TablePlan
from ..read.reader import ReadSpec
from ..read.scan import TableScan

log = logging.getLogger(__name__)

MAJOR, MINOR = "major", "minor"
KINDS = (MAJOR, MINOR)


def compactor_snapshot(write_ids: ValidIdList) -> ValidIdList:
    """Hive's ``ValidCompactorWriteIdList``: the high watermark lowered below the oldest open
    write id; aborted ids below it stay exceptions (their events are dropped)."""
    hwm = write_ids.high_watermark
    min_open = write_ids.min_open_or_none
    if min_open is not None:
        hwm = min(hwm, min_open - 1)
    aborted = sorted(w for w in write_ids.aborted if w <= hwm)
    return ValidIdList.of(hwm, (), aborted, table_name=write_ids.table_name)


def parse_kind(kind: str) -> str:
    low = str(kind).strip().lower()
    if low not in KINDS:
        raise InvalidOptionError(f"Compaction kind '{kind}' is not 'major' or 'minor'")
    return low


@dataclass(frozen=True)
class Unit:
    """One output file of a compaction, and what it is made of (picklable).

    ``insert``: the slices whose live rows (major) or valid insert events (minor) it holds, in
    key order; ``delete_files``: the delete-delta files whose valid events it holds (minor)."""

    partition: str  # relative partition path ("" unpartitioned)
    dir_name: str  # base_H / delta_a_b / delete_delta_a_b
    bucket: int
    path: str  # the staged file
    slices: tuple[FileSlice, ...] = ()
    delete_files: tuple[str, ...] = ()
    stripe_size: int = 0


@dataclass
class PartitionJob:
    """What one partition's compaction reads and the directories it creates."""

    partition: str
    path: str  # the partition directory
    kind: str
    inputs: list[str]  # directories (and original files) the output makes obsolete
    outputs: list[str]  # new directory names, in the order they must appear
    units: list[Unit] = field(default_factory=list)
    low: int = 0  # write id range of the output
    high: int = 0
    input_files: int = 0
    input_bytes: int = 0


def _relative(plan: TablePlan, pl: PartitionListing) -> str:
    root = plan.table_path.rstrip("/")
    p = pl.path.rstrip("/")
    return "" if p == root else p[len(root):].lstrip("/")


def _slice_order(s: FileSlice) -> tuple:
    """Key order of the files of one bucket: originals (write id 0, path order: their synthetic
    row ids continue from file to file), then the base, then the deltas by write id and
    statement (the order their ROW__IDs sort in)."""
    return (0 if s.kind == ORIGINAL else 1, s.dir_min_write_id, s.dir_statement_id, s.path,
            s.first_stripe)


def plan_partitions(fs: FileSystem, plan: TablePlan, kind: str, hwm: int,
                    stage_root: Optional[str], partitions: Optional[Sequence[str]] = None,
                    file_name: Callable[[int], str] = bucket_file_name) -> list[PartitionJob]:
    """The partitions that ``kind`` compaction changes, with their units (see the module
    docstring). A partition with nothing to gain is left out (major: already one base and
    nothing else; minor: fewer than two delta directories). ``file_name(N)`` names the output
    file of bucket (writer) N: ``bucket_N``, or ``00000N_0`` in an insert-only table. Units
    write under ``stage_root``, or, when it is None (a store without rename), at their final
    names in the partition."""
    wanted = None if partitions is None else set(partitions)
    jobs = []
    for index, pl in enumerate(plan.partitions):
        rel = _relative(plan, pl)
        if wanted is not None and rel not in wanted:
            continue
        slices = sorted((s for s in plan.slices if s.partition_index == index), key=_slice_order)
        stage = functools.partial(_stage_path, fs, stage_root, rel, file_name=file_name) \
            if stage_root is not None else functools.partial(_final_path, fs, pl.path,
                                                             file_name=file_name)
        job = (_major(pl, rel, slices, hwm, stage) if kind == MAJOR
               else _minor(pl, rel, slices, hwm, stage))
        if job is not None:
            jobs.append(job)
    if wanted is not None:
        known = {_relative(plan, pl) for pl in plan.partitions}
        missing = sorted(wanted - known)
        if missing:
            raise InvalidOptionError(
                f"Partition(s) {', '.join(missing)} do not exist in {plan.table_path}; "
                f"partitions are named like {sorted(known)[:3]}")
    return jobs


def _stage_path(fs: FileSystem, stage_root: str, rel: str, dir_name: str, bucket: int, *,
                file_name: Callable[[int], str]) -> str:
    return fs.join(stage_root, *([rel] if rel else []), dir_name, file_name(bucket))


def _final_path(fs: FileSystem, partition_dir: str, dir_name: str, bucket: int, *,
                file_name: Callable[[int], str]) -> str:
    return fs.join(partition_dir, dir_name, file_name(bucket))


def _major(pl: PartitionListing, rel: str, slices: list[FileSlice], hwm: int,
           stage: Callable[[str, int], str]) -> Optional[PartitionJob]:
    st = pl.state
    if not (st.deltas or st.delete_deltas or st.original_files):
        return None  # one base (or nothing): already what a major compaction makes
    if st.base is not None and st.base.write_id > hwm:
        return None
    out = base_dir_name(hwm)
    if any(d.name == out for d in st.all_acid_dirs):
        return None
    inputs = ([st.base.path] if st.base else []) + [d.path for d in st.deltas + st.delete_deltas] \
        + [f.path for f in st.original_files]
    job = PartitionJob(rel, pl.path, MAJOR, inputs, [out], high=hwm)
    by_bucket: dict[int, list[FileSlice]] = {}
    for s in slices:
        by_bucket.setdefault(s.bucket_id, []).append(s)
    for bucket in sorted(by_bucket) or [0]:
        job.units.append(Unit(rel, out, bucket, stage(out, bucket),
                              tuple(by_bucket.get(bucket, ())), stripe_size=64 << 20))
    _count_inputs(job, pl, slices)
    return job


def _minor(pl: PartitionListing, rel: str, slices: list[FileSlice], hwm: int,
           stage: Callable[[str, int], str]) -> Optional[PartitionJob]:
    st = pl.state
    dirs = [d for d in st.deltas + st.delete_deltas if d.max_write_id <= hwm]
    if len({(d.min_write_id, d.max_write_id) for d in dirs}) < 2:
        return None  # nothing to merge
    straddling = [d for d in st.deltas + st.delete_deltas if d.min_write_id <= hwm < d.max_write_id]
    if straddling:
        log.warning("Minor compaction of %s skipped: %s spans write ids on both sides of the "
                    "compactor's high watermark %d", pl.path, straddling[0].name, hwm)
        return None
    low, high = min(d.min_write_id for d in dirs), max(d.max_write_id for d in dirs)
    names = {d.path for d in dirs}
    ins_slices = [dataclasses.replace(s, deletes=()) for s in slices
                  if s.kind != ORIGINAL and _dir_of(s.path) in names]
    raw = [s.path for s in ins_slices if s.kind == RAW]
    if raw:
        raise UnsupportedOperationError(
            f"{raw[0]} is a file loaded without ACID columns (LOAD DATA): a minor compaction "
            "cannot keep its rows' synthetic ROW__IDs. Run a major compaction of partition "
            f"'{rel or '(the table)'}' instead (Hive refuses this minor compaction too).")
    ins_dir, del_dir = delta_dir_name(low, high), delta_dir_name(low, high, delete=True)
    # the delete directory first: see install order in compaction.runner
    job = PartitionJob(rel, pl.path, MINOR, sorted(names), [], low=low, high=high)
    delete_files: dict[int, list[str]] = {}
    for d in (d for d in st.delete_deltas if d.path in names):
        for f in pl.dir_files.get(d.path, []):
            b = parse_bucket_file(f.name)
            if b is not None and f.size > 0:
                delete_files.setdefault(b, []).append(f.path)
                job.input_files += 1
                job.input_bytes += f.size
    by_bucket: dict[int, list[FileSlice]] = {}
    for s in ins_slices:
        by_bucket.setdefault(s.bucket_id, []).append(s)
    for bucket in sorted(delete_files):
        job.units.append(Unit(rel, del_dir, bucket, stage(del_dir, bucket),
                              delete_files=tuple(sorted(delete_files[bucket])),
                              stripe_size=8 << 20))
    for bucket in sorted(by_bucket):
        job.units.append(Unit(rel, ins_dir, bucket, stage(ins_dir, bucket),
                              tuple(by_bucket[bucket]), stripe_size=8 << 20))
    job.outputs = ([del_dir] if delete_files else []) + [ins_dir]
    for s in ins_slices:
        job.input_files += 1
        job.input_bytes += s.file_size or s.size
    return job


def _dir_of(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[0]


def _count_inputs(job: PartitionJob, pl: PartitionListing, slices: list[FileSlice]) -> None:
    seen = set()
    for s in slices:
        if s.path not in seen:
            seen.add(s.path)
            job.input_files += 1
            job.input_bytes += s.file_size or s.size
    for d in pl.state.delete_deltas:
        for f in pl.dir_files.get(d.path, []):
            if parse_bucket_file(f.name) is not None:
                job.input_files += 1
                job.input_bytes += f.size


def exact_type(t: pa.DataType) -> pa.DataType:
    """``t`` with timestamps in nanoseconds (nested ones too): compaction copies Hive's
    nanosecond timestamps whole, where a read for Spark keeps microseconds."""
    if pa.types.is_timestamp(t):
        return pa.timestamp("ns", t.tz)
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, exact_type(f.type), f.nullable) for f in t])
    if pa.types.is_list(t):
        return pa.list_(exact_type(t.value_type))
    if pa.types.is_map(t):
        return pa.map_(exact_type(t.key_type), exact_type(t.item_type))
    return t


def read_spec_for(scan: TableScan, row_type: pa.StructType) -> ReadSpec:
    """The reader's spec for compaction: ROW__ID (full-ACID tables) plus every data column, in
    table order, of the types of ``row_type``."""
    from ..read.reader import ROW_ID_TYPE

    types = tuple(f.type for f in row_type)
    keys = [] if scan.insert_only else [pa.field("row__id", ROW_ID_TYPE)]
    schema = pa.schema(keys + [pa.field(c.name, t) for c, t in zip(scan.data_columns, types)])
    return dataclasses.replace(scan.read_spec(schema), data_types=types)


def check_writable(insert_only: bool, file_format: str, display: str) -> None:
    """Refuse what compaction cannot rewrite: insert-only tables of formats we do not write."""
    if insert_only and file_format not in ("orc", "parquet"):
        raise UnsupportedOperationError(
            f"{display} is an insert-only table stored as {file_format}: compaction rewrites ORC "
            "and Parquet tables (others: requestCompaction() asks Hive's compactor)")
