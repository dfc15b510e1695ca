"""A table in a directory (path mode): layout file, adoption of Hive-written tables, the log."""
from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence

import pyarrow as pa

from .. import options as opt
from ..acid.layout import LAYOUT_FILE, TableLayout, load_layout
from ..acid.log_records import Terminal
from ..acid.logstate import load_state, read_events, read_snapshot
from ..acid.partition_tree import PartitionTree, has_acid_dirs, walk_partitions
from ..acid.snapshot import ValidIdList
from ..exceptions import NotAnAcidTableError, SchemaMismatchError, TableNotFoundError
from ..io.filesystem import FileSystem
from ..io.registry import get_filesystem
from ..read.source import TableSource
from ..txn import pathlog
from ..txn.pathlog import PathTransaction
from ..write.options import WriteOptions
from ..write.schema_change import add_columns
from ..write.table_setup import resolve_table
from .base import PATH_MODE, TableRef
from .dir_history import history_from_dirs


class PathTable(TableRef):
    """The table in the directory ``uri`` (any scheme the file-system layer serves)."""

    mode = PATH_MODE

    def __init__(self, uri: str, options: Optional[Mapping[str, str]] = None):
        self.uri = uri
        self.options = opt.lowered(options)
        self.options.pop("table", None)
        self.options["path"] = uri
        self.fs, self.path = get_filesystem(uri, self.options)

    @classmethod
    def existing(cls, uri: str, options: Optional[Mapping[str, str]] = None) -> "PathTable":
        """The table at ``uri``; raises TableNotFoundError / NotAnAcidTableError if there is none."""
        table = cls(uri, options)
        if not table.fs.exists(table.path):
            raise TableNotFoundError(f"No table at {uri}")
        if load_layout(table.fs, table.path) is None and not has_acid_dirs(table.fs, table.path):
            raise NotAnAcidTableError(f"{uri} is not a Hive ACID table")
        return table

    @property
    def display(self) -> str:
        return self.uri

    def location(self) -> tuple[FileSystem, str]:
        return self.fs, self.path

    def layout(self, adopt: Optional[Callable[[], pa.Schema]] = None) -> TableLayout:
        saved = load_layout(self.fs, self.path)
        if saved is not None:
            return saved
        if adopt is None:
            raise NotAnAcidTableError(
                f"{self.uri} has no {LAYOUT_FILE} yet: it is adopted with the columns its reader "
                "sees (HiveAcidTable does that), or on its first write")
        return resolve_table(self.fs, self.path, WriteOptions(path=self.uri), adopt(),
                             self._columns_on_disk)[0]

    def prepare_write(self, schema: pa.Schema, write_options: WriteOptions
                      ) -> tuple[TableLayout, bool]:
        self.fs.check_writable(self.path)  # before anything is written (object stores)
        layout, created = resolve_table(self.fs, self.path, write_options, schema,
                                        self._columns_on_disk)
        return self.merge_schema(layout, schema, write_options), created

    def add_columns(self, columns: Sequence[tuple[str, str]]) -> TableLayout:
        self.layout(self._reader_schema)  # a table Hive wrote gets its layout file first
        return add_columns(self.fs, self.path, columns)

    def _reader_schema(self) -> pa.Schema:
        scan = self.scan()
        return pa.schema([pa.field(c.name, c.type)
                          for c in scan.data_columns + scan.partition_columns])

    def _columns_on_disk(self, insert_only: bool) -> Optional[pa.Schema]:
        """A Hive-written table's columns as its reader sees them (partition columns marked in
        their field metadata); None when it has no data file to take them from."""
        scan = self.scan({"transactionalProperties": "insert_only" if insert_only else "default"})
        try:
            data = scan.data_columns
        except SchemaMismatchError:
            return None
        return pa.schema([pa.field(c.name, c.type) for c in data]
                         + [pa.field(c.name, c.type, metadata={"partition": "1"})
                            for c in scan.partition_columns])

    def current_snapshot(self) -> tuple[ValidIdList, ValidIdList]:
        """The log's snapshot; a directory without a log (Hive wrote it) has everything present
        committed, up to the highest write id its directories name."""
        return self._snapshot_and_walk()[0]

    def _snapshot_and_walk(self) -> tuple[tuple[ValidIdList, ValidIdList], Optional[PartitionTree]]:
        logged = read_snapshot(self.fs, self.path)
        if logged is not None:
            return (logged, ValidIdList.all_valid()), None
        tree = walk_partitions(self.fs, self.path)
        top = max((d.max_write_id for d in tree.acid_dirs()), default=0)
        return (ValidIdList.of(top), ValidIdList.all_valid()), tree

    def source(self) -> TableSource:
        st = self.fs.status(self.path)
        if st is None:
            raise TableNotFoundError(
                f"Table path not found: {self.uri}. Check the path, or create the table "
                "with df.write.format('hiveacid').mode('append').save(path) (a write needs "
                "mode 'append' or 'overwrite': PySpark refuses the default 'errorifexists' for "
                "Python data sources).")
        if not st.is_dir:
            raise TableNotFoundError(f"Table path {self.uri} is a file, not a table directory")
        layout = load_layout(self.fs, self.path)
        (write_ids, txns), tree = self._snapshot_and_walk()
        return TableSource(self.fs, self.path, self.uri, self.uri, layout,
                           bool(layout is not None and layout.insert_only), write_ids, txns,
                           tree=tree)

    def begin(self, operation: str) -> PathTransaction:
        self.fs.check_writable(self.path)
        return pathlog.begin(self.fs, self.path, operation,
                             timeout_s=opt.value(self.options, "txnTimeoutSeconds"))

    def reader_options(self) -> dict[str, str]:
        return dict(self.options)

    def history(self) -> list[dict[str, Any]]:
        """The path-mode log's history; for a table without one (written by Hive), the history
        its directories tell (:mod:`.dir_history`)."""
        logged = pathlog.history(self.fs, self.path)
        if logged or load_state(self.fs, self.path) is not None:
            return logged
        tree = walk_partitions(self.fs, self.path)
        return history_from_dirs(((rel, tree.children[p]) for p, rel, _ in tree.leaves),
                                 ValidIdList.all_valid())

    def commit_records(self) -> Optional[list[Terminal]]:
        if load_state(self.fs, self.path) is None:
            return None
        return read_events(self.fs, self.path)

    def abort_stale(self, older_than_s: Optional[float] = None) -> list[int]:
        """Abort open write ids idle longer than their timeout (or ``older_than_s``)."""
        return pathlog.abort_stale(self.fs, self.path, timeout_s=older_than_s)

    def repair_log(self, write_id: Optional[int] = None, state: Optional[str] = None
                   ) -> Optional[int]:
        """Rebuild a damaged record of the transaction log (see ``txn.pathlog.repair_log``)."""
        return pathlog.repair_log(self.fs, self.path, write_id, state)

    def __repr__(self) -> str:
        return f"PathTable({self.uri!r})"
