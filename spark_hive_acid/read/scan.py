"""A table scan without Spark: a resolved table + read options -> snapshot -> plan -> schema ->
tasks -> Arrow.

A scan is cheap to make and immutable: it plans on first use (:attr:`TableScan.plan`), and
:meth:`TableScan.at` / :meth:`TableScan.select` return new scans. It is made from a
:class:`~.source.TableSource`, which the table's reference resolved (``catalog``): a scan opens
no metastore connection. The Spark glue (``spark.datasource``) and the in-process API
(``direct.read_table``) both use it.
"""
from __future__ import annotations

import dataclasses
import functools
import logging
import os
from dataclasses import dataclass
from typing import Any, Iterator, Optional, Sequence

import pyarrow as pa

from ..acid.char_types import text_limit
from ..acid.layout import TableLayout
from ..acid.names import ROW_ID_COLUMN
from ..acid.snapshot import ValidIdList
from ..acid.types import hive_to_arrow, normalize_read_type
from ..exceptions import SchemaMismatchError, UnsupportedTypeError
from ..acid.orc import is_acid_schema, open_orc, sniff_format
from .options import ReadOptions
from .plan import balance_slices, ReadTask, TablePlan, plan_table
from .pushdown import DataPredicate
from .reader import ROW_ID_TYPE, OutputColumn, ReadSpec, TaskReader
from .source import TableSource
from .time_travel import check_table_name, resolve as time_travel

log = logging.getLogger(__name__)



@dataclass(frozen=True)
class Column:
    name: str
    type: pa.DataType


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
    """One snapshot of one resolved table (see the module docstring)."""

    def __init__(self, source: TableSource, options: ReadOptions):
        self.source = source
        self.options = options
        self.fs, self.path, self.display = source.fs, source.path, source.display
        self.layout: Optional[TableLayout] = source.layout
        write_ids = options.write_ids
        if write_ids is not None and source.name is not None:
            check_table_name(write_ids, source.name, self.display)
        txns = options.txns if options.txns_given else source.txns
        self.write_ids: ValidIdList = time_travel(
            write_ids or source.write_ids, version=options.version_as_of,
            timestamp=options.timestamp_as_of, fs=self.fs, path=self.path,
            display=self.display, metastore=not source.log_times)
        self.txns: ValidIdList = txns
        self.insert_only: bool = (options.insert_only if options.insert_only is not None
                                  else source.insert_only)

    # --- copies ---------------------------------------------------------------------------------
    def at(self, write_ids: ValidIdList) -> "TableScan":
        """This scan at the snapshot ``write_ids`` (a new scan)."""
        return TableScan(self.source, dataclasses.replace(
            self.options, write_ids=write_ids, version_as_of=None, timestamp_as_of=None))

    def select(self, columns: Optional[Sequence[str]]) -> "TableScan":
        """This scan returning ``columns`` (None: all) by default (a new scan)."""
        return TableScan(self.source, dataclasses.replace(
            self.options, columns=tuple(columns) if columns is not None else None))

    def with_options(self, **changes: Any) -> "TableScan":
        """This scan with read settings changed (``split_bytes=...``; a new scan)."""
        return TableScan(self.source, dataclasses.replace(self.options, **changes))

    # --- the plan (read on first use) -----------------------------------------------------------
    @functools.cached_property
    def plan(self) -> TablePlan:
        return plan_table(self.fs, self.path, self.write_ids, self.txns,
                          insert_only=self.insert_only, split_bytes=self.options.split_bytes,
                          has_layout=self.layout is not None,
                          known_partitions=self.source.known_partitions,
                          tree=self.source.tree)

    @functools.cached_property
    def data_columns(self) -> list[Column]:
        return self._data_columns()

    @functools.cached_property
    def partition_columns(self) -> list[Column]:
        return self._partition_columns()

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
        if not names and self.layout is not None:
            # no partition directory yet (an empty table): the declared columns still exist
            names = [n for n, _ in self.layout.partition_columns]
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

    def read_spec(self, arrow_schema: pa.Schema, predicate: Optional[DataPredicate] = None,
                  predicate_columns: Sequence[int] = ()) -> ReadSpec:
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
            text_limits=tuple(text_limit(t) for _, t in self.layout.columns)
            if self.layout is not None else (),
        )

    def tasks(self, min_tasks: Optional[int] = None) -> list[ReadTask]:
        """The plan bin-packed into tasks; with fewer bytes than ``splitSize`` per core, big
        files are cut so that every core gets a task (the plan itself is not changed)."""
        min_tasks = min_tasks or (os.cpu_count() or 2)
        plan = self.plan
        total = sum(s.size for s in plan.slices)
        target = max(1, min(self.options.split_bytes, -(-total // min_tasks)))
        if target < self.options.split_bytes:
            plan = dataclasses.replace(plan, slices=balance_slices(self.fs, plan.slices, target))
        return plan.tasks(self.options.split_bytes, min_tasks)

    def to_arrow(self, columns: Optional[Sequence[str]] = None) -> pa.Table:
        schema, batches = self.batches(columns)
        return pa.Table.from_batches(list(batches), schema=schema)

    def batches(self, columns: Optional[Sequence[str]] = None
                ) -> tuple[pa.Schema, Iterator[pa.RecordBatch]]:
        """The rows in this process, a batch at a time (``to_arrow`` without holding them all);
        ``columns`` may name ``row__id``."""
        cols = self.default_columns() if columns is None else \
            [c for c in self.all_columns(True) if c.name.lower() in {x.lower() for x in columns}]
        schema = pa.schema([pa.field(c.name, c.type) for c in cols])
        reader = TaskReader(self.fs, self.read_spec(schema))
        return schema, (b for t in self.tasks() for b in reader.read(t))
