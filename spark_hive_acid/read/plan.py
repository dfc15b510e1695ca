"""The planner: one listing of the table, one snapshot, picklable read tasks.

Every task holds file slices (a whole file or a stripe range) plus, per slice, the delete_delta
files that can apply to it: all delete deltas of its partition minus those that provably cannot
(Hive's ``isQualifiedDeleteDeltaForSplit``) and minus other buckets' files.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Optional


from ..acid.names import ParsedDir, parse_bucket_file, parse_original_file
from ..acid.partition_tree import PartitionTree
from ..acid.snapshot import RangeResponse, ValidIdList
from ..exceptions import CorruptFileError, NotAnAcidTableError
from ..io.filesystem import FileStatus, FileSystem
from ..acid import bucket_codec
from ..acid.orc import (
    acid_field_names, check_acid_key_types, flush_length, is_acid_schema, key_arrays, open_orc,
    sniff_format,
)
from .listing import PartitionListing, data_files_of_dir, list_table
from .source import KnownPartitions

log = logging.getLogger(__name__)

# kinds of data file
ACID = "acid"          # ACID event schema (detected again per file at read time)
ORIGINAL = "original"  # pre-ACID file: synthetic ROW__IDs with write id 0
RAW = "raw"            # LOAD DATA into a base/delta: synthetic ROW__IDs with the dir's write id
INSERT_ONLY = "insert_only"


@dataclass(frozen=True)
class DeleteFile:
    path: str
    size: int
    max_write_id: int
    statement_id: int
    flush_length: Optional[int] = None


@dataclass(frozen=True)
class FileSlice:
    """A data file, or stripes [first_stripe, end_stripe) of it."""

    path: str
    size: int
    kind: str
    partition_index: int
    bucket_id: int
    dir_min_write_id: int = 0
    dir_max_write_id: int = 0
    dir_statement_id: int = -1
    check_current_write_id: bool = False  # the dir's range is not ALL valid: filter per event
    synthetic_write_id: int = 0  # ORIGINAL / RAW
    row_offset: int = 0  # ORIGINAL / RAW: rows of earlier files of the same bucket
    first_stripe: int = 0
    end_stripe: Optional[int] = None  # None: to the end
    first_row: int = 0  # rows before first_stripe within the file
    file_size: Optional[int] = None  # bytes of the whole file (from the listing)
    flush_length: Optional[int] = None
    file_format: str = "orc"
    deletes: tuple[DeleteFile, ...] = ()
    synthetic_v0: bool = False  # ORIGINAL in a Hive 2 table: synthetic bucket = plain number


@dataclass(frozen=True)
class ReadTask:
    slices: tuple[FileSlice, ...]

    @property
    def size(self) -> int:
        return sum(s.size for s in self.slices)


@dataclass
class TablePlan:
    table_path: str
    partition_names: list[str]
    partitions: list[PartitionListing]
    slices: list[FileSlice] = field(default_factory=list)
    schema_file: Optional[str] = None  # newest file whose schema describes the table

    def tasks(self, split_bytes: int, min_tasks: int = 1) -> list[ReadTask]:
        """Bin-pack slices into tasks of about ``split_bytes`` (slices stay whole)."""
        if not self.slices:
            return []
        total = sum(s.size for s in self.slices)
        target = max(1, min(split_bytes, total // max(min_tasks, 1) or 1))
        tasks: list[ReadTask] = []
        current: list[FileSlice] = []
        current_size = 0
        # keep slices of the same partition & bucket together: they share delete sets
        for s in sorted(self.slices, key=lambda s: (s.partition_index, s.bucket_id, s.path,
                                                    s.first_stripe)):
            if current and current_size + s.size > target:
                tasks.append(ReadTask(tuple(current)))
                current, current_size = [], 0
            current.append(s)
            current_size += s.size
        if current:
            tasks.append(ReadTask(tuple(current)))
        return tasks


def _qualifies(dd: ParsedDir, data_min: int, data_stmt: int) -> bool:
    """``isQualifiedDeleteDeltaForSplit``: can events in ``dd`` target rows of this data dir?"""
    if dd.max_write_id < data_min:
        return False
    if dd.max_write_id == data_min:
        return dd.stmt_for_pruning > max(data_stmt, 0)
    return True


def plan_table(fs: FileSystem, table_path: str, write_ids: ValidIdList, txns: ValidIdList,
               *, insert_only: bool, split_bytes: int, has_layout: bool = False,
               known_partitions: Optional[KnownPartitions] = None,
               tree: Optional[PartitionTree] = None) -> TablePlan:
    names, partitions = list_table(fs, table_path, write_ids, txns, insert_only, known_partitions,
                                   tree)
    plan = TablePlan(table_path, names, partitions)
    newest: tuple = (-2, "")
    any_table_content = has_layout
    for index, pl in enumerate(partitions):
        st = pl.state
        if st.all_acid_dirs or st.original_files:
            any_table_content = True
        delete_files: list[tuple[ParsedDir, FileStatus, Optional[int]]] = []
        for dd in st.delete_deltas:
            for f in pl.dir_files[dd.path]:
                if parse_bucket_file(f.name) is not None and not _empty(fs, dd, f):
                    delete_files.append((dd, f, _flush(fs, dd, f)))
                    newest = max(newest, (dd.max_write_id - 0.5, f.path))

        def deletes_for(bucket: int, data_min: int, data_stmt: int) -> tuple[DeleteFile, ...]:
            if insert_only:
                return ()
            return tuple(DeleteFile(f.path, f.size, dd.max_write_id, dd.statement_id, fl)
                         for dd, f, fl in delete_files
                         if parse_bucket_file(f.name) == bucket and _qualifies(dd, data_min, data_stmt))

        data_dirs = ([st.base] if st.base else []) + st.deltas
        for d in data_dirs:
            files = data_files_of_dir(fs, d, pl.dir_files[d.path], insert_only)
            data_min = 0 if d.is_base else d.min_write_id
            check = (not d.is_base and write_ids.range_valid(d.min_write_id, d.max_write_id)
                     is not RangeResponse.ALL)
            raw_offsets: dict[int, int] = {}
            for f in files:
                if insert_only and f.size == 0 or not insert_only and _empty(fs, d, f):
                    continue
                bucket = parse_bucket_file(f.name)
                if insert_only:
                    kind = INSERT_ONLY
                    bucket = parse_original_file(f.name) or 0
                elif bucket is not None:
                    kind = ACID
                else:
                    kind = RAW
                    bucket = parse_original_file(f.name)
                    bucket = 0 if bucket is None else bucket
                fl = _flush(fs, d, f)
                slice_ = FileSlice(
                    path=f.path, size=fl if fl is not None else f.size, kind=kind, file_size=f.size,
                    partition_index=index, bucket_id=bucket,
                    dir_min_write_id=data_min, dir_max_write_id=d.max_write_id,
                    dir_statement_id=d.statement_id, check_current_write_id=check,
                    synthetic_write_id=d.min_write_id if kind == RAW else 0,
                    flush_length=fl,
                    file_format=sniff_format(fs, f.path) if kind == INSERT_ONLY else "orc",
                    deletes=deletes_for(bucket, data_min, d.statement_id),
                )
                if kind == RAW:
                    slice_ = _with_row_offset(fs, slice_, raw_offsets)
                plan.slices.extend(_split_by_stripes(fs, slice_, split_bytes))
                newest = max(newest, (d.max_write_id, f.path))
        # originals (only when no base was chosen)
        offsets: dict[int, int] = {}
        v0 = bool(st.original_files) and _partition_uses_v0(fs, pl)
        for f in st.original_files:
            bucket = parse_original_file(f.name)
            if bucket is None:
                bucket = 0
            slice_ = FileSlice(path=f.path, size=f.size, file_size=f.size, kind=ORIGINAL,
                               partition_index=index, synthetic_v0=v0,
                               bucket_id=bucket, deletes=deletes_for(bucket, 0, -1))
            if not st.has_acid_dirs and sniff_format(fs, f.path) != "orc":
                raise NotAnAcidTableError(
                    f"{f.path} is not an ORC file and {pl.path} has no ACID directories: this is "
                    "not a Hive ACID table (for plain files use spark.read.orc/parquet/text).")
            slice_ = _with_row_offset(fs, slice_, offsets)
            plan.slices.extend(_split_by_stripes(fs, slice_, split_bytes))
            newest = max(newest, (-1, f.path))
    if not any_table_content:
        raise NotAnAcidTableError(
            f"{table_path} holds no Hive ACID table: no base_*/delta_*/delete_delta_* directories "
            "and no data files. Create one with "
            "df.write.format('hiveacid').mode('append').save(path), or check the path.")
    if newest[1]:
        plan.schema_file = newest[1]
    else:  # nothing visible: the schema still comes from the newest file of any directory
        plan.schema_file = _newest_file_anywhere(fs, partitions, insert_only)
    return plan


def _newest_file_anywhere(fs: FileSystem, partitions: list[PartitionListing],
                          insert_only: bool) -> Optional[str]:
    dirs = sorted((d for pl in partitions for d in pl.state.all_acid_dirs),
                  key=lambda d: (d.max_write_id, not d.is_delete, d.path), reverse=True)
    for d in dirs:
        if insert_only:
            files = data_files_of_dir(fs, d, fs.list_dir(d.path), True)
        else:
            files = [f for f in fs.list_dir(d.path)
                     if parse_bucket_file(f.name) is not None and f.size > 0]
        if files:
            return sorted(files, key=lambda f: f.path)[0].path
    return None


def _partition_uses_v0(fs: FileSystem, pl: PartitionListing) -> bool:
    """Whether Hive 2 (BucketCodec V0: plain bucket numbers) wrote this partition's ACID files.

    Original files get synthetic ROW__IDs; Hive 2 gives them the plain bucket number, Hive 3+ the
    V1 bucket property, and the delete events written against them carry the same encoding. So
    the first event of the partition's newest delete (else insert) delta decides, visible in the
    snapshot or not; with no ACID files at all, Hive 3's encoding is used."""
    dirs = [d for d in pl.state.all_acid_dirs if not d.is_base]  # visible in the snapshot or not
    for d in sorted(dirs, key=lambda d: (not d.is_delete, -d.max_write_id)):
        files = pl.dir_files.get(d.path)
        for f in files if files is not None else fs.list_dir(d.path):
            if parse_bucket_file(f.name) is None or f.size == 0:
                continue
            orc = open_orc(fs, f.path, _flush(fs, d, f), size=f.size)
            if orc.nrows == 0 or not is_acid_schema(orc.schema):
                continue
            check_acid_key_types(orc.schema, f.path)
            bucket_col = acid_field_names(orc.schema)["bucket"]
            first = key_arrays(orc.read_stripe(0, columns=[bucket_col]), [bucket_col], f.path)[0][0]
            return bucket_codec.version_of(int(first)) == 0
    return False


