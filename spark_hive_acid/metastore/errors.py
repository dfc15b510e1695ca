"""Metastore-specific errors, all rooted at :class:`~spark_hive_acid.exceptions.HiveAcidError`.

The general classes (``MetastoreError``, ``TableNotFoundError``, ``NotAnAcidTableError``,
``CommitConflictError``) live in :mod:`spark_hive_acid.exceptions`; these refine them.
"""
from __future__ import annotations

from ..exceptions import CommitConflictError, InvalidOptionError, MetastoreError


class MetastoreNotConfiguredError(MetastoreError, InvalidOptionError):
    """No metastore URI in the options, the Spark conf or ``$HIVE_CONF_DIR/hive-site.xml``."""


class MetastoreUnavailableError(MetastoreError):
    """No metastore URI accepted a connection, or the connection broke during a call."""


class LockTimeoutError(MetastoreError):
    """A lock stayed WAITING longer than the lock wait timeout (the transaction is aborted)."""


class TransactionAbortedError(MetastoreError):
    """The metastore aborted the transaction (timed out, aborted by someone else, or a conflict)."""


class WriteConflictError(TransactionAbortedError, CommitConflictError):
    """Commit refused: a concurrent UPDATE/DELETE/MERGE committed to the same table or partition."""


class CommitStateUnknownError(MetastoreError):
    """The connection broke while committing: the transaction may or may not have committed."""
