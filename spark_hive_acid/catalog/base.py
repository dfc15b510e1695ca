"""A reference to one table: where it is, what it looks like, and how to begin a transaction on it.

Two kinds exist, and everything above this package (the Spark writer, DML, the table API,
``write_table``) works on either through this interface:

* :class:`~spark_hive_acid.catalog.path.PathTable`: a directory (path mode). Its layout is the
  ``_hiveacid_table.json`` file; a Hive-written table without one is adopted on first write.
  Transactions: the path-mode log.
* :class:`~spark_hive_acid.catalog.hms.MetastoreTable`: a table named in a Hive Metastore. Its
  layout, location and partitions come from the metastore. Transactions: metastore transactions.

References are picklable (no connection inside): Spark ships them to its workers.
"""
from __future__ import annotations

import abc
from typing import Any, Callable, Optional

import pyarrow as pa

from ..acid.layout import TableLayout
from ..acid.snapshot import ValidIdList
from ..io.filesystem import FileSystem
from ..txn.base import Transaction
from ..write.options import WriteOptions


class TableRef(abc.ABC):
    """See the module docstring."""

    options: dict[str, str]  # lower-case keys: what readers, writers and file systems are given

    @property
    @abc.abstractmethod
    def display(self) -> str:
        """How messages name the table (a path or ``db.table``)."""

    @abc.abstractmethod
    def location(self) -> tuple[FileSystem, str]:
        """The table directory: its file system and its path there."""

    @abc.abstractmethod
    def layout(self, adopt: Optional[Callable[[], pa.Schema]] = None) -> TableLayout:
        """The table's layout. A path-mode table written by Hive (no layout file) is adopted with
        the columns ``adopt()`` returns (the table as its reader sees it); without ``adopt``,
        that is an error."""

    @abc.abstractmethod
    def prepare_write(self, schema: pa.Schema, write_options: WriteOptions
                      ) -> tuple[TableLayout, bool]:
        """Check that data of ``schema`` may be written with ``write_options`` (creation options
        must agree with the table), creating the table where that is how tables are made (a new
        path); returns ``(layout, created)``. Opens no transaction."""

    @abc.abstractmethod
    def begin(self, operation: str) -> Transaction:
        """A new, open transaction (write id allocated, locks held where the catalog has them)."""

    @abc.abstractmethod
    def reader_options(self) -> dict[str, str]:
        """Read options naming this table (for ``spark.read.format("hiveacid")`` or
        ``read_table``): the path, or the table name and its metastore."""

    @abc.abstractmethod
    def snapshot(self) -> ValidIdList:
        """The table's current committed snapshot (a ValidWriteIdList)."""

    @abc.abstractmethod
    def history(self) -> list[dict[str, Any]]:
        """One entry per write id, newest first: writeId, state, operation, startedAt, finishedAt,
        partitions, metrics, reason (unknown values None)."""