def _empty(fs: FileSystem, d: ParsedDir, f: FileStatus) -> bool:
    """Whether a full-ACID directory's data file holds nothing to read: an empty ``bucket_N``
    is damage (Hive's writers and ours always write at least the ORC footer), so it fails the
    read naming the file rather than losing its rows; one of a streaming delta whose flush
    length says nothing was committed yet is empty, and so is an empty original-named file in a
    raw (LOAD DATA) delta, as Hive skips empty originals."""
    if f.size > 0:
        return False
    if parse_bucket_file(f.name) is None:
        return True
    if _flush(fs, d, f) is not None:
        return True
    raise CorruptFileError(
        f"ACID data file {f.path} is empty (0 bytes): it was truncated or damaged (Hive and this "
        "library always write at least an ORC footer), and the rows it held cannot be read. "
        "Restore it from a backup or a file-system snapshot; `hiveacid validate` lists every such "
        "file.")


def _flush(fs: FileSystem, d: ParsedDir, f: FileStatus) -> Optional[int]:
    """Flush length only where Hive looks for side files: ``delta_x_y`` with x != y, no ``_v``."""
    if d.is_base or d.min_write_id == d.max_write_id or d.visibility_txn:
        return None
    return flush_length(fs, f.path)


def _with_row_offset(fs: FileSystem, s: FileSlice, offsets: dict[int, int]) -> FileSlice:
    """Synthetic row ids continue across earlier files of the same bucket (path order)."""
    start = offsets.get(s.bucket_id, 0)
    nrows = open_orc(fs, s.path, size=s.file_size).nrows
    offsets[s.bucket_id] = start + nrows
    return FileSlice(**{**s.__dict__, "row_offset": start})


