"""The thin Spark glue of streaming: ``writeStream.format("hiveacid")`` (the sink) and
``readStream.format("hiveacid")`` (the source, also the change feed).

The sink. PySpark calls ``DataSource.streamWriter`` in two places: in the planning worker once per
micro-batch (the writer is pickled to that batch's tasks) and in the commit worker (a fresh writer
only to call ``commit(messages, batchId)``). So the planning call begins the batch's transaction
exactly as a batch write does (``spark.writer.create_writer``); tasks stage files under its write
id and send, with their files, that writer (the handle, the table) and the query id (a local
property of the task); the commit worker resumes the transaction from the messages and commits it
as that batch (``stream.sink.commit_batch``: exactly once).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any, Iterator, List, Optional

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSourceReader, DataSourceStreamArrowWriter, DataSourceStreamReader, InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable, ReadLimit, ReadMaxFiles, ReadMaxRows, SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from ..acid.logstate import ABORTED, COMMITTED, OPEN
from ..acid.names import parse_acid_dir
from ..catalog import metastore_table, open_scan, state_in_snapshot
from ..exceptions import InvalidOptionError, PathNotFoundError, UnsupportedOperationError
from ..io.filesystem import FileSystem
from ..txn.commit_marker import MARKER
from ..read.plan import ReadTask
from ..read.changes import read_changes
from ..read.reader import ReadSpec, TaskReader
from ..stream.changefeed import (
    batch_change_feed, feed_columns, read_options, stream_change_batch, wants_change_feed,
)
from ..stream.sink import claim_for_task, commit_batch
from ..stream.source import PENDING, WRITE_ID, SourceOptions, StreamPlanner
from ..txn.hms import TransactionHandle
from ..write.task_writer import StagedFile
from ._compat import in_stream_commit_worker, stream_batch_of_task
from .writer import HiveAcidArrowWriter, HiveAcidCommitMessage, create_writer

log = logging.getLogger(__name__)


class StreamBatchWriter(HiveAcidArrowWriter):
    """The batch writer of one micro-batch: commits with the query's progress, exactly once."""

    query_id: Optional[str] = None
    batch_id: int = -1

    def _commit_resumed(self, txn: Any, staged: list[StagedFile], empty: list[str]) -> None:
        if self.table.keeps_log:
            commit_batch(self.fs, self.spec, txn, staged, str(self.query_id), self.batch_id,
                         path_mode=True)
        else:
            commit_batch(self.fs, self.spec, txn, staged, str(self.query_id), self.batch_id,
                         path_mode=False, write_id_state=self._state,
                         abort_attempt=self._abort_attempt)

    def _state(self, claim: dict) -> str:
        """An earlier attempt's state: the metastore's, corrected where it cannot know (a write
        id above the high watermark whose transaction ended: Hive 4 lists an aborted write id
        only once a later one commits; a write id Hive 3.1 "forgot": see stream.sink)."""
        table = metastore_table(self.table, "the streaming sink's claims")
        write_id, txn_id = int(claim["writeId"]), claim.get("txnId")
        with table.client() as client:
            snapshot = client.read_snapshot(table.db, table.name)[0]
            state = state_in_snapshot(snapshot, write_id)
            if state == OPEN and txn_id is not None and write_id > snapshot.high_watermark:
                status = client.txn_states().get(int(txn_id))
                state = OPEN if status is not None and status.is_open else ABORTED
            if state == COMMITTED and not self._markers_of(table, client, write_id):
                state = ABORTED
        return state

    def _markers_of(self, table: Any, client: Any, write_id: int) -> bool:
        """Whether a delta of ``write_id`` holding its commit marker is in the table (in the
        table directory, or in the partitions the metastore knows)."""
        dirs = [self.spec.table_path]
        if self.spec.partition_names:
            dirs = [d for _, d in table.partition_dirs(client)]
        for d in dirs:
            try:
                entries = self.fs.list_dir(d)
            except PathNotFoundError:
                continue
            for e in entries:
                parsed = parse_acid_dir(e.name)
                if (parsed is not None and not parsed.is_base and not parsed.is_delete
                        and parsed.min_write_id == parsed.max_write_id == write_id
                        and self.fs.exists(self.fs.join(d, e.name, MARKER))):
                    return True
        return False

    def _abort_attempt(self, claim: dict) -> None:
        """Abort an earlier attempt's metastore transaction (named by its claim) and remove what
        it left, as its own handle would."""
        w = int(claim["writeId"])
        handle = self.handle
        assert isinstance(handle, TransactionHandle), "metastore mode: a metastore transaction"
        earlier = replace(handle, txn_id=int(claim.get("txnId", w)), write_id=w, lock_id=None)
        earlier.abort(f"batch {self.batch_id} of streaming query {self.query_id} is replayed")


