"""Compatibility path (one release): the metastore errors live in :mod:`spark_hive_acid.exceptions`."""
from __future__ import annotations

from ..exceptions import (  # noqa: F401
    CommitStateUnknownError,
    LockTimeoutError,
    MetastoreNotConfiguredError,
    MetastoreUnavailableError,
    TransactionAbortedError,
    UnknownMethodError,
    WriteConflictError,
)
