"""A table scan without Spark: options -> snapshot -> plan -> schema -> tasks -> Arrow.

The Spark glue (``datasource.py``) and the in-process API (:func:`read_table`) both use it.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

import pyarrow as pa

from ..acid.layout import TableLayout, load_layout
from ..acid.snapshot import ValidIdList
from ..acid.types import hive_to_arrow, normalize_read_type
from ..exceptions import SchemaMismatchError, TableNotFoundError, UnsupportedTypeError
from ..io.filesystem import FileSystem, get_filesystem
from ..io.orc import is_acid_schema, open_orc, sniff_format
from .options import ReadOptions
from .plan import INSERT_ONLY, ReadTask, TablePlan, plan_table
from .reader import ROW_ID_TYPE, OutputColumn, ReadSpec, TaskReader

log = logging.getLogger(__name__)

ROW_ID_COLUMN = "row__id"


@dataclass(frozen=True)
class Column:
    name: str
    type: pa.DataType


def _snapshot_from_log(fs: FileSystem, path: str) -> Optional[ValidIdList]:
    try:
        from ..acid import txnlog
    except ImportError:
        return None
    return txnlog.read_snapshot(fs, path)


def _read_type(t: pa.DataType, name: str) -> pa.DataType:
    """The emitted type; an unsupported type (uniontype) is kept as-is and refused only if the
    column is actually read, so ``columns`` can leave it out."""
    try:
        return normalize_read_type(t, name)
    except UnsupportedTypeError:
        return t


def _check_supported(col: "Column") -> None:
    normalize_read_type(col.type, col.name)  # raises UnsupportedTypeError naming the column


def _infer_partition_type(values: Sequence[Optional[str]]) -> pa.DataType:
    """Spark-style inference: integers as int/bigint, anything else string."""
    present = [v for v in values if v is not None]
    if not present:
        return pa.string()
    try:
        ints = [int(v) for v in present]
    except ValueError:
        return pa.string()
    if any(v.strip() != v or (v.startswith("0") and len(v) > 1) or v.startswith("+") for v in present):
        return pa.string()  # leading zeros etc. would not round-trip
    if all(-(1 << 31) <= i < (1 << 31) for i in ints):
        return pa.int32()
    if all(-(1 << 63) <= i < (1 << 63) for i in ints):
        return pa.int64()
    return pa.string()


class TableScan:
    """One snapshot of one table, planned once."""

    def __init__(self, options: ReadOptions | Mapping[str, str]):
        self.options = options if isinstance(options, ReadOptions) else ReadOptions.parse(options)
        self.fs, self.path = get_filesystem(self.options.path, self.options.options)
        st = self.fs.status(self.path)
        if st is None:
            raise TableNotFoundError(
                f"Table path not found: {self.options.path}. Check the path, or create the table "
                "with df.write.format('hiveacid').save(path).")
        if not st.is_dir:
            raise TableNotFoundError(f"Table path {self.options.path} is a file, not a table directory")
        self.layout: Optional[TableLayout] = load_layout(self.fs, self.path)
        write_ids = self.options.write_ids
        if write_ids is None:
            write_ids = _snapshot_from_log(self.fs, self.path) or ValidIdList.all_valid()
        self.write_ids = write_ids
        insert_only = self.options.insert_only
        if insert_only is None:
            insert_only = bool(self.layout and self.layout.insert_only)
        self.insert_only = insert_only
        self.plan: TablePlan = plan_table(
            self.fs, self.path, write_ids, self.options.txns, insert_only=insert_only,
            split_bytes=self.options.split_bytes, has_layout=self.layout is not None)
        self.data_columns = self._data_columns()
        self.partition_columns = self._partition_columns()

    # --- schema ---------------------------------------------------------------------------------
    def _data_columns(self) -> list[Column]:
        if self.layout is not None:
            return [Column(n, hive_to_arrow(t, n)) for n, t in self.layout.columns]
        if self.plan.schema_file is None:
            raise SchemaMismatchError(
                f"Cannot determine the schema of {self.options.path}: the snapshot has no data "
                "files. Pass the schema with spark.read.schema(...).")
        path = self.plan.schema_file
        if sniff_format(self.fs, path) == "parquet":
            import pyarrow.parquet as pq

            with self.fs.open_input(path) as fh:
                schema = pq.read_schema(fh)
        else:
            schema = open_orc(self.fs, path, self._flush_of(path)).schema
        fields = list(schema.field(5).type) if is_acid_schema(schema) else list(schema)
        return [Column(f.name, _read_type(f.type, f.name)) for f in fields]

    def _flush_of(self, path: str) -> Optional[int]:
        for s in self.plan.slices:
            if s.path == path:
                return s.flush_length
        return None

    def _partition_columns(self) -> list[Column]:
        names = self.plan.partition_names
        if self.layout is not None and self.layout.partition_columns:
            declared = {n.lower(): t for n, t in self.layout.partition_columns}
            return [Column(n, hive_to_arrow(declared.get(n.lower(), "string"), n)) for n in names]
        cols = []
        for i, n in enumerate(names):
            cols.append(Column(n, _infer_partition_type([p.values[i] for p in self.plan.partitions])))
        return cols

    def all_columns(self, include_row_id: bool) -> list[Column]:
        cols = [Column(ROW_ID_COLUMN, ROW_ID_TYPE)] if include_row_id else []
        return cols + self.data_columns + self.partition_columns

    def default_columns(self) -> list[Column]:
        """The columns a load() returns: the ``columns`` option, else all (+ row__id)."""
        every = self.all_columns(self.options.include_row_id)
        if not self.options.columns:
            for c in every:
                _check_supported(c)
            return every
        by_name = {c.name.lower(): c for c in self.all_columns(True)}
        out = []
        for name in self.options.columns:
            col = by_name.get(name.lower())
            if col is None:
                raise SchemaMismatchError(
                    f"Option columns names '{name}', which {self.options.path} does not have; "
                    f"columns are: {', '.join(c.name for c in every)}")
            _check_supported(col)
            out.append(col)
        return out

    # --- reading --------------------------------------------------------------------------------
    def output_columns(self, names: Sequence[str]) -> tuple[OutputColumn, ...]:
        data_idx = {c.name.lower(): i for i, c in enumerate(self.data_columns)}
        part_idx = {c.name.lower(): i for i, c in enumerate(self.partition_columns)}
        out = []
        for name in names:
            low = name.lower()
            if low == ROW_ID_COLUMN:
                out.append(OutputColumn("row_id", 0, name))
            elif low in data_idx:
                out.append(OutputColumn("data", data_idx[low], name))
            elif low in part_idx:
                out.append(OutputColumn("partition", part_idx[low], name))
            else:
                raise SchemaMismatchError(
                    f"Column '{name}' of the requested schema does not exist in {self.options.path}; "
                    f"columns are: {', '.join(c.name for c in self.all_columns(True))}")
        return tuple(out)

    def read_spec(self, arrow_schema: pa.Schema, predicate=None, predicate_columns=()) -> ReadSpec:
        return ReadSpec(
            columns=self.output_columns(arrow_schema.names),
            arrow_schema=arrow_schema,
            data_types=tuple(c.type for c in self.data_columns),
            data_names=tuple(c.name for c in self.data_columns),
            partition_values=tuple(p.values for p in self.plan.partitions),
            write_ids=self.write_ids,
            max_delete_events=self.options.max_delete_events,
            predicate=predicate,
            predicate_columns=tuple(predicate_columns),
        )

    def tasks(self, min_tasks: Optional[int] = None) -> list[ReadTask]:
        return self.plan.tasks(self.options.split_bytes, min_tasks or (os.cpu_count() or 2))

    def to_arrow(self, columns: Optional[Sequence[str]] = None) -> pa.Table:
        cols = self.default_columns() if columns is None else \
            [c for c in self.all_columns(True) if c.name.lower() in {x.lower() for x in columns}]
        schema = pa.schema([pa.field(c.name, c.type) for c in cols])
        reader = TaskReader(self.fs, self.read_spec(schema))
        batches = [b for t in self.tasks() for b in reader.read(t)]
        return pa.Table.from_batches(batches, schema=schema)


def read_table(path: str, **options: str) -> pa.Table:
    """Read a table in-process (no Spark), e.g. ``read_table(p, validWriteIds='db.t:5:...')``."""
    opts = {"path": path, **{k: str(v).lower() if isinstance(v, bool) else str(v)
                             for k, v in options.items()}}
    return TableScan(opts).to_arrow()
