"""Write transactions: open a txn, get the table write id, lock like Hive, heartbeat, commit/abort.

Lifecycle (what Hive's ``DbTxnManager`` does for one statement)::

    open_txns -> allocate_table_write_ids (Hive 3+; the txn id on 2.x) -> lock (poll check_lock
    while WAITING) -> [write files; add_dynamic_partitions] -> commit_txn   (or abort_txn)

A daemon thread heartbeats the transaction and its lock from the moment it is opened, at an
interval below the server's ``hive.txn.timeout``. Used as a context manager, a transaction
begins on entry, aborts on any exception and commits on a clean exit if still open.

Locks per operation (Hive 2.3/3.1 ``DbTxnManager.acquireLocks`` with default settings):

==================  ============  ==============  =========================================
operation           lock type     operationType   notes
==================  ============  ==============  =========================================
read                SHARED_READ   SELECT
insert              SHARED_READ   INSERT          inserts never block each other
insert_overwrite    EXCLUSIVE     UPDATE          Hive 3 ``hive.txn.xlock.iow=true``
update / delete     SHARED_WRITE  UPDATE/DELETE   "semi-shared": one writer at a time
merge               SHARED_WRITE  UPDATE          plus SHARED_READ/SELECT on source tables
==================  ============  ==============  =========================================

The level is one component per named partition, else the table; a write to a partitioned
table whose partitions are not known up front is a table-level *dynamic partition write*, and
the partitions written must then be reported (:meth:`Transaction.add_partitions`).
"""
from __future__ import annotations

import enum
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from ..acid.snapshot import ValidIdList
from ..exceptions import InvalidOptionError, MetastoreError
from ._thrift import bindings
from .client import MetastoreClient
from ..exceptions import (
    CommitStateUnknownError,
    LockTimeoutError,
    MetastoreUnavailableError,
    TransactionAbortedError,
)
from .model import PartitionInfo, TableInfo
from .partitions import make_partition_name, partition_values

log = logging.getLogger(__name__)

DEFAULT_LOCK_TIMEOUT_S = 300.0
MIN_HEARTBEAT_INTERVAL_S = 0.05


class Operation(str, enum.Enum):
    """What a transaction does to its table (decides the lock)."""

    READ = "read"
    INSERT = "insert"
    INSERT_OVERWRITE = "insert_overwrite"
    UPDATE = "update"
    DELETE = "delete"
    MERGE = "merge"

    @classmethod
    def _missing_(cls, value: object) -> Optional["Operation"]:
        if isinstance(value, str):
            key = value.strip().lower().replace(" ", "_").replace("-", "_")
            key = {"overwrite": "insert_overwrite", "append": "insert", "select": "read"}.get(
                key, key)
            for member in cls:
                if member.value == key:
                    return member
        return None

    @property
    def is_write(self) -> bool:
        return self is not Operation.READ


# operation -> (LockType name, DataOperationType name)
_LOCKS = {
    Operation.READ: ("SHARED_READ", "SELECT"),
    Operation.INSERT: ("SHARED_READ", "INSERT"),
    Operation.INSERT_OVERWRITE: ("EXCLUSIVE", "UPDATE"),
    Operation.UPDATE: ("SHARED_WRITE", "UPDATE"),
    Operation.DELETE: ("SHARED_WRITE", "DELETE"),
    Operation.MERGE: ("SHARED_WRITE", "UPDATE"),
}


@dataclass(frozen=True)
class LockSpec:
    """One lock component, before it becomes a Thrift ``LockComponent``."""

    lock_type: str
    operation_type: str
    db: str
    table: str
    partition: Optional[str] = None
    dynamic_partition_write: bool = False

    def to_thrift(self) -> Any:
        _, tt = bindings()
        level = tt.LockLevel.PARTITION if self.partition else tt.LockLevel.TABLE
        return tt.LockComponent(
            type=getattr(tt.LockType, self.lock_type), level=level, dbname=self.db.lower(),
            tablename=self.table.lower(), partitionname=self.partition,
            operationType=getattr(tt.DataOperationType, self.operation_type),
            isTransactional=True, isDynamicPartitionWrite=self.dynamic_partition_write)


