"""The thin Spark glue: the ``hiveacid`` Python Data Source (reader and writer)."""
from __future__ import annotations

import logging
from typing import Iterator, Optional

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.pandas.types import from_arrow_type, to_arrow_schema
from pyspark.sql.types import LongType, StructField, StructType

from .. import options as opt
from ..exceptions import InvalidOptionError
from ..read.plan import ReadTask
from ..read.pushdown import DataPredicate, compile_filter, evaluate_all
from ..read.reader import TaskReader
from ..catalog import open_scan
from ..read.scan import TableScan
from ..stream.changefeed import wants_change_feed
from ..txn.hms_read import ReadLease
from ._compat import pushdown_enabled
from .sql_route import ROUTE, refuse_catalog_table
from .streaming import (
    ChangeFeedReader, change_feed_schema, create_stream_reader, create_stream_writer,
)
from .writer import HiveAcidArrowWriter, create_writer

log = logging.getLogger(__name__)

FORMAT_NAME = "hiveacid"
ROW_COUNT = "row_count"
ROW_COUNT_SCHEMA = StructType([StructField(ROW_COUNT, LongType(), False)])


class HiveAcidPartition(InputPartition):
    """One Spark task: a picklable ReadTask."""

    def __init__(self, task):
        super().__init__(task)
        self.task = task


def _spark_schema(columns) -> StructType:
    return StructType([StructField(c.name, from_arrow_type(c.type), True) for c in columns])


class HiveAcidDataSource(DataSource):
    """``spark.read.format("hiveacid")`` and ``df.write.format("hiveacid")``."""

    @classmethod
    def name(cls) -> str:
        return FORMAT_NAME

    def _named(self) -> dict:
        """The options, which must name a table: PySpark 4.3 hands a catalog table's source (after
        CREATE TABLE, saveAsTable, insertInto) none, so no table can be found from them."""
        options = dict(self.options)
        refuse_catalog_table(options)
        if not {str(k).lower() for k in options} & {"path", "paths", "table"}:
            raise InvalidOptionError(
                f"{FORMAT_NAME} was given no table (no path, no option table). A table of "
                "Spark's catalog (CREATE TABLE ... USING hiveacid, saveAsTable, insertInto) "
                "reaches a Python data source without its options in PySpark 4.3, so it cannot "
                f"work: {ROUTE}. DataFrames: spark.read.format('hiveacid').load(path), "
                "df.write.format('hiveacid').save(path)")
        return options

    def _scan(self) -> TableScan:
        scan = getattr(self, "_cached_scan", None)
        if scan is None:
            options = self._named()
            lower = {k.lower(): v for k, v in options.items()}
            if lower.get("table") and opt.value(lower, "readLock"):
                # before the snapshot and the listing: a clean must wait for this read
                self._lease = ReadLease.open(lower)
            scan = open_scan(options, in_worker=True)
            self._cached_scan = scan
        return scan

    def schema(self) -> StructType:
        if wants_change_feed(self.options):
            return change_feed_schema(self._named())
        scan = self._scan()
        if scan.options.count_rows:
            return ROW_COUNT_SCHEMA
        return _spark_schema(scan.default_columns())

    def reader(self, schema: StructType) -> "DataSourceReader":
        if wants_change_feed(self.options):
            return ChangeFeedReader(self._named(), schema)
        scan = self._scan()
        cls = HiveAcidPushdownReader if pushdown_enabled() else HiveAcidReader
        reader = cls(scan, schema)
        reader.lease = getattr(self, "_lease", None)
        return reader

    def writer(self, schema: StructType, overwrite: bool) -> HiveAcidArrowWriter:
        return create_writer(self._named(), schema, overwrite)

    def streamReader(self, schema: StructType):  # noqa: N802 (PySpark's name)
        return create_stream_reader(self._named(), schema)

    def streamWriter(self, schema: StructType, overwrite: bool):  # noqa: N802 (PySpark's name)
        return create_stream_writer(self._named(), schema, overwrite)


