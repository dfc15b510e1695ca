"""Compatibility path (one release): the metastore transaction lives in
:mod:`spark_hive_acid.txn.hms` (and the lock rules in :mod:`spark_hive_acid.metastore.locks`)."""
from __future__ import annotations

from ..txn.hms import (  # noqa: F401
    DEFAULT_LOCK_TIMEOUT_S,
    HmsTransaction,
    TransactionHandle,
    write_transaction,
)
from .locks import LockSpec, Operation, lock_specs  # noqa: F401

Transaction = HmsTransaction
