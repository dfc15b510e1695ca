"""The table a command names: a directory (any URI the file-system layer serves) or ``db.table``
in a Hive Metastore, with the snapshot to look at (the table's current one, or ``--snapshot``)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping, Optional

from ..acid.layout import TableLayout, load_layout
from ..acid.snapshot import ValidIdList, parse_write_ids
from ..catalog import MetastoreTable, PathTable, TableRef
from ..exceptions import MetastoreNotConfiguredError, NotAnAcidTableError, TableNotFoundError
from ..io.filesystem import FileSystem
from ..metastore.model import TableInfo
from ..metastore.uris import resolve_metastore_uris
from ..read.options import ReadOptions
from ..read.scan import _from_metastore as metastore_snapshot


@dataclass
class Target:
    ref: TableRef
    fs: FileSystem
    path: str
    write_ids: ValidIdList
    txns: ValidIdList
    insert_only: bool
    layout: Optional[TableLayout] = None
    info: Optional[TableInfo] = None
    known_partitions: Optional[tuple] = None

    @property
    def display(self) -> str:
        return self.ref.display


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
    if is_table_name(location, options):
        ref: TableRef = MetastoreTable.from_options({**options, "table": location})
        info, known, (write_ids, txns) = metastore_snapshot(ReadOptions.parse(ref.options))
        fs, path = ref.location(info)
        return Target(ref, fs, path, given or write_ids, txns, info.is_insert_only,
                      info.to_layout(), info, known)
    ref = PathTable(location, options)
    st = ref.fs.status(ref.path)
    if st is None:
        raise TableNotFoundError(f"No table at {location}: the path does not exist")
    if not st.is_dir:
        raise NotAnAcidTableError(f"{location} is a file, not a table directory")
    layout = load_layout(ref.fs, ref.path)
    return Target(ref, ref.fs, ref.path, given or ref.snapshot(), ValidIdList.all_valid(),
                  bool(layout and layout.insert_only), layout)