def _stripes(fs: FileSystem, path: str) -> list[tuple[int, int, int]]:
    """(offset, length, first row) of each stripe of an ORC file."""
    import pyorc  # stripe boundaries: pyarrow does not expose them without reading

    try:
        with fs.open_input(path) as fh:
            reader = pyorc.Reader(fh)
            out = []
            for i in range(reader.num_of_stripes):
                st = reader.read_stripe(i)
                out.append((st.bytes_offset, st.bytes_length, st.row_offset))
            return out
    except Exception as e:  # noqa: BLE001 - pyorc raises several unrelated types
        raise CorruptFileError(f"Cannot read the stripes of ORC file {path}: {e}") from e


def _split_by_stripes(fs: FileSystem, s: FileSlice, split_bytes: int) -> list[FileSlice]:
    """Split a file larger than ``split_bytes`` into stripe ranges of about that size."""
    if s.size <= split_bytes or s.file_format != "orc":
        return [s]
    stripes = _stripes(fs, s.path)
    out: list[FileSlice] = []
    first, acc = 0, 0
    for i, (_, length, _) in enumerate(stripes):
        acc += length
        if acc >= split_bytes or i == len(stripes) - 1:
            out.append(FileSlice(**{**s.__dict__, "first_stripe": first, "end_stripe": i + 1,
                                    "first_row": stripes[first][2], "size": acc}))
            first, acc = i + 1, 0
    return out


def balance_slices(fs: FileSystem, slices: list[FileSlice], target: int) -> list[FileSlice]:
    """Slices larger than ``target`` bytes cut again into stripe ranges of at most about
    ``target`` (a range never splits a stripe), so that a table of few big files (one compacted
    base) still gives every core a task of similar size."""
    out: list[FileSlice] = []
    for s in slices:
        if s.size <= target or s.file_format != "orc" or s.flush_length is not None:
            out.append(s)
            continue
        stripes = _stripes(fs, s.path)
        end = s.end_stripe if s.end_stripe is not None else len(stripes)
        if end - s.first_stripe < 2:
            out.append(s)  # one stripe (or none): nothing to cut
            continue
        first, acc = s.first_stripe, 0
        for i in range(s.first_stripe, end):
            length = stripes[i][1]
            if acc and acc + length > target:
                out.append(FileSlice(**{**s.__dict__, "first_stripe": first, "end_stripe": i,
                                        "first_row": stripes[first][2], "size": acc}))
                first, acc = i, 0
            acc += length
        out.append(FileSlice(**{**s.__dict__, "first_stripe": first, "end_stripe": end,
                                "first_row": stripes[first][2], "size": acc}))
    return out
