"""Vacuum of metastore tables: not yet; see docs/compaction.md."""
from __future__ import annotations

from ..exceptions import UnsupportedOperationError


def vacuum_metastore_table(table, retention_hours: float, dry_run: bool) -> dict:
    raise UnsupportedOperationError(
        f"vacuum() of {table.display}: cleaning a metastore table is not supported yet; Hive's "
        "Cleaner removes what compaction made obsolete once no reader needs it")
