"""A reference to one table: the one resolved table every entry point passes around.

Two kinds exist, and everything above this package (the data source, the table API, streaming,
compaction, ``write_table``/``read_table``, the CLI) works on either through this interface:

* :class:`~spark_hive_acid.catalog.path.PathTable`: a directory (path mode). Its layout is the
  ``_hiveacid_table.json`` file; a Hive-written table without one is adopted on first write.
  Transactions: the path-mode log.
* :class:`~spark_hive_acid.catalog.hms.MetastoreTable`: a table named in a Hive Metastore. Its
  layout, location and partitions come from the metastore. Transactions: metastore transactions.

What differs between the two is decided here, never by the callers (no ``isinstance`` of a table
kind outside this package): the table's current snapshot (:meth:`TableRef.current_snapshot`,
the one place it is computed), what a scan reads (:meth:`TableRef.source`), how a transaction
begins (:meth:`TableRef.begin`), and the maintenance each kind has or refuses.

References are picklable (no connection inside): Spark ships them to its workers.
"""
from __future__ import annotations

import abc
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import pyarrow as pa

from .. import options as opt
from ..acid.layout import TableLayout
from ..acid.log_records import ABORTED, COMMITTED, OPEN, Terminal
from ..acid.snapshot import ValidIdList
from ..acid.types import arrow_to_hive
from ..exceptions import InvalidOptionError
from ..io.filesystem import FileSystem
from ..read.options import ReadOptions
from ..read.scan import TableScan
from ..read.source import TableSource
from ..txn.base import Transaction
from ..write.options import WriteOptions

PATH_MODE, METASTORE_MODE = "path", "metastore"


def state_in_snapshot(snapshot: ValidIdList, write_id: int) -> str:
    """A write id's state in a snapshot: OPEN, COMMITTED or ABORTED."""
    if snapshot.is_aborted(write_id):
        return ABORTED
    if snapshot.is_open(write_id) or write_id > snapshot.high_watermark:
        return OPEN
    return COMMITTED


