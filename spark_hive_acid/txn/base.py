"""The one transaction interface every writer commits through.

A transaction is one write id on one table, from ``begin`` to ``commit`` or ``abort``. Two
implementations exist, and a writer never needs to know which one it holds:

* :class:`~spark_hive_acid.txn.pathlog.PathTransaction`: the path-mode log under the table
  directory (``_hiveacid_txnlog``), for tables without a metastore;
* :class:`~spark_hive_acid.txn.hms.HmsTransaction`: a Hive Metastore transaction with Hive's locks.

Writers (the Spark writer, DML, the Spark-free ``write_table``, compaction, the streaming sink)
stage files under the write id, then hand them to
:func:`~spark_hive_acid.txn.committer.commit_write`, which publishes them and calls :meth:`commit`.
A transaction crosses processes as its :meth:`handle` (picklable): executors use it to know the
write id and to heartbeat, and another process can :meth:`TxnHandle.resume` it to commit or abort.
"""
from __future__ import annotations

import abc
import contextlib
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Optional, Protocol, Sequence

from ..acid.snapshot import ValidIdList
from ..acid.partition_tree import leaf_partitions
from .keepalive import KeepAliveProcess, TaskHeartbeat


#: Operations built from rows they read at their snapshot.
DML_OPERATIONS = frozenset({"delete", "update", "merge"})

#: A commit property naming something a table must receive at most once (a streaming query's
#: micro-batch): a transaction whose properties carry it refuses to commit, raising
#: AlreadyCommittedError, when a write committed after its snapshot carries the same value.
ONCE_PROPERTY = "once"


@dataclass(frozen=True)
class WriteSet:
    """What a commit changes, for the write-write conflict rules (``txn.conflicts``)."""

    inserted: frozenset[str] = frozenset()  # partitions that get new rows (insert deltas)
    deleted: frozenset[str] = frozenset()  # partitions where rows are deleted (delete deltas)
    overwritten: frozenset[str] = frozenset()  # partitions replaced by base_W (overwrites)
    static_overwrite: bool = False  # an INSERT OVERWRITE of the whole table
    reads_table: bool = False  # built from rows it read at its snapshot (DELETE/UPDATE/MERGE)
    inserts_unmatched: bool = False  # a MERGE inserting rows that no target row matched
    compacted: frozenset[str] = frozenset()  # partitions a compaction rewrites (rows unchanged)
    #: the region a static partition overwrite, truncate or dropPartitions replaced: every
    #: partition a condition on the partition columns selects, existing or not
    #: (``acid.partition_condition.PartitionCondition.to_json``); None: no such region
    replaced: Optional[str] = None

    @property
    def touched(self) -> frozenset[str]:
        return self.inserted | self.deleted | self.overwritten

    def to_json(self) -> dict:
        return {"inserted": sorted(self.inserted), "deleted": sorted(self.deleted),
                "overwritten": sorted(self.overwritten), "staticOverwrite": self.static_overwrite,
                "readsTable": self.reads_table, "insertsUnmatched": self.inserts_unmatched,
                **({"compacted": sorted(self.compacted)} if self.compacted else {}),
                **({"replaced": self.replaced} if self.replaced is not None else {})}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "WriteSet":
        return cls(frozenset(d.get("inserted", ())), frozenset(d.get("deleted", ())),
                   frozenset(d.get("overwritten", ())), bool(d.get("staticOverwrite")),
                   bool(d.get("readsTable")), bool(d.get("insertsUnmatched")),
                   frozenset(d.get("compacted", ())), d.get("replaced"))


class CommitOutcome(Protocol):
    """What a commit records (``write.publish.CommitResult``)."""

    write_id: int
    partitions: list[str]

    @property
    def metrics(self) -> dict: ...


class TxnHandle(Protocol):
    """A picklable reference to an open transaction (no connection, no thread)."""

    @property
    def write_id(self) -> int:
        """The transaction's write id (read-only: a handle may be a frozen dataclass)."""

    def resume(self) -> "Transaction":
        """The transaction, live in this process (heartbeating again where it needs to)."""

    def abort(self, reason: str) -> Optional[bool]:
        """Abort it without resuming (idempotent; already-ended transactions are left alone).
        False when that could not be confirmed (hand it to the keep-alive process then)."""

    def task_heartbeat(self) -> TaskHeartbeat:
        """What executor tasks call while they write under this write id."""


class Transaction(abc.ABC):
    """One write id on one table. See the module docstring."""

    write_id: int
    operation: str
    table_path: str  # the table's location, in its file system's form

    def ids(self) -> dict[str, int]:
        """How metrics and messages identify this transaction."""
        return {"writeId": self.write_id}

    # -- what it reads --------------------------------------------------------------------------
    @abc.abstractmethod
    def read_snapshot(self) -> tuple[ValidIdList, ValidIdList]:
        """``(write ids, txns)`` this transaction reads the table at (DML targets)."""

    # -- staying alive and crossing processes --------------------------------------------------
    @contextlib.contextmanager
    def keep_alive(self) -> Iterator[None]:
        """Heartbeat from this process while the block runs (long driver-side jobs)."""
        yield

    @abc.abstractmethod
    def handle(self) -> TxnHandle:
        """A picklable reference for other processes."""

    def hand_over(self, owner: tuple[int, Optional[int]]
                  ) -> tuple[TxnHandle, Optional[KeepAliveProcess]]:
        """Hand the open transaction to other processes for a job: stop heartbeating it here,
        and, where it would otherwise time out, start a detached keep-alive process that
        heartbeats it while ``owner`` (pid, start time) lives and aborts it if the owner dies
        first. Returns the handle and that process (None where none is needed)."""
        return self.handle(), None

    # -- committing -------------------------------------------------------------------------------
    @abc.abstractmethod
    def record_intent(self, dirs: Sequence[str]) -> None:
        """Remember the table directories the commit is about to create (removed on abort)."""

    def existing_partitions(self, fs: Any, depth: int) -> list[str]:
        """The table's partitions (``k=v/...``) before this write, for a static overwrite."""
        return leaf_partitions(fs, self.table_path, depth)

    def partition_dirs(self, names: Optional[Sequence[str]] = None
                       ) -> Optional[Mapping[str, str]]:
        """Of the partitions ``names`` (all when None), those whose directory is not
        ``<table>/<k=v/...>`` (metastore locations)."""
        return None

    def register_partitions(self, written: Sequence[str]) -> None:
        """Make the partitions written known where the catalog needs them (before commit)."""

    @abc.abstractmethod
    def commit(self, outcome: CommitOutcome, *, write_set: Optional[WriteSet] = None,
               properties: Optional[Mapping[str, str]] = None) -> None:
        """Make the write visible, all at once. ``write_set`` says what it changes, for the
        conflict rules against concurrent commits (docs/writing.md, "Conflicts"). ``properties``
        are recorded atomically with the commit (the path-mode log's commit record; beside a
        metastore write's files, ``txn.commit_marker``), e.g. a streaming query's progress; see
        :data:`ONCE_PROPERTY`. Raises CommitConflictError (nothing committed),
        AlreadyCommittedError or CommitStateUnknownError."""

    @abc.abstractmethod
    def abort(self, reason: str = "") -> Optional[bool]:
        """End the transaction without effect and remove the directories it had published
        (idempotent; a committed transaction is left alone). False when the end could not be
        confirmed (a metastore out of reach): a keep-alive process must finish it."""

    @property
    def commit_state_unknown(self) -> bool:
        """True when a commit attempt may or may not have gone through (its files must stay)."""
        return False
