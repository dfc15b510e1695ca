"""``ALTER TABLE ... ADD COLUMNS`` of a path-mode table: new data columns at the end.

Files written before the change hold fewer columns: readers match a file's columns to the table's
by position and read NULL for the ones it lacks, as Hive's reader does (checked against Hive 3.1
and 4.1, tests/test_schema_evolution_hive.py). The change is one exclusively created file,
``_hiveacid_schema/<v>.json`` (``acid.layout``): a kill leaves the table before or after it, and
of two concurrent changes from the same version one creates the file first; the other reads the
new layout and tries again on top of it (adding columns commutes; the same name twice is refused).
"""
from __future__ import annotations

import logging
from dataclasses import replace
from typing import Sequence

from ..acid.layout import TableLayout, load_layout, newest_schema_version, schema_version_path
from ..acid.types import hive_to_arrow
from ..exceptions import HiveAcidError, InvalidOptionError, SchemaMismatchError
from ..io.filesystem import FileSystem
from .table_setup import check_reserved_names

log = logging.getLogger(__name__)

ATTEMPTS = 20
Columns = Sequence[tuple[str, str]]


def check_new_columns(layout: TableLayout, new: Columns, table: str) -> list[tuple[str, str]]:
    """``new`` as (name, Hive type) pairs a table may add; InvalidOptionError /
    SchemaMismatchError naming what is wrong."""
    if not new:
        raise InvalidOptionError("addColumns needs at least one column")
    taken = {n.lower(): n for n, _ in layout.columns + layout.partition_columns}
    out: list[tuple[str, str]] = []
    for name, hive_type in new:
        name, hive_type = str(name).strip(), str(hive_type).strip()
        if not name:
            raise InvalidOptionError("addColumns: a column needs a name")
        if name.lower() in taken:
            raise InvalidOptionError(
                f"addColumns: table {table} already has a column '{taken[name.lower()]}'")
        try:
            hive_to_arrow(hive_type, name)
        except HiveAcidError as e:
            raise SchemaMismatchError(f"addColumns: column '{name}': {e}") from e
        taken[name.lower()] = name
        out.append((name, hive_type))
    check_reserved_names([n for n, _ in out], [])
    return out


def add_columns(fs: FileSystem, path: str, new: Columns) -> TableLayout:
    """Add ``new`` (name, Hive type) data columns to the path-mode table at ``path`` (its layout
    file must exist); returns the new layout."""
    for _ in range(ATTEMPTS):
        layout = load_layout(fs, path)
        if layout is None:
            raise InvalidOptionError(f"{path} has no table layout to change")
        columns = check_new_columns(layout, new, path)
        version = max(layout.schema_version, newest_schema_version(fs, path)) + 1
        changed = replace(layout, columns=list(layout.columns) + columns, schema_version=version)
        fs.mkdirs(fs.join(path, "_hiveacid_schema"))
        if fs.create_exclusive(schema_version_path(fs, path, version),
                               changed.to_json().encode("utf-8")):
            log.info("Added column(s) %s to %s (schema version %d)", columns, path, version)
            return changed
        log.info("Schema version %d of %s was taken by a concurrent change; trying again on top "
                 "of it", version, path)
    raise HiveAcidError(f"addColumns on {path}: {ATTEMPTS} concurrent schema changes won first; "
                        "run it again")
