"""Hive Metastore layer: table metadata, snapshots and write transactions (no Spark needed).

Quick tour::

    from spark_hive_acid.metastore import MetastoreClient, open_table_snapshot, write_transaction

    table, write_ids, txns = open_table_snapshot({"table": "db.t",
                                                  "metastoreUri": "thrift://hms:9083"})
    with write_transaction({"metastoreUri": "thrift://hms:9083"}, "db", "t", "insert") as txn:
        ...  # write delta_{txn.write_id}_{txn.write_id}_0000 files, then commit on exit

See docs/metastore.md.
"""
from __future__ import annotations

from typing import Any

from .api import client_from_options, open_table_snapshot, parse_table_name, table_from_options
from ..acid.partitions import parse_partition_name
from .client import MetastoreClient
from .connection import parse_hive_time
from ..exceptions import (
    CommitStateUnknownError,
    LockTimeoutError,
    MetastoreNotConfiguredError,
    MetastoreUnavailableError,
    TransactionAbortedError,
    UnknownMethodError,
    WriteConflictError,
)
from .model import (
    CompactionInfo,
    CompactionRequestResult,
    LockInfo,
    OpenTxnsInfo,
    PartitionInfo,
    TableInfo,
    TxnStatus,
)
from .partitions import FilterTerm, PartitionFilter, make_partition_name
from .snapshots import (
    txn_list_from_open_txns,
    write_ids_from_table_valid_write_ids,
    write_ids_from_txn_list,
)
from .locks import LockSpec, Operation, lock_specs
from .uris import resolve_metastore_uris

__all__ = [
    "CommitStateUnknownError", "CompactionInfo", "CompactionRequestResult", "FilterTerm",
    "LockInfo", "LockSpec", "LockTimeoutError", "MetastoreClient", "MetastoreNotConfiguredError",
    "MetastoreUnavailableError", "OpenTxnsInfo", "Operation", "PartitionFilter", "PartitionInfo",
    "TableInfo", "Transaction", "TransactionAbortedError", "TransactionHandle", "TxnStatus",
    "UnknownMethodError", "WriteConflictError", "client_from_options", "lock_specs",
    "make_partition_name", "open_table_snapshot", "parse_hive_time", "parse_partition_name",
    "parse_table_name", "resolve_metastore_uris", "table_from_options",
    "txn_list_from_open_txns", "write_ids_from_table_valid_write_ids", "write_ids_from_txn_list",
    "write_transaction",
]

#: Moved to :mod:`spark_hive_acid.txn.hms` (the metastore package holds no transaction logic beyond
#: its RPCs); re-exported here for one release, loaded on first use.
_MOVED = {"Transaction": "HmsTransaction", "TransactionHandle": "TransactionHandle",
          "write_transaction": "write_transaction"}


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        from ..txn import hms
        return getattr(hms, _MOVED[name])
    raise AttributeError(name)