@dataclass
class StreamCommitMessage(HiveAcidCommitMessage):
    query_id: Optional[str]
    batch_id: Optional[int]
    writer: StreamBatchWriter


class HiveAcidStreamWriter(DataSourceStreamArrowWriter):
    """``writeStream.format("hiveacid")``; ``batch`` is None in the commit worker."""

    def __init__(self, batch: Optional[StreamBatchWriter]):
        self.batch = batch

    def write(self, iterator: Iterator[pa.RecordBatch]) -> StreamCommitMessage:
        if self.batch is None:
            raise UnsupportedOperationError("this stream writer only commits (no transaction)")
        query_id, batch_id = stream_batch_of_task()
        if query_id is not None and batch_id is not None:
            claim_for_task(self.batch.fs, self.batch.spec.table_path, query_id, batch_id,
                           self.batch.handle)
        msg = self.batch.write(iterator)
        return StreamCommitMessage(msg.task, msg.attempt, msg.files, query_id, batch_id,
                                   self.batch)

    @staticmethod
    def _writer(messages: List[Optional[WriterCommitMessage]]) -> Optional[StreamBatchWriter]:
        for m in messages:
            if isinstance(m, StreamCommitMessage):
                return m.writer
        return None

    def commit(self, messages: List[Optional[WriterCommitMessage]], batchId: int) -> None:
        writer = self._writer(messages) or self.batch
        if writer is None:
            log.warning("Micro-batch %d: no task reported a transaction; nothing to commit",
                        batchId)
            return
        query_ids = {m.query_id for m in messages if isinstance(m, StreamCommitMessage)}
        if len(query_ids) != 1 or None in query_ids:
            writer.abort(list(messages))
            raise UnsupportedOperationError(
                f"Micro-batch {batchId}: the tasks did not say which streaming query they belong "
                f"to ({sorted(map(str, query_ids))}); nothing was written")
        writer.query_id, writer.batch_id = query_ids.pop(), int(batchId)
        writer.commit(list(messages))

    def abort(self, messages: List[Optional[WriterCommitMessage]], batchId: int) -> None:
        writer = self._writer(messages) or self.batch
        if writer is None:
            log.warning("Micro-batch %d failed before any task reported its transaction; it is "
                        "aborted when its keep-alive or timeout ends it", batchId)
            return
        writer.abort(list(messages))


def create_stream_writer(options: dict, schema: StructType, overwrite: bool
                         ) -> HiveAcidStreamWriter:
    """``HiveAcidDataSource.streamWriter``: in the planning worker, the micro-batch's transaction
    begins here; in the commit worker, nothing (the messages carry it)."""
    if overwrite:
        raise InvalidOptionError(
            "writeStream.format('hiveacid') supports outputMode('append') only: each micro-batch "
            "appends its rows as one write id")
    if in_stream_commit_worker():
        return HiveAcidStreamWriter(None)
    writer = create_writer(options, schema, False, writer_class=StreamBatchWriter)
    return HiveAcidStreamWriter(writer)


# --- the source ---------------------------------------------------------------------------------
class StreamPartition(InputPartition):
    """One task of a micro-batch: its slices and the batch's read spec (picklable)."""

    def __init__(self, fs: FileSystem, spec: ReadSpec, task: ReadTask):
        super().__init__(None)
        self.fs, self.spec, self.task = fs, spec, task


class HiveAcidStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``readStream.format("hiveacid")``: offsets and plans from ``stream.source.StreamPlanner``
    (Spark keeps this object in one driver-side process for the whole query)."""

    def __init__(self, options: dict, schema: StructType):
        self.planner = StreamPlanner(options)
        self.arrow_schema = to_arrow_schema(schema, timezone="UTC")
        self.target: Optional[int] = None  # Trigger.AvailableNow: the last write id to read

    def initialOffset(self) -> dict:  # noqa: N802 (PySpark's names)
        return self.planner.initial_offset()

    def getDefaultReadLimit(self) -> ReadLimit:  # noqa: N802
        src = self.planner.source
        if src.max_files is not None:
            return ReadMaxFiles(src.max_files)
        if src.max_write_ids is not None:
            return ReadMaxRows(src.max_write_ids)  # a marker: the options hold the limits
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:  # noqa: N802
        self.target = self.planner.latest()[1]

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:  # noqa: N802
        return self.planner.latest_offset(start, read_all=isinstance(limit, ReadAllAvailable),
                                          cap=self.target)

    def reportLatestOffset(self) -> Optional[dict]:  # noqa: N802
        return {WRITE_ID: self.planner.latest()[1]}

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        if start == end or (not start.get(PENDING) and start.get(WRITE_ID) == end.get(WRITE_ID)):
            return []
        scan, tasks, rng = self.planner.batch_scan(start, end)
        spec = scan.read_spec(self.arrow_schema)
        if rng is not None:
            spec = replace(spec, write_ids=rng)
        return [StreamPartition(scan.fs, spec, t) for t in tasks]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, StreamPartition):
            return iter(())
        return TaskReader(partition.fs, partition.spec).read(partition.task)

    def commit(self, end: dict) -> None:
        pass


# --- the change feed ----------------------------------------------------------------------------
class ChangePartition(InputPartition):
    def __init__(self, fs: FileSystem, spec: Any, task: Any):
        super().__init__(None)
        self.fs, self.spec, self.task = fs, spec, task


def _read_change_partition(partition: InputPartition) -> Iterator[pa.RecordBatch]:
    if not isinstance(partition, ChangePartition):
        return iter(())
    return read_changes(partition.fs, partition.spec, partition.task)


def change_feed_schema(options: dict) -> StructType:
    """The feed's Spark schema: the table's columns, then _change_type, _commit_version and
    _commit_timestamp."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(feed_columns(open_scan(read_options(options), in_worker=True)))


class ChangeFeedReader(DataSourceReader):
    """``spark.read.format("hiveacid").option("readChangeFeed", "true")``."""

    def __init__(self, options: dict, schema: StructType):
        fs, pairs = batch_change_feed(options, to_arrow_schema(schema, timezone="UTC"))
        self.partitions_ = [ChangePartition(fs, spec, t) for spec, t in pairs]

    def partitions(self) -> list[InputPartition]:
        return list(self.partitions_)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return _read_change_partition(partition)


class ChangeFeedStreamReader(HiveAcidStreamReader):
    """``readStream.format("hiveacid").option("readChangeFeed", "true")``."""

    def __init__(self, options: dict, schema: StructType):
        super().__init__(options, schema)
        self.planner = StreamPlanner(read_options(options), change_feed=True)
        self.planner.source = SourceOptions.parse(options)

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        if start == end or (not start.get(PENDING) and start.get(WRITE_ID) == end.get(WRITE_ID)):
            return []
        fs, pairs = stream_change_batch(self.planner, start, end, self.arrow_schema)
        return [ChangePartition(fs, spec, t) for spec, t in pairs]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return _read_change_partition(partition)


def create_stream_reader(options: dict, schema: StructType) -> HiveAcidStreamReader:
    if wants_change_feed(options):
        return ChangeFeedStreamReader(options, schema)
    return HiveAcidStreamReader(options, schema)