class TableRef(abc.ABC):
    """See the module docstring."""

    options: dict[str, str]  # lower-case keys: what readers, writers and file systems are given
    mode: str  # PATH_MODE or METASTORE_MODE

    # --- identity ---------------------------------------------------------------------------------
    @property
    @abc.abstractmethod
    def display(self) -> str:
        """How messages name the table (a path or ``db.table``)."""

    @property
    def full_name(self) -> Optional[str]:
        """``db.table`` of a metastore table; None for a table known by its path."""
        return None

    @property
    def metastore_uri(self) -> Optional[str]:
        """The metastore a table by name lives in; None in path mode."""
        return None

    @property
    def keeps_log(self) -> bool:
        """Whether the table keeps this library's path-mode log (its transactions' records)."""
        return self.mode == PATH_MODE

    # --- where and what ---------------------------------------------------------------------------
    @abc.abstractmethod
    def location(self) -> tuple[FileSystem, str]:
        """The table directory: its file system and its path there."""

    @abc.abstractmethod
    def layout(self, adopt: Optional[Callable[[], pa.Schema]] = None) -> TableLayout:
        """The table's layout. A path-mode table written by Hive (no layout file) is adopted with
        the columns ``adopt()`` returns (the table as its reader sees it); without ``adopt``,
        that is an error."""

    @abc.abstractmethod
    def reader_options(self) -> dict[str, str]:
        """Read options naming this table (for ``spark.read.format("hiveacid")`` or
        ``read_table``): the path, or the table name and its metastore."""

    # --- reading ----------------------------------------------------------------------------------
    @abc.abstractmethod
    def current_snapshot(self) -> tuple[ValidIdList, ValidIdList]:
        """``(write ids, txns)``: the table's current committed snapshot. Path mode: the log's,
        else (a directory Hive wrote) everything present; metastore: the metastore's."""

    def snapshot(self) -> ValidIdList:
        """The table's current committed snapshot (a ValidWriteIdList)."""
        return self.current_snapshot()[0]

    @abc.abstractmethod
    def source(self) -> TableSource:
        """What a scan of the table now reads: location, layout, partitions, snapshot (one
        metastore round trip for a table by name). TableNotFoundError when it is gone."""

    def scan(self, options: Union[ReadOptions, Mapping[str, str], None] = None) -> TableScan:
        """A scan of the current snapshot (or the one ``options`` select); cheap: it plans on
        first use. ``options``: parsed read options, or read options added to this table's."""
        if not isinstance(options, ReadOptions):
            options = ReadOptions.parse({**self.reader_options(), **opt.lowered(options)})
        return TableScan(self.source(), options)

    def write_id_state(self, write_id: int) -> str:
        """OPEN, COMMITTED or ABORTED (``acid.log_records``): where ``write_id`` stands now."""
        return state_in_snapshot(self.snapshot(), write_id)

    def compaction_state(self, compaction_id: int) -> str:
        """OPEN, COMMITTED or ABORTED: where a compaction's transaction stands now
        (``txn.committer.compaction_id``: its write id in path mode, its txn id in a metastore);
        what decides an unfinished install written in place (``txn.logmaint``)."""
        return self.write_id_state(compaction_id)

    def commit_records(self) -> Optional[list[Terminal]]:
        """The path-mode log's records, oldest first (commit times, operations, partitions);
        None when the table keeps no log (a metastore table, or a directory Hive wrote)."""
        return None

    @abc.abstractmethod
    def history(self) -> list[dict[str, Any]]:
        """One entry per write id, newest first: writeId, state, operation, startedAt, finishedAt,
        partitions, metrics, reason (unknown values None)."""

    # --- writing ----------------------------------------------------------------------------------
    @abc.abstractmethod
    def prepare_write(self, schema: pa.Schema, write_options: WriteOptions
                      ) -> tuple[TableLayout, bool]:
        """Check that data of ``schema`` may be written with ``write_options`` (creation options
        must agree with the table), creating the table where that is how tables are made (a new
        path); returns ``(layout, created)``. Opens no transaction."""

    @abc.abstractmethod
    def add_columns(self, columns: Sequence[tuple[str, str]]) -> TableLayout:
        """``ALTER TABLE ... ADD COLUMNS``: data columns (name, Hive type) added at the end;
        rows written before read NULL for them. Returns the new layout."""

    def merge_schema(self, layout: TableLayout, schema: pa.Schema,
                     write_options: WriteOptions) -> TableLayout:
        """With option ``mergeSchema``, the layout after adding the columns of ``schema`` the
        table lacks (partition columns cannot be added); otherwise ``layout``."""
        if not write_options.merge_schema:
            return layout
        known = {n.lower() for n, _ in layout.columns + layout.partition_columns}
        new = [(f.name, arrow_to_hive(f.type, f.name)) for f in schema
               if f.name.lower() not in known]
        return self.add_columns(new) if new else layout

    @abc.abstractmethod
    def begin(self, operation: str) -> Transaction:
        """A new, open transaction (write id allocated, locks held where the catalog has them)."""

    def txn_high_watermark(self) -> Optional[int]:
        """The metastore's global transaction high watermark now (recorded with a compaction's
        install, for vacuum's rule); None in path mode."""
        return None

    # --- maintenance each kind has, or refuses ------------------------------------------------------
    def abort_stale(self, older_than_s: Optional[float] = None) -> list[int]:
        """Abort open write ids idle longer than their timeout (or ``older_than_s``)."""
        raise InvalidOptionError(
            "abortStaleTransactions is for path-mode tables. Metastore transactions are "
            "timed out by the metastore's house keeper (hive.txn.timeout); an administrator "
            "can abort one with MetastoreClient.abort_txns([id]) (Hive: ABORT TRANSACTIONS)")

    def repair_log(self, write_id: Optional[int] = None, state: Optional[str] = None
                   ) -> Optional[int]:
        """Rebuild a damaged record of the transaction log (``txn.log_repair``)."""
        raise InvalidOptionError("repairTransactionLog is for path-mode tables: a metastore "
                                 "table keeps its transactions in the metastore")
