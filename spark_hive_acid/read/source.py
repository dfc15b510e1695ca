"""A resolved table, as the read path takes it: made once by the table's reference
(``catalog.TableRef.source()``), so a scan opens no metastore connection and resolves nothing."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from ..acid.layout import TableLayout
from ..acid.partition_tree import PartitionTree
from ..acid.snapshot import ValidIdList
from ..io.filesystem import FileSystem

#: A metastore table's partitions: (partition key names, [(directory, values)]).
KnownPartitions = tuple[Sequence[str], Sequence[tuple[str, tuple[Optional[str], ...]]]]


@dataclass(frozen=True)
class TableSource:
    """Where a table is, what it declares, and its current snapshot."""

    fs: FileSystem
    path: str  # the table directory in its file system's form
    location: str  # the table directory as the user or the metastore names it (a URI)
    display: str  # how messages name the table: the path, or db.table
    layout: Optional[TableLayout]  # the declared layout (None: a directory Hive wrote)
    insert_only: bool
    write_ids: ValidIdList  # the current committed snapshot
    txns: ValidIdList
    name: Optional[str] = None  # db.table of a metastore table
    known_partitions: Optional[KnownPartitions] = None  # the metastore's partitions
    log_times: bool = True  # commit times are recorded (path mode): timestampAsOf works
    tree: Optional[PartitionTree] = None  # the walk that found the snapshot (no log), reused
