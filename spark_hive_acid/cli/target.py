"""The table a command names: a directory (any URI the file-system layer serves) or ``db.table``
in a Hive Metastore, with the snapshot to look at (the table's current one, or ``--snapshot``)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping, Optional

from ..acid.layout import TableLayout
from ..acid.snapshot import ValidIdList, parse_write_ids
from ..catalog import MetastoreTable, PathTable, TableRef
from ..exceptions import MetastoreNotConfiguredError, NotAnAcidTableError, TableNotFoundError
from ..io.filesystem import FileSystem
from ..metastore.uris import resolve_metastore_uris
from ..read.source import KnownPartitions, TableSource


@dataclass
class Target:
    """The resolved table (its reference and what a read of it sees now) and the snapshot."""

    ref: TableRef
    source: TableSource
    write_ids: ValidIdList

    @property
    def display(self) -> str:
        return self.ref.display

    @property
    def fs(self) -> FileSystem:
        return self.source.fs

    @property
    def path(self) -> str:
        return self.source.path

    @property
    def txns(self) -> ValidIdList:
        return self.source.txns

    @property
    def insert_only(self) -> bool:
        return self.source.insert_only

    @property
    def layout(self) -> Optional[TableLayout]:
        return self.source.layout

    @property
    def known_partitions(self) -> Optional[KnownPartitions]:
        return self.source.known_partitions


def is_table_name(text: str, options: Mapping[str, str]) -> bool:
    """``db.t`` / ``t`` with a metastore configured (option, or hive-site.xml), no ``/`` and no
    local directory of that name."""
    if "/" in text or "\\" in text or ":" in text or os.path.exists(text):
        return False
    try:
        resolve_metastore_uris(options)
    except MetastoreNotConfiguredError:
        return False
    return True


def open_target(location: str, options: Mapping[str, str], snapshot: Optional[str] = None
                ) -> Target:
    """The table at ``location`` (a path, or a table name when a metastore is configured)."""
    given = parse_write_ids(snapshot, "--snapshot") if snapshot else None
    ref: TableRef
    if is_table_name(location, options):
        ref = MetastoreTable.from_options({**options, "table": location})
    else:
        ref = PathTable(location, options)
        fs, path = ref.location()
        st = fs.status(path)
        if st is None:
            raise TableNotFoundError(f"No table at {location}: the path does not exist")
        if not st.is_dir:
            raise NotAnAcidTableError(f"{location} is a file, not a table directory")
    source = ref.source()
    return Target(ref, source, given or source.write_ids)
