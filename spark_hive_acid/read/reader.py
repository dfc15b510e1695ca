"""Reading one task: ORC stripes -> filtered, projected Arrow record batches.

Per slice: open the file, read stripe by stripe only the columns needed (ACID key columns only
when deletes apply or ROW__IDs are requested), drop events of invalid write ids and deleted keys
with vectorised masks, then assemble the output columns in the exact order and types the
caller's Arrow schema asks for. Memory is bounded by a stripe, plus the delete-event set.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Iterator, Optional, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as po

from ..acid import bucket_codec
from ..acid.char_types import TextLimit, enforce
from ..acid.snapshot import ValidIdList
from ..acid.types import can_convert
from ..exceptions import CorruptFileError, SchemaMismatchError
from ..io.filesystem import FileSystem
from ..acid.orc import (
    acid_field_names, check_acid_key_types, is_acid_schema, key_arrays, open_orc,
)
from .calendar import columns_to_rebase, rebase, stats_decide_exactly
from .slow_stripes import read_stripe_microseconds
from .delete_events import DeleteEventSet
from .delete_sets import delete_set_for
from .options import DEFAULT_MAX_DELETE_EVENTS
from .pushdown import DataPredicate
from .stripe_stats import StripeKeys, stripe_keys, stripes_to_skip
from .plan import INSERT_ONLY, FileSlice, ReadTask
from .streaming_deletes import StreamingDeletes

log = logging.getLogger(__name__)

ASSEMBLY_ROWS = 256 * 1024  # rows per yielded batch at most
_UNIT_RANK = {"s": 0, "ms": 1, "us": 2, "ns": 3}

#: (originalWriteId, bucketProperty, rowId) of a batch's rows.
RowKeys = tuple[np.ndarray, np.ndarray, np.ndarray]

ROW_ID_TYPE = pa.struct([pa.field("writeId", pa.int64()), pa.field("bucketId", pa.int32()),
                         pa.field("rowId", pa.int64())])


@dataclass(frozen=True)
class OutputColumn:
    """One output column: the row id, a data column (by table position) or a partition column."""

    kind: str  # "row_id" | "data" | "partition"
    index: int  # data: position in the table's data columns; partition: position in values
    name: str


@dataclass(frozen=True)
class ReadSpec:
    """Everything an executor needs besides the task (picklable)."""

    columns: tuple[OutputColumn, ...]
    arrow_schema: pa.Schema  # exactly what Spark expects
    data_types: tuple[pa.DataType, ...]  # table's data column types (normalised Arrow)
    data_names: tuple[str, ...]
    partition_values: tuple[tuple[Optional[str], ...], ...]  # per partition index
    write_ids: ValidIdList
    max_delete_events: int = DEFAULT_MAX_DELETE_EVENTS
    predicate_columns: tuple[int, ...] = ()  # data column positions the predicate reads
    predicate: Optional[DataPredicate] = None
    rebase_datetime: bool = True  # read hybrid-calendar files' old dates as written (calendar.py)
    text_limits: tuple[TextLimit, ...] = ()  # per data column: char(n)/varchar(n) (char_types)


@dataclass(frozen=True)
class _SliceLayout:
    """How one file is read: its column names and the filtering it needs."""

    acid: bool
    names: dict  # canonical ACID field name -> this file's spelling
    file_cols: list  # the file's data column names, by position
    present: list  # table positions of needed data columns that the file has
    read_cols: list  # ORC columns to read
    read_keys: bool  # read ROW__ID columns from the file
    synthetic_keys: bool  # compute ROW__IDs (original / raw files)
    check_current_write_id: bool
    deletes: Union[DeleteEventSet, StreamingDeletes, None]
    rebase: frozenset = frozenset()  # table positions of hybrid-calendar temporal columns


class TaskReader:
    """Reads the slices of one task and yields record batches of ``spec.arrow_schema``."""

    def __init__(self, fs: FileSystem, spec: ReadSpec):
        self.fs = fs
        self.spec = spec
        self.needs_row_id = any(c.kind == "row_id" for c in spec.columns)
        data_needed = {c.index for c in spec.columns if c.kind == "data"}
        data_needed.update(spec.predicate_columns)
        self.data_needed = sorted(data_needed)

    def read(self, task: ReadTask) -> Iterator[pa.RecordBatch]:
        for s in task.slices:
            yield from self.read_slice(s)

    # ------------------------------------------------------------------------------------------
    def read_slice(self, s: FileSlice) -> Iterator[pa.RecordBatch]:
        if s.file_format == "parquet":
            yield from self._read_parquet(s)
            return
        orc = open_orc(self.fs, s.path, s.flush_length,
                       size=s.file_size if s.flush_length is None else None)
        if orc.nrows == 0:
            return
        layout = self._layout(s, orc.schema)
        if self.spec.rebase_datetime:
            layout = replace(layout, rebase=columns_to_rebase(orc, s.path, layout.acid, layout.present))
        end = s.end_stripe if s.end_stripe is not None else orc.nstripes
        skipped, known = self._stripe_facts(s, layout, end)
        row_base = s.first_row
        for stripe in range(s.first_stripe, end):
            if stripe in skipped:
                row_base += skipped[stripe]  # still counts for synthetic row ids
                continue
            keys = known.get(stripe)
            batch = self._read_stripe(orc, s, stripe, _columns_to_decode(layout, keys))
            # assemble in bounded chunks: the masks, casts and filtered copies of a whole 64 MB
            # stripe would otherwise all be alive at once
            for offset in range(0, batch.num_rows, ASSEMBLY_ROWS):
                chunk = batch.slice(offset, ASSEMBLY_ROWS)
                out = self._assemble(s, layout, chunk, row_base + offset, keys, offset)
                if out is not None and out.num_rows:
                    yield out
            row_base += batch.num_rows

    def _layout(self, s: FileSlice, schema: pa.Schema) -> "_SliceLayout":
        """Which columns of this file to read, and what filtering it needs."""
        acid = is_acid_schema(schema)
        if acid:
            check_acid_key_types(schema, s.path)
        names = acid_field_names(schema) if acid else {}
        file_cols = [f.name for f in schema.field(5).type] if acid else list(schema.names)
        deletes = (delete_set_for(self.fs, s, self.spec.write_ids, self.spec.max_delete_events)
                   if s.kind != INSERT_ONLY else None)
        has_deletes = deletes is not None and len(deletes) > 0
        need_keys = self.needs_row_id or has_deletes
        check_cur = acid and s.check_current_write_id
        present = [i for i in self.data_needed if i < len(file_cols)]
        read_cols: list[str] = []
        if acid:
            if need_keys:
                read_cols += [names["originalTransaction"], names["bucket"], names["rowId"]]
            if check_cur:
                read_cols.append(names["currentTransaction"])
            if present and all("." not in file_cols[i] for i in present):
                read_cols += [f"{names['row']}.{file_cols[i]}" for i in present]
            elif present:
                read_cols.append(names["row"])
        else:
            read_cols += [file_cols[i] for i in present]
        if not read_cols:  # e.g. count(*) without deletes: read the cheapest column
            read_cols = [names["operation"]] if acid else [file_cols[0]]
        synthetic = not acid and s.kind != INSERT_ONLY and need_keys
        return _SliceLayout(acid, names, file_cols, present, read_cols, need_keys and acid,
                            synthetic, check_cur, deletes if has_deletes else None)

    def _read_stripe(self, orc: po.ORCFile, s: FileSlice, stripe: int,
                     columns: list[str]) -> pa.RecordBatch:
        try:
            return orc.read_stripe(stripe, columns=columns)
        except pa.ArrowInvalid as e:
            if "out of range for nanosecond" not in str(e):
                raise CorruptFileError(f"Cannot read stripe {stripe} of ORC file {s.path}: {e}") from e
            return read_stripe_microseconds(self.fs, s, stripe, orc.schema)
        except OSError as e:
            raise CorruptFileError(f"Cannot read stripe {stripe} of ORC file {s.path}: {e}") from e

    def _keys(self, s: FileSlice, layout: "_SliceLayout", batch: pa.RecordBatch, row_base: int,
              known: Optional[StripeKeys] = None, offset: int = 0) -> Optional[RowKeys]:
        """(originalWriteId, bucketProperty, rowId) arrays of a batch, or None (no ROW__IDs).
        ``known``: what the stripe's statistics prove (those columns were not decoded);
        ``offset``: the batch's first row within its stripe."""
        n = batch.num_rows
        if layout.read_keys:
            names = layout.names
            if known is None:
                owid, bp, rid = key_arrays(batch, [names["originalTransaction"], names["bucket"],
                                                   names["rowId"]], s.path)
                return owid, bp, rid
            first = known.first_row_id
            return (np.full(n, known.write_id, dtype=np.int64),
                    np.full(n, known.bucket, dtype=np.int32),
                    key_arrays(batch, [names["rowId"]], s.path)[0] if first is None
                    else np.arange(first + offset, first + offset + n, dtype=np.int64))
        if layout.synthetic_keys:  # original / raw files: Hive's synthetic ROW__IDs
            first = s.row_offset + row_base
            bucket = s.bucket_id if s.synthetic_v0 else bucket_codec.encode(s.bucket_id, s.dir_statement_id)
            return (np.full(n, s.synthetic_write_id, dtype=np.int64),
                    np.full(n, bucket, dtype=np.int32),
                    np.arange(first, first + n, dtype=np.int64))
        return None

    def _assemble(self, s: FileSlice, layout: "_SliceLayout", batch: pa.RecordBatch,
                  row_base: int, known: Optional[StripeKeys] = None,
                  offset: int = 0) -> Optional[pa.RecordBatch]:
        n = batch.num_rows
        mask: Optional[np.ndarray] = None
        deletes = layout.deletes
        deleted: Optional[np.ndarray] = None
        keys: Optional[RowKeys] = None
        if (known is not None and known.first_row_id is not None and not self.needs_row_id
                and isinstance(deletes, DeleteEventSet)):
            # rows proven to be one (writeId, bucket) and a rowId range: look the range up directly
            deleted = deletes.deleted_range_mask(known.write_id, known.bucket,
                                                 known.first_row_id + offset, n)
        else:
            keys = self._keys(s, layout, batch, row_base, known, offset)
            if deletes is not None and keys is not None:
                deleted = deletes.deleted_mask(*keys)
        if layout.check_current_write_id:
            cur = key_arrays(batch, [layout.names["currentTransaction"]], s.path)[0]
            valid = self.spec.write_ids.valid_mask(cur)
            if not valid.all():
                mask = valid
        if deleted is not None:
            mask = ~deleted if mask is None else (mask & ~deleted)
        data = self._data_columns(s, layout, batch)
        if self.spec.predicate is not None:
            pred = self.spec.predicate(data)
            if pred is not None:
                keep = pc.fill_null(pred, False).to_numpy(zero_copy_only=False)
                mask = keep if mask is None else (mask & keep)
        arrays = []
        for col, field in zip(self.spec.columns, self.spec.arrow_schema):
            if col.kind == "data":
                arr = data[col.index]
            elif col.kind == "partition":
                arr = _constant(self.spec.partition_values[s.partition_index][col.index], field.type, n)
            elif keys is None:  # insert-only tables have no ROW__ID
                arr = pa.nulls(n, ROW_ID_TYPE)
            else:
                owid, bp, rid = keys
                arr = pa.StructArray.from_arrays(
                    [pa.array(owid, pa.int64()), pa.array(bp, pa.int32()), pa.array(rid, pa.int64())],
                    fields=list(ROW_ID_TYPE))
            if not arr.type.equals(field.type):
                arr = arr.cast(field.type)
            arrays.append(arr)
        out = _record_batch(arrays, self.spec.arrow_schema, n)
        if mask is not None:
            if not mask.any():
                return None
            out = out.filter(pa.array(mask))
        return out

    def _data_columns(self, s: FileSlice, layout: "_SliceLayout",
                      batch: pa.RecordBatch) -> dict[int, pa.Array]:
        """The needed data columns by table position, conformed to the table's types."""
        data: dict[int, pa.Array] = {}
        if layout.acid and layout.present:
            row = batch.column(layout.names["row"])
            if row.null_count:
                row = _struct_with_parent_nulls(row)
            for i in layout.present:
                data[i] = self._conform(_rebased(layout, i, row.field(layout.file_cols[i])), i, s)
        else:
            for i in layout.present:
                data[i] = self._conform(_rebased(layout, i, batch.column(layout.file_cols[i])), i, s)
        for i in self.data_needed:
            if i not in data:  # a file written before the column was added
                data[i] = pa.nulls(batch.num_rows, self.spec.data_types[i])
        return data

    def _stripe_facts(self, s: FileSlice, layout: "_SliceLayout",
                      end: int) -> tuple[dict[int, int], dict[int, StripeKeys]]:
        """What the slice's stripe statistics prove, read with one ``pyorc.Reader``:
        ``({stripe: rows} no row of which passes the pushed filters, {stripe: StripeKeys})``.
        An optimisation only: ``({}, {})`` is always correct."""
        conds = getattr(self.spec.predicate, "conds", ())
        if layout.rebase:  # statistics hold the raw hybrid values
            conds = tuple(c for c in conds if stats_decide_exactly(c))
        if any(self.spec.text_limits):  # statistics hold values as stored, before the rules
            limited = {n.lower() for n, lim in zip(self.spec.data_names, self.spec.text_limits)
                       if lim is not None}
            conds = tuple(c for c in conds if c.column not in limited)
        if s.flush_length is not None or not (conds or layout.read_keys):
            return {}, {}
        import pyorc

        try:
            with self.fs.open_input(s.path, size=s.file_size) as fh:
                stats = pyorc.Reader(fh)
                skipped = (stripes_to_skip(stats, conds, self._condition_paths(layout),
                                           s.first_stripe, end) if conds else {})
                names = layout.names
                known = (stripe_keys(stats, [names["originalTransaction"], names["bucket"],
                                             names["rowId"]], s.first_stripe, end)
                         if layout.read_keys else {})
                return skipped, known
        except Exception as e:  # noqa: BLE001 - statistics are an optimisation only
            log.debug("no stripe statistics for %s: %s", s.path, e)
            return {}, {}

    def _condition_paths(self, layout: "_SliceLayout") -> dict[str, Optional[str]]:
        """Each pushed condition's column as an ORC column path in this file (None: absent)."""
        paths: dict[str, Optional[str]] = {}
        index_of = self.spec.predicate.index_of if self.spec.predicate is not None else ()
        for name, i in index_of:
            if i >= len(layout.file_cols):
                paths[name] = None
            elif layout.acid:
                paths[name] = f"{layout.names['row']}.{layout.file_cols[i]}"
            else:
                paths[name] = layout.file_cols[i]
        return paths

    def _conform(self, arr: pa.Array, i: int, s: FileSlice) -> pa.Array:
        """Cast a file column to the table's type (schema evolution: widening only); a
        char(n) / varchar(n) column's values as Hive's readers return them."""
        limit = self.spec.text_limits[i] if i < len(self.spec.text_limits) else None
        if limit is not None:
            return enforce(self._cast(arr, i, s), limit)
        return self._cast(arr, i, s)

    def _cast(self, arr: pa.Array, i: int, s: FileSlice) -> pa.Array:
        target = self.spec.data_types[i]
        if arr.type.equals(target):
            return arr
        if not can_convert(arr.type, target, lossless=False):
            raise SchemaMismatchError(
                f"Column '{self.spec.data_names[i]}' (#{i + 1}) has type {arr.type} in {s.path} "
                f"but {target} in the table: only widening conversions are read. "
                "Read the other columns with option 'columns'.")
        try:
            if pa.types.is_timestamp(arr.type) and pa.types.is_timestamp(target):
                # Hive's nanoseconds -> Spark's microseconds: drop the digits; the other way
                # (compaction keeps nanoseconds) a value out of the finer range must fail
                finer = _UNIT_RANK[target.unit] > _UNIT_RANK[arr.type.unit]
                return arr.cast(target, safe=finer)
            return arr.cast(target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            raise SchemaMismatchError(
                f"Column '{self.spec.data_names[i]}' (#{i + 1}) has type {arr.type} in {s.path} "
                f"but {target} in the table: "
                f"cannot reconcile ({e}). Read the other columns with option 'columns'.") from e

    def _read_parquet(self, s: FileSlice) -> Iterator[pa.RecordBatch]:
        import pyarrow.parquet as pq

        with self.fs.open_input(s.path) as stream:
            try:
                # INT96 (Hive's and Spark's timestamps) as microseconds: pyarrow's default unit,
                # ns, silently wraps values outside 1677..2262
                pf = pq.ParquetFile(stream, coerce_int96_timestamp_unit="us")
            except (pa.ArrowInvalid, OSError) as e:
                raise CorruptFileError(f"Cannot read Parquet file {s.path}: {e}") from e
            file_cols = pf.schema_arrow.names
            present = [i for i in self.data_needed if i < len(file_cols)]
            cols = [file_cols[i] for i in present] or file_cols[:1]
            for batch in pf.iter_batches(columns=cols):
                layout = _SliceLayout(False, {}, file_cols, present, cols, False, False, False,
                                      None)
                out = self._assemble(s, layout, batch, 0)
                if out is not None and out.num_rows:
                    yield out


def _rebased(layout: "_SliceLayout", i: int, arr: pa.Array) -> pa.Array:
    return rebase(arr) if i in layout.rebase else arr


def _columns_to_decode(layout: "_SliceLayout", known: Optional[StripeKeys]) -> list[str]:
    """The slice's columns minus the key columns the stripe statistics make unnecessary."""
    if known is None:
        return list(layout.read_cols)
    names = layout.names
    skip = {names["originalTransaction"], names["bucket"]}
    if known.all_known:
        skip.add(names["rowId"])
    cols = [c for c in layout.read_cols if c not in skip]
    return cols or [names["operation"]]  # a row count needs one (cheap) column


def _struct_with_parent_nulls(row: pa.StructArray) -> pa.StructArray:
    """Children of a struct with null parents: push the parent's nulls down (flatten does)."""
    fields = row.flatten()
    return pa.StructArray.from_arrays(fields, fields=list(row.type))


def _record_batch(arrays: list[pa.Array], schema: pa.Schema, num_rows: int) -> pa.RecordBatch:
    """A batch of ``arrays``; with no columns (a ``count()``), one that still has ``num_rows``
    rows, which ``RecordBatch.from_arrays([])`` would lose (it has 0 rows and cannot be filtered)."""
    if arrays:
        return pa.RecordBatch.from_arrays(arrays, schema=schema)
    empty = pa.StructArray.from_buffers(pa.struct([]), num_rows, [None])
    return pa.RecordBatch.from_struct_array(empty)


def _constant(value: Optional[object], typ: pa.DataType, n: int) -> pa.Array:
    if value is None:
        return pa.nulls(n, typ)
    single = pa.array([value], pa.string()).cast(typ)
    return single.take(pa.array(np.zeros(n, dtype=np.int32)))
