"""What a metastore holds, in few round trips: its databases, their tables, and which are ACID.

A warehouse-wide tool must not send one call per table and partition (Hive's own Initiator loaded
metastores with over a million such checks, HIVE-25217): tables come in batches of
``get_table_objects_by_name`` (one call per :data:`BATCH` tables), falling back to one
``get_table`` each only on a server without it.
"""
from __future__ import annotations

import fnmatch
import logging
from typing import Iterable, Optional

from ..exceptions import MetastoreError, UnknownMethodError
from .client import MetastoreClient
from .convert import table_info_from_thrift
from .model import TableInfo

log = logging.getLogger(__name__)
BATCH = 100


def databases(client: MetastoreClient, pattern: Optional[str] = None) -> list[str]:
    """Database names (all, or those matching a glob ``pattern`` such as ``sales_*``)."""
    names = [str(n) for n in client._call("get_all_databases", what="get_all_databases",
                                           retry=True)]
    return sorted(n for n in names if pattern is None or fnmatch.fnmatchcase(n, pattern.lower()))


def table_names(client: MetastoreClient, db: str) -> list[str]:
    """Every table name of database ``db``."""
    return sorted(str(n) for n in client._call("get_all_tables", db, what=f"get_all_tables({db})",
                                                retry=True))


def tables(client: MetastoreClient, db: str, names: Iterable[str]) -> list[TableInfo]:
    """The tables ``names`` of ``db`` (missing ones left out), :data:`BATCH` per call."""
    wanted = list(names)
    out: list[TableInfo] = []
    for i in range(0, len(wanted), BATCH):
        chunk = wanted[i:i + BATCH]
        try:
            raw = client._call("get_table_objects_by_name", db, chunk,
                               what=f"get_table_objects_by_name({db}, {len(chunk)} tables)",
                               retry=True)
            out.extend(table_info_from_thrift(t) for t in raw or [])
        except (UnknownMethodError, MetastoreError) as e:
            if not isinstance(e, UnknownMethodError) and "Invalid method" not in str(e):
                raise
            log.info("%s has no get_table_objects_by_name (%s): one get_table per table",
                     client.uri, e)
            for n in chunk:
                try:
                    out.append(client.get_table(db, n, require_acid=False))
                except MetastoreError as missing:
                    log.debug("table %s.%s skipped: %s", db, n, missing)
    return out


def acid_tables(client: MetastoreClient, db: str) -> list[TableInfo]:
    """The transactional tables of ``db`` (full ACID and insert-only), by name."""
    return sorted((t for t in tables(client, db, table_names(client, db))
                   if t.is_transactional and (t.table_type or "").upper() != "VIRTUAL_VIEW"),
                  key=lambda t: t.name)
