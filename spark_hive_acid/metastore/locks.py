"""The locks Hive takes for each operation (what ``DbTxnManager.acquireLocks`` requests).

==================  ============  ==============  =========================================
operation           lock type     operationType   notes
==================  ============  ==============  =========================================
read                SHARED_READ   SELECT
insert              SHARED_READ   INSERT          inserts never block each other
insert_overwrite    EXCLUSIVE     UPDATE          Hive 3 ``hive.txn.xlock.iow=true``
update / delete     SHARED_WRITE  UPDATE/DELETE   Hive 2/3; Hive 4: EXCL_WRITE (below)
merge               SHARED_WRITE  UPDATE          plus SHARED_READ/SELECT on source tables
==================  ============  ==============  =========================================

Hive 4 takes EXCL_WRITE instead of SHARED_WRITE for UPDATE, DELETE and MERGE
(``hive.txn.xlock.write=true``, its default): it waits for every other writer of the table but
not for readers. ``lock_specs(..., hive4=True)`` follows it.

The level is one component per named partition, else the table; a write to a partitioned
table whose partitions are not known up front is a table-level *dynamic partition write*, and
the partitions written must then be reported (``add_dynamic_partitions``).
"""
from __future__ import annotations

import enum
import logging
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from ..exceptions import LockTimeoutError, MetastoreError
from ._thrift import bindings
from .model import TableInfo, lock_type_value

log = logging.getLogger(__name__)

class Operation(str, enum.Enum):
    """What a transaction does to its table (decides the lock)."""

    READ = "read"
    INSERT = "insert"
    INSERT_OVERWRITE = "insert_overwrite"
    UPDATE = "update"
    DELETE = "delete"
    MERGE = "merge"
    COMPACT = "compact"  # a compaction: rewrites, changes no row, allocates no write id

    @classmethod
    def _missing_(cls, value: object) -> Optional["Operation"]:
        if isinstance(value, str):
            key = value.strip().lower().replace(" ", "_").replace("-", "_")
            key = {"overwrite": "insert_overwrite", "append": "insert", "select": "read",
                   # they replace partitions with new bases, as an INSERT OVERWRITE does (Hive 4's
                   # TRUNCATE takes its EXCLUSIVE lock too)
                   "truncate": "insert_overwrite", "droppartitions": "insert_overwrite",
                   "restore": "insert_overwrite"}.get(key, key)
            for member in cls:
                if member.value == key:
                    return member
        return None

    @property
    def is_write(self) -> bool:
        return self is not Operation.READ

    @property
    def allocates_write_id(self) -> bool:
        return self.is_write and self is not Operation.COMPACT


# operation -> (LockType name, DataOperationType name)
_LOCKS = {
    Operation.READ: ("SHARED_READ", "SELECT"),
    Operation.INSERT: ("SHARED_READ", "INSERT"),
    Operation.INSERT_OVERWRITE: ("EXCLUSIVE", "UPDATE"),
    Operation.UPDATE: ("SHARED_WRITE", "UPDATE"),
    Operation.DELETE: ("SHARED_WRITE", "DELETE"),
    Operation.MERGE: ("SHARED_WRITE", "UPDATE"),
    # a compaction blocks no writer (Hive's compactor takes no lock at all in 2.3/3.1); a SHARED_READ
    # lock keeps an INSERT OVERWRITE (EXCLUSIVE) from replacing what it reads meanwhile
    Operation.COMPACT: ("SHARED_READ", "SELECT"),
}


#: Hive 4 (``hive.txn.xlock.write=true``): what replaces SHARED_WRITE
HIVE4_WRITE_LOCK = "EXCL_WRITE"


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
            type=lock_type_value(self.lock_type), level=level, dbname=self.db.lower(),
            tablename=self.table.lower(), partitionname=self.partition,
            operationType=getattr(tt.DataOperationType, self.operation_type),
            isTransactional=True, isDynamicPartitionWrite=self.dynamic_partition_write)


