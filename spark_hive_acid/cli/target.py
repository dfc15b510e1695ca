"""The table a command names: a directory (any URI the file-system layer serves) or ``db.table``
in a Hive Metastore, with the snapshot to look at (the table's current one, or ``--snapshot``)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping, Optional

from .. import options as opt
from ..acid.layout import LAYOUT_FILE, TableLayout
from ..acid.log_records import LOG_DIR
from ..acid.partition_tree import has_acid_dirs
from ..acid.snapshot import ValidIdList, parse_write_ids
from ..catalog import MetastoreTable, PathTable, TableRef
from ..exceptions import (
    InvalidOptionError, MetastoreNotConfiguredError, NotAnAcidTableError, TableNotFoundError,
)
from ..io.filesystem import FileSystem
from ..metastore.uris import resolve_metastore_uris
from ..read.options import ReadOptions
from ..read.scan import TableScan
from ..read.source import KnownPartitions, TableSource
from ..read.time_travel import resolve as time_travel

#: the options that choose the snapshot a command looks at (``-o``; ``--snapshot`` is the first)
SNAPSHOT_OPTIONS = ("validWriteIds", "versionAsOf", "timestampAsOf")


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
    """The table at ``location`` (a path, or a table name when a metastore is configured), at
    the snapshot ``--snapshot`` or the options ``validWriteIds`` / ``versionAsOf`` /
    ``timestampAsOf`` choose (default: the current one)."""
    chosen = [n for n in SNAPSHOT_OPTIONS if opt.get_str(options, n) is not None]
    if snapshot and chosen:
        raise InvalidOptionError(f"Give --snapshot or -o {chosen[0]}=..., not both")
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
    if not ref.full_name:
        _check_acid_dir(source, location)
    if snapshot:
        return Target(ref, source, parse_write_ids(snapshot, "--snapshot"))
    read = ReadOptions.parse({**ref.reader_options(), **opt.lowered(options)})
    given = read.write_ids or source.write_ids
    return Target(ref, source, time_travel(
        given, version=read.version_as_of, timestamp=read.timestamp_as_of, fs=source.fs,
        path=source.path, display=source.display, metastore=not source.log_times))


def _check_acid_dir(source: TableSource, location: str) -> None:
    """A directory is a table when it has this library's layout file or log, ACID directories, or
    only ORC files (the original files of a table converted to ACID): what ``spark.read`` reads.
    Anything else (a plain Parquet directory, an empty one) is refused as ``spark.read`` refuses
    it, not shown as a table with nothing wrong."""
    fs, path = source.fs, source.path
    if source.layout is not None or fs.exists(fs.join(path, LAYOUT_FILE)) \
            or fs.exists(fs.join(path, LOG_DIR)) or has_acid_dirs(fs, path):
        return
    try:
        TableScan(source, ReadOptions.parse({"path": location})).plan  # noqa: B018 (refuses)
    except NotAnAcidTableError as e:
        raise NotAnAcidTableError(f"{e} hiveacid looks at Hive ACID tables only.") from None
