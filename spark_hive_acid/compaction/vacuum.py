"""``vacuum`` of any table: a path-mode table's cleaner (``cleaner``), or a metastore table's,
which adds Hive's Cleaner rule (``hms_clean``). The table reference says which it is."""
from __future__ import annotations

from ..catalog import TableRef, metastore_table
from .cleaner import vacuum
from .hms_clean import vacuum_metastore_table


def vacuum_table(table: TableRef, retention_hours: float, dry_run: bool) -> dict:
    """Clean ``table``; the result as ``VacuumResult``'s JSON (docs/compaction.md)."""
    if table.keeps_log:
        fs, path = table.location()
        return vacuum(fs, path, retention_hours=retention_hours, dry_run=dry_run).to_json()
    return vacuum_metastore_table(metastore_table(table, "vacuum()"), retention_hours, dry_run)
