"""Compatibility path (one release): the metastore transaction lives in
:mod:`spark_hive_acid.txn.hms` (and the lock rules in :mod:`spark_hive_acid.metastore.locks`)."""
from __future__ import annotations

from ..txn.hms import HmsTransaction, TransactionHandle, write_transaction  # noqa: F401
from ..txn.hms_lifecycle import DEFAULT_LOCK_TIMEOUT_S  # noqa: F401
from .locks import LockSpec, Operation, lock_specs  # noqa: F401

Transaction = HmsTransaction