class HiveAcidReader(DataSourceReader):
    def __init__(self, scan, schema: StructType):
        self.count_rows = scan.options.count_rows
        if self.count_rows and schema != ROW_COUNT_SCHEMA:
            raise InvalidOptionError(
                f"Option countRows=true reads the schema {ROW_COUNT_SCHEMA.simpleString()}; "
                f"drop the user schema {schema.simpleString()}")
        self.output_schema = to_arrow_schema(schema, timezone="UTC")
        # counting reads no column: the deletes and filters still apply, only the ACID keys
        # they need are decoded (none where stripe statistics prove them)
        self.arrow_schema = pa.schema([]) if self.count_rows else self.output_schema
        self.scan = scan
        self.fs = scan.fs
        self.conds: list = []
        self.lease: Optional[ReadLease] = None  # metastore reads with readLock=true
        self._make_spec()

    def _make_spec(self) -> None:
        """The executors' read spec. Built eagerly: Spark pickles the reader for the executors
        before (or independently of) calling partitions()."""
        part_names = {c.name.lower() for c in self.scan.partition_columns}
        data_idx = tuple((c.name.lower(), i) for i, c in enumerate(self.scan.data_columns))
        data_conds = tuple(c for c in self.conds if c.column not in part_names)
        predicate = DataPredicate(data_conds, data_idx) if data_conds else None
        self.spec = self.scan.read_spec(self.arrow_schema, predicate,
                                        predicate.column_indexes if predicate else ())

    def partitions(self) -> list[InputPartition]:
        plan = self.scan.plan
        part_names = {c.name.lower(): i for i, c in enumerate(self.scan.partition_columns)}
        part_conds = [c for c in self.conds if c.column in part_names]
        keep = None
        if part_conds and plan.partitions:
            cols = {}
            for name, i in part_names.items():
                typ = self.scan.partition_columns[i].type
                cols[name] = pa.array([p.values[i] for p in plan.partitions], pa.string()).cast(typ)
            mask = evaluate_all(part_conds, cols)
            keep = {i for i, v in enumerate(mask.to_pylist()) if v}
        tasks = self.scan.tasks()
        if keep is not None:
            tasks = [t for t in (self._prune(t, keep) for t in tasks) if t is not None]
        return [HiveAcidPartition(t) for t in tasks]

    @staticmethod
    def _prune(task: ReadTask, keep: set[int]) -> Optional[ReadTask]:
        slices = tuple(s for s in task.slices if s.partition_index in keep)
        return ReadTask(slices) if slices else None

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        task = getattr(partition, "task", None)
        if task is None:  # Spark turns an empty partition list into [InputPartition(None)]
            return iter(())
        batches = TaskReader(self.fs, self.spec).read(task)
        if self.lease is not None:
            batches = _beating(batches, self.lease.task_heartbeat())
        if self.count_rows:
            return iter([self._row_count(sum(b.num_rows for b in batches))])
        return batches

    def _row_count(self, rows: int) -> pa.RecordBatch:
        return pa.RecordBatch.from_arrays([pa.array([rows], pa.int64())], schema=self.output_schema)

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("scan", None)  # executors need only the spec, the fs and their task
        return state


def _beating(batches: Iterator[pa.RecordBatch], beat) -> Iterator[pa.RecordBatch]:
    """The batches, heartbeating the read lease before the first and between them."""
    beat.maybe()
    for b in batches:
        yield b
        beat.maybe()


class HiveAcidPushdownReader(HiveAcidReader):
    def pushFilters(self, filters):
        types = {c.name.lower(): c.type for c in self.scan.data_columns + self.scan.partition_columns}
        for f in filters:
            cond = compile_filter(f, types)
            if cond is None:
                yield f
            else:
                self.conds.append(cond)
        self._make_spec()
