"""One error hierarchy for the whole connector.

Every error the connector raises on purpose derives from :class:`HiveAcidError`. Messages name the
culprit (file, option, column) and say what to do, because on a Spark executor the Python type is
lost and only the message reaches the user.
"""
from __future__ import annotations


class HiveAcidError(Exception):
    """Root of every error raised by spark-hive-acid."""


class InvalidOptionError(HiveAcidError, ValueError):
    """An option value (or combination of options) is malformed."""


class UnknownOptionError(InvalidOptionError):
    """An option name that no entry point knows (a typo): the message names the closest known one."""


class InvalidSnapshotError(InvalidOptionError):
    """A ValidWriteIdList / ValidTxnList string cannot be parsed."""


class TableNotFoundError(HiveAcidError):
    """The table path (or metastore table) does not exist."""


class NotAnAcidTableError(HiveAcidError):
    """The directory exists but holds no Hive ACID table."""


class NotEnoughHistoryError(HiveAcidError):
    """Hive's ACID_NOT_ENOUGH_HISTORY: the snapshot is older than a compacted base."""


class CorruptFileError(HiveAcidError):
    """An ORC file (or side file) cannot be read; the message names the file."""


class TransactionLogDamagedError(CorruptFileError):
    """A record of a path-mode table's transaction log cannot be read or fails its checksum; the
    table's snapshot cannot be known until it is restored or repaired (the message says how)."""


class SchemaMismatchError(HiveAcidError):
    """File schemas (or a DataFrame and a table) cannot be reconciled."""


class UnsupportedTypeError(SchemaMismatchError):
    """A Hive type that Spark cannot hold (e.g. uniontype)."""


class UnsupportedOperationError(HiveAcidError):
    """The table cannot do this: DELETE/UPDATE/MERGE on an insert-only table, or writing an
    insert-only table stored in a format other than ORC or Parquet."""


class CommitConflictError(HiveAcidError):
    """Another writer committed a conflicting change first; nothing was written."""


class AlreadyCommittedError(CommitConflictError):
    """A commit refused because a committed write already carries its once-only property (a
    streaming micro-batch that was committed before): nothing of this attempt was written."""


class StreamingError(HiveAcidError):
    """A streaming source cannot go on without losing or repeating rows (changes it does not
    stream, history a compaction erased); the message says what to do."""


class CardinalityViolationError(HiveAcidError):
    """A MERGE matched one target row with several source rows; nothing was written."""


class WorkerPythonError(HiveAcidError):
    """Spark's Python workers run an interpreter that cannot import this package (a virtualenv
    not activated): the message names it and what to set (``PYSPARK_PYTHON`` /
    ``spark.pyspark.python``)."""


class MetastoreError(HiveAcidError):
    """The Hive Metastore refused a call or cannot be reached."""


class StorageError(HiveAcidError):
    """A file system operation failed (unreachable service, permission, vanished file)."""


class PathNotFoundError(StorageError):
    """A file or directory does not exist (raised by the file-system layer, which knows paths,
    not tables; readers turn it into TableNotFoundError where a table is meant)."""


class AnswerLostError(StorageError):
    """A request reached a storage service but its answer did not come back: it may or may not
    have taken effect (resolved by reading back, never guessed: ``io.s3_client``)."""


class PathExistsError(StorageError):
    """A file or directory that must not exist yet does (e.g. a rename's destination)."""


# --- the Hive Metastore ----------------------------------------------------------------------------
class MetastoreNotConfiguredError(MetastoreError, InvalidOptionError):
    """No metastore URI in the options, the Spark conf or ``$HIVE_CONF_DIR/hive-site.xml``."""


class MetastoreUnavailableError(MetastoreError):
    """No metastore URI accepted a connection, or the connection broke during a call."""


class UnknownMethodError(MetastoreError):
    """The server does not implement a Thrift method (e.g. a Hive 3 call on a Hive 2 server)."""


class LockTimeoutError(MetastoreError):
    """A lock stayed WAITING longer than the lock wait timeout (the transaction is aborted)."""


class TransactionAbortedError(MetastoreError):
    """The metastore aborted the transaction (timed out, aborted by someone else, or a conflict)."""


class WriteConflictError(TransactionAbortedError, CommitConflictError):
    """Commit refused: a concurrent UPDATE/DELETE/MERGE committed to the same table or partition."""


class CommitStateUnknownError(MetastoreError):
    """The connection broke while committing: the transaction may or may not have committed."""
