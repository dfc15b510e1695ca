"""A table in a directory (path mode): layout file, adoption of Hive-written tables, the log."""
from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

import pyarrow as pa

from .. import options as opt
from ..acid.layout import LAYOUT_FILE, TableLayout, load_layout
from ..acid.logstate import load_state, read_snapshot
from ..acid.snapshot import ValidIdList
from ..exceptions import NotAnAcidTableError, TableNotFoundError
from ..io.filesystem import FileSystem
from ..io.registry import get_filesystem
from ..read.listing import walk_partitions
from ..txn import pathlog
from ..txn.pathlog import PathTransaction
from ..write.options import DEFAULT_TXN_TIMEOUT_S, WriteOptions
from ..write.table_setup import has_acid_dirs, resolve_table
from .base import TableRef
from .dir_history import history_from_dirs


class PathTable(TableRef):
    """The table in the directory ``uri`` (any scheme the file-system layer serves)."""

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
        return resolve_table(self.fs, self.path, WriteOptions(path=self.uri), adopt())[0]

    def prepare_write(self, schema: pa.Schema, write_options: WriteOptions
                      ) -> tuple[TableLayout, bool]:
        return resolve_table(self.fs, self.path, write_options, schema)

    def begin(self, operation: str) -> PathTransaction:
        timeout = opt.get_seconds(self.options, "txnTimeoutSeconds", DEFAULT_TXN_TIMEOUT_S)
        return pathlog.begin(self.fs, self.path, operation,
                             timeout_s=timeout or DEFAULT_TXN_TIMEOUT_S)

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

    def snapshot(self) -> ValidIdList:
        """The current snapshot: the log's, else (no log) everything present."""
        return read_snapshot(self.fs, self.path) or ValidIdList.all_valid()

    def abort_stale(self, older_than_s: Optional[float] = None) -> list[int]:
        """Abort open write ids idle longer than their timeout (or ``older_than_s``)."""
        return pathlog.abort_stale(self.fs, self.path, timeout_s=older_than_s)

    def repair_log(self, write_id: Optional[int] = None, state: Optional[str] = None
                   ) -> Optional[int]:
        """Rebuild a damaged record of the transaction log (see ``txn.pathlog.repair_log``)."""
        return pathlog.repair_log(self.fs, self.path, write_id, state)

    def __repr__(self) -> str:
        return f"PathTable({self.uri!r})"
