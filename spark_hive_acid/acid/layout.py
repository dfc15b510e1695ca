"""The table layout a path-mode table remembers between jobs.

Stored as JSON in ``_hiveacid_table.json`` at the table root: the leading underscore makes Hive,
Trino and Impala ignore it (hiddenFileFilter). Written once at table creation; later writes and
reads honour it without the user repeating options.

A schema change (``HiveAcidTable.addColumns``) never rewrites that file (a file system's rename
cannot replace a file atomically): it creates ``_hiveacid_schema/<v>.json`` exclusively, the whole
layout at schema version ``v``; the highest one is the table's layout. The exclusive create is the
change's commit point: of two concurrent changes from one version, one wins and the other sees it
(``write.schema_change``).
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Optional

from ..exceptions import CorruptFileError, PathNotFoundError
from ..io.filesystem import FileSystem

LAYOUT_FILE = "_hiveacid_table.json"
#: Schema versions: ``<v:06d>.json``, each a whole layout (see the module docstring)
SCHEMA_DIR = "_hiveacid_schema"
_SCHEMA_FILE = re.compile(r"^(\d+)\.json$")
#: Where the tasks of a write stage their files before the commit renames them into the table.
STAGING_DIR = "_hiveacid_staging"


def staging_dir(fs: FileSystem, table_path: str, write_id: int) -> str:
    """Where the tasks of write id W stage their files (hidden: never read as table data)."""
    return fs.join(table_path, STAGING_DIR, f"{write_id:019d}")


@dataclass
class TableLayout:
    columns: list[tuple[str, str]]  # data columns (name, hive type), in DDL order
    partition_columns: list[tuple[str, str]] = field(default_factory=list)
    bucket_columns: list[str] = field(default_factory=list)
    num_buckets: int = 0  # 0: unbucketed
    bucketing_version: int = 2
    compression: str = "ZLIB"
    properties: dict[str, str] = field(default_factory=dict)
    version: int = 1
    file_format: str = "orc"  # data files: full-ACID tables are ORC; insert-only ORC or Parquet
    schema_version: int = 0  # 0: as created; v: _hiveacid_schema/<v>.json

    @property
    def insert_only(self) -> bool:
        return self.properties.get("transactional_properties", "").lower() == "insert_only"

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str, where: str = LAYOUT_FILE) -> "TableLayout":
        try:
            d = json.loads(text)
            return cls(
                columns=[tuple(c) for c in d["columns"]],
                partition_columns=[tuple(c) for c in d.get("partition_columns", [])],
                bucket_columns=list(d.get("bucket_columns", [])),
                num_buckets=int(d.get("num_buckets", 0)),
                bucketing_version=int(d.get("bucketing_version", 2)),
                compression=str(d.get("compression", "ZLIB")),
                properties=dict(d.get("properties", {})),
                version=int(d.get("version", 1)),
                file_format=str(d.get("file_format", "orc")),
                schema_version=int(d.get("schema_version", 0)),
            )
        except (ValueError, KeyError, TypeError) as e:
            raise CorruptFileError(f"Cannot parse table layout file {where}: {e}") from e


def load_layout(fs: FileSystem, table_path: str) -> Optional[TableLayout]:
    """The table's layout: its newest schema version, else the layout file; None without one."""
    path = fs.join(table_path, LAYOUT_FILE)
    if not fs.exists(path):
        return None
    newest = newest_schema_version(fs, table_path)
    if newest:
        path = schema_version_path(fs, table_path, newest)
    return TableLayout.from_json(fs.read_bytes(path).decode("utf-8"), path)


def schema_version_path(fs: FileSystem, table_path: str, version: int) -> str:
    return fs.join(table_path, SCHEMA_DIR, f"{version:06d}.json")


def newest_schema_version(fs: FileSystem, table_path: str) -> int:
    """The highest schema version of ``_hiveacid_schema/`` (0: none)."""
    try:
        entries = fs.list_dir(fs.join(table_path, SCHEMA_DIR))
    except PathNotFoundError:
        return 0
    found = [int(m.group(1)) for e in entries if (m := _SCHEMA_FILE.match(e.name))]
    return max(found, default=0)


def save_layout(fs: FileSystem, table_path: str, layout: TableLayout) -> None:
    """Write the layout file of a table being set up (temp file + rename; on an object store one PUT,
    which appears whole). Replacing an existing
    one is not atomic (delete, then rename): a live table's schema changes go through
    ``_hiveacid_schema/`` (see the module docstring), never through this."""
    path = fs.join(table_path, LAYOUT_FILE)
    if fs.writes_in_place:
        fs.write_bytes(path, layout.to_json().encode("utf-8"))
        return
    tmp = fs.join(table_path, f".{LAYOUT_FILE}.tmp")
    fs.write_bytes(tmp, layout.to_json().encode("utf-8"))
    if fs.exists(path):
        fs.delete(path)
    fs.rename(tmp, path)
