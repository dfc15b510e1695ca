"""Entry points for the data source: data source options in, metastore answers out.

Options (all strings, keys case-insensitive):

- ``table``: ``db.tbl`` (or ``tbl`` in database ``default``); backquotes allowed.
- ``metastoreUri``: ``thrift://host:port[,thrift://...]`` (else Spark conf / hive-site.xml, see
  :func:`~spark_hive_acid.metastore.uris.resolve_metastore_uris`).
- ``metastoreTimeout``: socket timeout in seconds (default 60).
- ``lockWaitTimeout``: seconds a writer waits for a lock (default 300).
- ``heartbeatInterval``: seconds between transaction heartbeats (default hive.txn.timeout / 3).
"""
from __future__ import annotations

from typing import Mapping, Optional, Sequence

from ..acid.snapshot import ValidIdList
from ..exceptions import InvalidOptionError
from .client import MetastoreClient
from .connection import DEFAULT_TIMEOUT_S
from .model import TableInfo
from .. import options as opt

OPTION_TABLE = "table"
OPTION_TIMEOUT = "metastoreTimeout"
OPTION_LOCK_TIMEOUT = "lockWaitTimeout"
OPTION_HEARTBEAT = "heartbeatInterval"


def parse_table_name(text: str, default_db: str = "default") -> tuple[str, str]:
    """``db.tbl`` / ``tbl`` / ```db`.`tbl``` -> ``(db, tbl)`` in lower case."""
    raw = (text or "").strip()
    parts = [p.strip().strip("`").strip() for p in raw.split(".")] if raw else []
    if len(parts) == 1 and parts[0]:
        return default_db.lower(), parts[0].lower()
    if len(parts) == 2 and all(parts):
        return parts[0].lower(), parts[1].lower()
    raise InvalidOptionError(f"Malformed table name {text!r} in option '{OPTION_TABLE}': "
                             "expected 'db.table' or 'table'")


def client_from_options(options: Mapping[str, str],
                        spark_conf: Optional[Mapping[str, str]] = None,
                        uris: Optional[str | Sequence[str]] = None) -> MetastoreClient:
    """A (not yet connected) client for the metastore the options point at (or ``uris``), with
    the ``metastoreTimeout`` option's socket timeout."""
    timeout = opt.value(options, OPTION_TIMEOUT)
    if uris is not None:
        return MetastoreClient(uris, timeout=timeout)
    return MetastoreClient.from_options(options, spark_conf, timeout=timeout)


def table_from_options(options: Mapping[str, str]) -> tuple[str, str]:
    raw = opt.get(options, OPTION_TABLE)
    if not raw:
        raise InvalidOptionError(f"Missing option '{OPTION_TABLE}' (e.g. .option('table', "
                                 "'db.tbl')) to read through the Hive Metastore")
    return parse_table_name(raw)


def open_table_snapshot(options: Mapping[str, str],
                        spark_conf: Optional[Mapping[str, str]] = None
                        ) -> tuple[TableInfo, ValidIdList, ValidIdList]:
    """``(table, write_ids, txns)`` for reading the table named by the ``table`` option now.

    Raises TableNotFoundError, NotAnAcidTableError, MetastoreError (naming the URI).
    """
    db, tbl = table_from_options(options)
    with client_from_options(options, spark_conf) as client:
        table = client.get_table(db, tbl)
        write_ids, txns = client.read_snapshot(table.db, table.name)
    return table, write_ids, txns
