"""The partitions of one metastore write: where those it writes are, which exist, and registering
the new ones (``add_partitions``) and, for a dynamic partition write, telling the transaction
manager which it touched (``add_dynamic_partitions``: compaction and conflict detection need it).

A commit asks the metastore only about the partitions it wrote (``get_partitions_by_names``),
never for every partition of the table: a table with many partitions costs a commit no more than
one with a few. Only a static overwrite, which replaces every partition there is, lists them all.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence, Union

from ..io.registry import get_filesystem
from ..metastore._thrift import bindings
from ..metastore.client import MetastoreClient
from ..metastore.locks import Operation, data_operation_type
from ..metastore.model import PartitionInfo, TableInfo

PartitionSpec = Union[Mapping[str, Any], Sequence[Any], str]


class HmsPartitions:
    """What one transaction knows and tells of its table's partitions (cached per name)."""

    def __init__(self, client: MetastoreClient, db: str, tbl: str,
                 options: Mapping[str, str]) -> None:
        self.client, self.db, self.tbl, self.options = client, db, tbl, options
        self.written: list[str] = []  # reported to the transaction manager (or not needed)
        self._known: set[str] = set()  # names the metastore was asked about
        self._exist: dict[str, str] = {}  # name -> directory ("" without a location)
        self._listed_all = False

    def _learn(self, infos: Sequence[PartitionInfo]) -> None:
        for p in infos:
            self._exist[p.name] = get_filesystem(p.location, self.options)[1] if p.location else ""

    def existing(self, table: TableInfo, names: Optional[Sequence[str]] = None) -> dict[str, str]:
        """``{name: directory}`` of the partitions ``names`` that exist (every partition when
        None) and have a location."""
        if not table.is_partitioned:
            return {}
        if names is None:
            if not self._listed_all:
                self._learn(self.client.list_partitions(self.db, self.tbl))
                self._listed_all = True
            return {n: d for n, d in self._exist.items() if d}
        asked = set(names)
        missing = sorted(asked - self._known) if not self._listed_all else []
        if missing:
            self._learn(self.client.get_partitions_by_names(self.db, self.tbl, missing,
                                                            table.partition_names))
        self._known |= asked
        return {n: d for n, d in self._exist.items() if d and n in asked}

    def exists(self, table: TableInfo, name: str) -> bool:
        self.existing(table, [name])
        return name in self._exist

    def add(self, partitions: Sequence[PartitionSpec],
            locations: Optional[Sequence[Optional[str]]] = None) -> list[PartitionInfo]:
        """Create the missing ones in the catalog (``add_partitions``, existing ones left)."""
        infos = self.client.add_partitions(self.db, self.tbl, partitions, locations,
                                           if_not_exists=True)
        self._learn(infos)
        self._known |= {p.name for p in infos}
        return infos

    def record(self, names: Sequence[str], txn_id: int, write_id: int, operation: Operation,
               dynamic: bool) -> None:
        """Report the partitions a dynamic partition write touched (``add_dynamic_partitions``),
        each once; a static write's lock already names them."""
        new = [n for n in names if n not in self.written]
        if new and dynamic:
            _, tt = bindings()
            op = getattr(tt.DataOperationType, data_operation_type(operation))
            self.client.add_dynamic_partitions(txn_id, write_id, self.db, self.tbl, new, op)
        self.written += new