def lock_specs(operation: Operation | str, table: TableInfo,
               partitions: Optional[Sequence[str]] = None,
               read_tables: Sequence[TableInfo] = ()) -> list[LockSpec]:
    """The lock components Hive would request for ``operation`` on ``table``.

    Args:
        partitions: partition names the operation is limited to (static partitions); None means
            the whole table (a dynamic partition write if the table is partitioned).
        read_tables: other tables the statement reads (e.g. a MERGE source): SHARED_READ each.
    """
    op = Operation(operation)
    lock_type, op_type = _LOCKS[op]
    specs: list[LockSpec]
    if partitions:
        specs = [LockSpec(lock_type, op_type, table.db, table.name, p) for p in partitions]
    else:
        dynamic = op.is_write and table.is_partitioned
        specs = [LockSpec(lock_type, op_type, table.db, table.name, None, dynamic)]
    specs += [LockSpec("SHARED_READ", "SELECT", t.db, t.name) for t in read_tables]
    return specs


@dataclass(frozen=True)
class TransactionHandle:
    """What executors need to know about a driver-side transaction (picklable, no connection)."""

    uris: tuple[str, ...]
    db: str
    table: str
    operation: str
    txn_id: int
    write_id: int
    lock_id: Optional[int] = None


class Transaction:
    """One Hive ACID transaction on one table, driven from the Spark driver.

    Args:
        client: an open-able :class:`MetastoreClient` (closed at the end if ``owns_client``).
        db, tbl: the table written (or read, for ``Operation.READ``).
        operation: an :class:`Operation` or its name (``"insert"``, ``"insert_overwrite"``...).
        table: its :class:`TableInfo` if already fetched.
        partitions: static partitions (specs, value lists or names) to lock instead of the table.
        read_tables: ``(db, tbl)`` pairs also read (SHARED_READ locks), e.g. a MERGE source.
        lock_timeout: seconds to wait for a WAITING lock before LockTimeoutError.
        heartbeat_interval: seconds between heartbeats; default ``hive.txn.timeout / 3``.
    """

    def __init__(self, client: MetastoreClient, db: str, tbl: str, operation: Operation | str,
                 *, table: Optional[TableInfo] = None,
                 partitions: Optional[Sequence[Mapping[str, Any] | Sequence[Any] | str]] = None,
                 read_tables: Sequence[tuple[str, str]] = (),
                 lock_timeout: float = DEFAULT_LOCK_TIMEOUT_S,
                 heartbeat_interval: Optional[float] = None, owns_client: bool = False) -> None:
        try:
            self.operation = Operation(operation)
        except ValueError as e:
            raise InvalidOptionError(
                f"Unknown operation {operation!r}; expected one of "
                f"{', '.join(o.value for o in Operation)}") from e
        self.client = client
        self.db, self.tbl = db.lower(), tbl.lower()
        self.table = table
        self._partition_args = list(partitions) if partitions else None
        self._read_table_names = list(read_tables)
        self.lock_timeout = float(lock_timeout)
        self.heartbeat_interval = heartbeat_interval
        self.owns_client = owns_client
        self.state = "new"
        self.txn_id: Optional[int] = None
        self.write_id: Optional[int] = None
        self.lock_id: Optional[int] = None
        self.lock_specs: list[LockSpec] = []
        self.partitions_written: list[str] = []
        self.heartbeats_sent = 0
        self._heartbeat_error: Optional[BaseException] = None
        self._heartbeat_lock_too = True
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    # -- lifecycle ----------------------------------------------------------------------------
    def begin(self) -> "Transaction":
        """Open the transaction, allocate the write id and acquire the lock (waiting if needed)."""
        if self.state != "new":
            raise MetastoreError(f"Transaction on {self.full_name} already {self.state}")
        try:
            if self.table is None:
                self.table = self.client.get_table(self.db, self.tbl)
            read_infos = [self.client.get_table(d, t, require_acid=False)
                          for d, t in self._read_table_names]
            names = None
            if self._partition_args is not None:
                keys = self.table.partition_names
                if not keys:
                    raise InvalidOptionError(f"Table {self.full_name} is not partitioned")
                names = [make_partition_name(keys, partition_values(keys, p))
                         for p in self._partition_args]
            self.lock_specs = lock_specs(self.operation, self.table, names, read_infos)
            self.txn_id = self.client.open_txn()
            self.state = "open"
            log.info("opened txn %d for %s on %s", self.txn_id, self.operation.value,
                     self.full_name)
            self._start_heartbeat()
            self.write_id = (self.client.allocate_write_id(self.txn_id, self.db, self.tbl)
                             if self.operation.is_write else None)
            self._acquire_lock()
        except BaseException as e:
            if self.state == "open":
                self.abort(reason=f"begin failed: {e}")
            self._close_client()
            raise
        return self

    def commit(self) -> None:
        """Commit; raises WriteConflictError / TransactionAbortedError if the metastore refuses."""
        self._require_open("commit")
        if self._heartbeat_error is not None:
            err = self._heartbeat_error
            self._finish("aborted")
            raise TransactionAbortedError(
                f"Transaction {self.txn_id} on {self.full_name} was lost while running: {err}"
            ) from err
        self._stop_heartbeat()
        try:
            self.client.commit_txn(self.txn_id)  # type: ignore[arg-type]
        except TransactionAbortedError:
            self._finish("aborted")
            raise
        except MetastoreUnavailableError as e:
            self._finish("unknown")
            raise CommitStateUnknownError(
                f"Lost the metastore connection while committing txn {self.txn_id} on "
                f"{self.full_name}: it may or may not have committed ({e})") from e
        except BaseException:
            # Anything else (e.g. a MetaException): the txn is still open; make sure it ends.
            self.abort(reason="commit failed")
            raise
        log.info("committed txn %d on %s", self.txn_id, self.full_name)
        self._finish("committed")

    def abort(self, reason: str = "") -> None:
        """Abort (idempotent; a no-op once committed or aborted). Releases the locks."""
        if self.state != "open":
            self._close_client()
            return
        self._stop_heartbeat()
        try:
            self.client.abort_txn(self.txn_id)  # type: ignore[arg-type]
            log.info("aborted txn %d on %s%s", self.txn_id, self.full_name,
                     f" ({reason})" if reason else "")
        except TransactionAbortedError:
            log.info("txn %d was already aborted or gone", self.txn_id)
        except MetastoreError as e:
            log.error("could not abort txn %s on %s (%s); it stays open until the metastore "
                      "times it out", self.txn_id, self.full_name, e)
        self._finish("aborted")

    def __enter__(self) -> "Transaction":
        if self.state == "new":
            self.begin()
        return self

    def __exit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> None:
        if exc is not None:
            self.abort(reason=f"{type(exc).__name__}: {exc}")
        elif self.state == "open":
            self.commit()
        else:
            self._close_client()

    def __getstate__(self) -> dict[str, Any]:
        raise TypeError(f"Transaction {self.txn_id} lives on the driver (socket, heartbeat thread) "
                        "and cannot be pickled: send txn.handle() to executors instead")

    # -- during the transaction ---------------------------------------------------------------
    @property
    def full_name(self) -> str:
        return f"{self.db}.{self.tbl}"

    @property
    def dynamic_partition_write(self) -> bool:
        return any(s.dynamic_partition_write for s in self.lock_specs)

    def read_snapshot(self) -> tuple[ValidIdList, ValidIdList]:
        """``(write_ids, txns)`` as this transaction sees the table (its own writes are valid)."""
        self._require_open("read a snapshot")
        return self.client.read_snapshot(self.db, self.tbl, current_txn=self.txn_id)

    def add_partitions(self, partitions: Sequence[Mapping[str, Any] | Sequence[Any] | str],
                       locations: Optional[Sequence[Optional[str]]] = None
                       ) -> list[PartitionInfo]:
        """Register partitions written by this transaction.

        Creates the missing ones in the catalog (``add_partitions``) and, for a dynamic partition
        write, reports them to the transaction manager (``add_dynamic_partitions``) so that
        compaction and write-conflict detection know about them.
        """
        self._require_open("add partitions")
        infos = self.client.add_partitions(self.db, self.tbl, partitions, locations,
                                           if_not_exists=True)
        self.record_partitions([p.name for p in infos])
        return infos

    def record_partitions(self, names: Sequence[str]) -> None:
        """Only the ``add_dynamic_partitions`` half of :meth:`add_partitions`."""
        self._require_open("record partitions")
        new = [n for n in names if n not in self.partitions_written]
        if not new or not self.dynamic_partition_write:
            self.partitions_written += new
            return
        _, tt = bindings()
        op = getattr(tt.DataOperationType, _LOCKS[self.operation][1])
        txn_id = int(self.txn_id)  # type: ignore[arg-type]
        self.client.add_dynamic_partitions(txn_id, self.write_id or txn_id, self.db, self.tbl,
                                           new, op)
        self.partitions_written += new

    def handle(self) -> TransactionHandle:
        """A picklable description for executors (no socket, no thread)."""
        self._require_open("hand out")
        return TransactionHandle(tuple(self.client.uris), self.db, self.tbl,
                                 self.operation.value, int(self.txn_id),  # type: ignore[arg-type]
                                 int(self.write_id if self.write_id is not None else self.txn_id),
                                 self.lock_id)

    def detach(self) -> TransactionHandle:
        """Hand the open transaction to another process: stop heartbeating it here and close the
        connection *without* ending it. Returns the handle to :meth:`resume` it with; whoever
        holds the handle must heartbeat the transaction from now on, or it times out."""
        handle = self.handle()
        self._stop_heartbeat()
        self.state = "detached"
        self._close_client()
        return handle

    @classmethod
    def resume(cls, client: MetastoreClient, handle: TransactionHandle, *,
               table: Optional[TableInfo] = None, heartbeat_interval: Optional[float] = None,
               owns_client: bool = True) -> "Transaction":
        """The open transaction ``handle`` describes, heartbeating from a thread of this process.

        Heartbeats once first: raises TransactionAbortedError (saying what to do) if the txn was
        aborted or timed out meanwhile, MetastoreUnavailableError if the metastore is unreachable.
        """
        txn = cls(client, handle.db, handle.table, handle.operation, table=table,
                  heartbeat_interval=heartbeat_interval, owns_client=owns_client)
        lock_id = handle.lock_id
        try:
            try:
                client.heartbeat(handle.txn_id, lock_id)
            except MetastoreError as e:
                if lock_id is None or "NoSuchLock" not in str(e) or isinstance(
                        e, TransactionAbortedError):
                    raise
                # Hive checks the lock first: an aborted txn's lock is gone. Ask about the txn.
                lock_id = None
                client.heartbeat(handle.txn_id, None)
        except TransactionAbortedError as e:
            txn._close_client()
            raise TransactionAbortedError(
                f"Transaction {handle.txn_id} ({handle.operation} into {handle.db}.{handle.table}) "
                f"was aborted or timed out before it could commit ({e}); nothing was written, run "
                "the job again") from e
        except BaseException:
            txn._close_client()
            raise
        txn.txn_id, txn.write_id, txn.lock_id = handle.txn_id, handle.write_id, lock_id
        if table is not None:
            txn.lock_specs = lock_specs(txn.operation, table)
        txn.state = "open"
        txn._start_heartbeat()
        return txn

    # -- internals ------------------------------------------------------------------------------
    def _require_open(self, what: str) -> None:
        if self.state != "open":
            raise MetastoreError(f"Cannot {what}: transaction {self.txn_id} on {self.full_name} "
                                 f"is {self.state}")

    def _acquire_lock(self) -> None:
        comps = [s.to_thrift() for s in self.lock_specs]
        lock_id, state = self.client.lock(comps, self.txn_id)
        self.lock_id = lock_id
        deadline = time.monotonic() + self.lock_timeout
        pause = 0.05
        while state == "WAITING":
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                blocker = self._describe_blocker(lock_id)
                try:
                    self.client.unlock(lock_id)  # a WAITING lock of a txn may be withdrawn
                except MetastoreError as e:
                    log.debug("could not withdraw waiting lock %d: %s", lock_id, e)
                raise LockTimeoutError(
                    f"Timed out after {self.lock_timeout:g} s waiting for a "
                    f"{self.lock_specs[0].lock_type} lock on {self.full_name} (lock {lock_id}, "
                    f"txn {self.txn_id}){blocker}. Raise the lockWaitTimeout option or retry "
                    "when the other transaction has finished; nothing was written.")
            time.sleep(min(pause, remaining))
            pause = min(pause * 2, 2.0)
            state = self.client.check_lock(lock_id, self.txn_id)
        if state != "ACQUIRED":
            raise MetastoreError(f"Lock {lock_id} on {self.full_name} ended {state} "
                                 f"(txn {self.txn_id})")
        log.info("txn %d holds lock %d (%s) on %s", self.txn_id, lock_id,
                 ", ".join(sorted({s.lock_type for s in self.lock_specs})), self.full_name)

    def _describe_blocker(self, lock_id: int) -> str:
        try:
            locks = self.client.show_locks(self.db, self.tbl)
        except MetastoreError:
            return ""
        blocked_by = {l.blocked_by_lock_id for l in locks if l.lock_id == lock_id} - {None}
        holders = [l for l in locks if l.lock_id in blocked_by] or [
            l for l in locks if l.lock_id != lock_id and l.state == "ACQUIRED"]
        if not holders:
            return ""
        h = holders[0]
        return (f"; blocked by lock {h.lock_id} ({h.type}, txn {h.txn_id}, user {h.user} on "
                f"{h.hostname}, agent {h.agent_info})")

    def _start_heartbeat(self) -> None:
        interval = self.heartbeat_interval
        if interval is None:
            interval = self.client.txn_timeout_seconds() / 3.0
        self.heartbeat_interval = max(float(interval), MIN_HEARTBEAT_INTERVAL_S)
        self._stop.clear()
        self._thread = threading.Thread(target=self._heartbeat_loop, daemon=True,
                                        name=f"hive-acid-heartbeat-txn{self.txn_id}")
        self._thread.start()

    def _heartbeat_loop(self) -> None:
        interval = float(self.heartbeat_interval or 1.0)
        while not self._stop.wait(interval):
            lock_id = self.lock_id if self._heartbeat_lock_too else None
            try:
                self.client.heartbeat(self.txn_id, lock_id)
                self.heartbeats_sent += 1
            except TransactionAbortedError as e:
                log.error("heartbeat: txn %s on %s is gone: %s", self.txn_id, self.full_name, e)
                self._heartbeat_error = e
                return
            except MetastoreError as e:
                if lock_id is not None and "NoSuchLock" in str(e):
                    log.debug("heartbeat: lock %s unknown; heartbeating the txn only", lock_id)
                    self._heartbeat_lock_too = False
                    continue
                log.warning("heartbeat of txn %s failed (%s); will retry", self.txn_id, e)

    def _stop_heartbeat(self) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=max(5.0, self.client.timeout))

    def _finish(self, state: str) -> None:
        self._stop_heartbeat()
        self.state = state
        self._close_client()

    def _close_client(self) -> None:
        if self.owns_client:
            self.client.close()
