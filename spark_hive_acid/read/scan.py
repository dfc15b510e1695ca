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
from ..acid.logstate import read_snapshot
from ..acid.snapshot import ValidIdList
from ..acid.types import hive_to_arrow, normalize_read_type
from ..exceptions import SchemaMismatchError, TableNotFoundError, UnsupportedTypeError
from ..io.registry import get_filesystem
from ..acid.orc import is_acid_schema, open_orc, sniff_format
from .options import ReadOptions
from .plan import balance_slices, ReadTask, TablePlan, plan_table
from .reader import ROW_ID_TYPE, OutputColumn, ReadSpec, TaskReader
from .time_travel import check_table_name, resolve as time_travel

log = logging.getLogger(__name__)

ROW_ID_COLUMN = "row__id"


@dataclass(frozen=True)
class Column:
    name: str
    type: pa.DataType


def layout_of(table) -> TableLayout:
    """The layout a metastore table declares (columns, partitions, bucketing, properties)."""
    return table.to_layout()


def _from_metastore(options: ReadOptions):
    """(TableInfo, known partitions, (write ids, txns)) of the ``table`` option's table."""
    from ..metastore.api import client_from_options, table_from_options

    raw = options.options
    db, tbl = table_from_options(raw)
    with client_from_options(raw) as client:
        table = client.get_table(db, tbl)
        write_ids, txns = client.read_snapshot(table.db, table.name)
        known = None
        if table.partition_keys:
            parts = client.list_partitions(table.db, table.name)
            known = (table.partition_names,
                     [(get_filesystem(p.location, raw)[1], tuple(p.values)) for p in parts])
    if table.is_insert_only and table.input_format and "orc" not in table.input_format.lower() \
            and "parquet" not in table.input_format.lower():
        raise UnsupportedTypeError(
            f"Table {table.full_name} stores its files as {table.input_format}: only ORC and "
            "Parquet insert-only tables are read")
    log.info("metastore snapshot of %s: write ids %s", table.full_name, write_ids.to_string())
    return table, known, (write_ids, txns)


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
        self.table_info = None
        known_partitions = None
        metastore_ids: Optional[tuple[ValidIdList, ValidIdList]] = None
        if self.options.table:
            self.table_info, known_partitions, metastore_ids = _from_metastore(self.options)
            location = self.table_info.location
        else:
            location = self.options.path
        self.fs, self.path = get_filesystem(location, self.options.options)
        self.display = self.options.table or self.options.path
        st = self.fs.status(self.path)
        if st is None:
            raise TableNotFoundError(
                f"Table path not found: {self.display}. Check the path, or create the table "
                "with df.write.format('hiveacid').save(path).")
        if not st.is_dir:
            raise TableNotFoundError(f"Table path {self.display} is a file, not a table directory")
        if self.table_info is not None:
            self.layout: Optional[TableLayout] = layout_of(self.table_info)
        else:
            self.layout = load_layout(self.fs, self.path)
        write_ids = self.options.write_ids
        txns = self.options.txns
        if write_ids is not None and self.table_info is not None:
            check_table_name(write_ids, self.table_info.full_name, self.display)
        if metastore_ids is not None:
            write_ids = write_ids or metastore_ids[0]
            txns = txns if self.options.txns_given else metastore_ids[1]
        if write_ids is None:
            write_ids = read_snapshot(self.fs, self.path) or ValidIdList.all_valid()
        write_ids = time_travel(
            write_ids, version=self.options.version_as_of, timestamp=self.options.timestamp_as_of,
            fs=self.fs, path=self.path, display=self.display,
            metastore=self.table_info is not None)
        self.write_ids = write_ids
        self.txns = txns
        insert_only = self.options.insert_only
        if insert_only is None and self.table_info is not None:
            insert_only = self.table_info.is_insert_only
        if insert_only is None:
            insert_only = bool(self.layout and self.layout.insert_only)
        self.insert_only = insert_only
        self.plan: TablePlan = plan_table(
            self.fs, self.path, write_ids, txns, insert_only=insert_only,
            split_bytes=self.options.split_bytes, has_layout=self.layout is not None,
            known_partitions=known_partitions)
        self.data_columns = self._data_columns()
        self.partition_columns = self._partition_columns()
        self._balanced: Optional[int] = None  # the target tasks() last cut big slices to

    # --- schema ---------------------------------------------------------------------------------
    def _data_columns(self) -> list[Column]:
        if self.layout is not None:
            return [Column(n, hive_to_arrow(t, n)) for n, t in self.layout.columns]
        if self.plan.schema_file is None:
            raise SchemaMismatchError(
                f"Cannot determine the schema of {self.display}: the snapshot has no data "
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
                    f"Option columns names '{name}', which {self.display} does not have; "
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
                    f"Column '{name}' of the requested schema does not exist in {self.display}; "
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
            rebase_datetime=self.options.rebase_datetime,
        )

    def tasks(self, min_tasks: Optional[int] = None) -> list[ReadTask]:
        min_tasks = min_tasks or (os.cpu_count() or 2)
        total = sum(s.size for s in self.plan.slices)
        target = max(1, min(self.options.split_bytes, -(-total // min_tasks)))
        if target < self.options.split_bytes and self._balanced != target:
            # fewer bytes than splitSize per core: cut big files so that every core gets a task
            self.plan.slices = balance_slices(self.fs, self.plan.slices, target)
            self._balanced = target
        return self.plan.tasks(self.options.split_bytes, min_tasks)

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