def lock_specs(operation: Operation | str, table: TableInfo,
               partitions: Optional[Sequence[str]] = None,
               read_tables: Sequence[TableInfo] = (), *, hive4: bool = False) -> list[LockSpec]:
    """The lock components Hive would request for ``operation`` on ``table``.

    Args:
        partitions: partition names the operation is limited to (static partitions); None means
            the whole table (a dynamic partition write if the table is partitioned).
        read_tables: other tables the statement reads (e.g. a MERGE source): SHARED_READ each.
        hive4: the metastore is Hive 4 (EXCL_WRITE instead of SHARED_WRITE).
    """
    op = Operation(operation)
    lock_type, op_type = _LOCKS[op]
    if hive4 and lock_type == "SHARED_WRITE":
        lock_type = HIVE4_WRITE_LOCK
    specs: list[LockSpec]
    if partitions:
        specs = [LockSpec(lock_type, op_type, table.db, table.name, p) for p in partitions]
    else:
        dynamic = op.allocates_write_id and table.is_partitioned
        specs = [LockSpec(lock_type, op_type, table.db, table.name, None, dynamic)]
    specs += [LockSpec("SHARED_READ", "SELECT", t.db, t.name) for t in read_tables]
    if op is Operation.COMPACT:
        specs.append(compaction_claim(table))
    return specs


#: Suffix of the name a compaction's claim lock is taken on (no such table exists).
COMPACTION_CLAIM_SUFFIX = "__hiveacid_compaction"


def compaction_claim(table: TableInfo) -> LockSpec:
    """An EXCLUSIVE lock that only compactions take, on a name beside the table's: two
    compactions of one table conflict in Hive's own lock manager (Hive 2.3 has no compaction
    write set, and a lock on the table itself strong enough would also stop UPDATE and DELETE).
    The metastore accepts locks on names that are not tables."""
    return LockSpec("EXCLUSIVE", "SELECT", table.db, table.name + COMPACTION_CLAIM_SUFFIX)


def data_operation_type(operation: Operation | str) -> str:
    """The ``DataOperationType`` name Hive records for ``operation`` (``INSERT``, ``UPDATE``...)."""
    return _LOCKS[Operation(operation)][1]


def acquire_lock(client: Any, specs: Sequence[LockSpec], txn_id: int, timeout: float,
                 table_name: str, on_requested: Optional[Callable[[int], None]] = None) -> int:
    """Request the lock ``specs`` for ``txn_id`` and wait (polling ``check_lock``) until it is
    ACQUIRED; returns the lock id. After ``timeout`` seconds the waiting lock is withdrawn and
    LockTimeoutError names the transaction that holds the conflicting lock.
    ``on_requested(lock_id)`` runs as soon as the lock id is known (heartbeats cover it then)."""
    lock_id, state = client.lock([s.to_thrift() for s in specs], txn_id)
    if on_requested is not None:
        on_requested(lock_id)
    deadline = time.monotonic() + timeout
    pause = 0.05
    while state == "WAITING":
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            blocker = _describe_blocker(client, table_name, lock_id)
            try:
                client.unlock(lock_id)  # a WAITING lock of a txn may be withdrawn
            except MetastoreError as e:
                log.debug("could not withdraw waiting lock %d: %s", lock_id, e)
            raise LockTimeoutError(
                f"Timed out after {timeout:g} s waiting for a {specs[0].lock_type} lock on "
                f"{table_name} (lock {lock_id}, txn {txn_id}){blocker}. Raise the lockWaitTimeout "
                "option or retry when the other transaction has finished; nothing was written.")
        time.sleep(min(pause, remaining))
        pause = min(pause * 2, 2.0)
        state = client.check_lock(lock_id, txn_id)
    if state != "ACQUIRED":
        raise MetastoreError(f"Lock {lock_id} on {table_name} ended {state} (txn {txn_id})")
    log.info("txn %d holds lock %d (%s) on %s", txn_id, lock_id,
             ", ".join(sorted({s.lock_type for s in specs})), table_name)
    return lock_id


def _describe_blocker(client: Any, table_name: str, lock_id: int) -> str:
    db, _, tbl = table_name.partition(".")
    try:
        locks = client.show_locks(db, tbl)
    except MetastoreError:
        return ""
    blocked_by = {lk.blocked_by_lock_id for lk in locks if lk.lock_id == lock_id} - {None}
    holders = [lk for lk in locks if lk.lock_id in blocked_by] or [
        lk for lk in locks if lk.lock_id != lock_id and lk.state == "ACQUIRED"]
    if not holders:
        return ""
    h = holders[0]
    return (f"; blocked by lock {h.lock_id} ({h.type}, txn {h.txn_id}, user {h.user} on "
            f"{h.hostname}, agent {h.agent_info})")
