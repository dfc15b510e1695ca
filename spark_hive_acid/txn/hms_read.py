"""A read lease in a Hive Metastore: what Hive's Cleaner waits for while a Spark read runs.

A read of a metastore table plans its snapshot and file list on the driver, and its tasks open
the files later. A compaction that commits in between, followed by a clean, would delete files the
tasks still open (Trino's path-not-found failures, trino#8865). With option ``readLock=true`` the
read takes a lease before it plans: a read-only transaction holding a SHARED_READ lock on the
table. Hive's Cleaner waits for it (Hive 3: locks older than the compaction; Hive 4: transactions
older than it), and so does our ``vacuum`` (``compaction.hms_clean``).

The lease lives as long as something heartbeats it: the driver right after opening it, then every
task, at most every ``every_s`` seconds while it reads. PySpark's data sources tell no one when the
last task is done, so the metastore ends the lease itself ``hive.txn.timeout`` (Hive's default:
300 s) after the last heartbeat: that is the bound on how long it outlives the read. It also
means the first task must start within ``hive.txn.timeout`` of planning for the protection to
hold; a read still works without it.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Mapping

from ..exceptions import MetastoreError
from ..metastore.api import client_from_options, table_from_options
from ..metastore.locks import Operation, acquire_lock, lock_specs
from .keepalive import TaskHeartbeat

log = logging.getLogger(__name__)
DEFAULT_LOCK_WAIT_S = 300.0


@dataclass(frozen=True)
class ReadLease:
    """An open read-only transaction and its SHARED_READ lock (picklable: tasks beat it)."""

    options: Mapping[str, str] = field(hash=False)
    table: str
    txn_id: int
    lock_id: int
    every_s: float = 60.0

    @classmethod
    def open(cls, options: Mapping[str, str], every_s: float = 60.0,
             lock_wait_s: float = DEFAULT_LOCK_WAIT_S) -> "ReadLease":
        db, tbl = table_from_options(options)
        with client_from_options(options) as client:
            info = client.get_table(db, tbl)
            txn = client.open_txn(agent_info="hiveacid read lease")
            try:
                lock = acquire_lock(client, lock_specs(Operation.READ, info), txn, lock_wait_s,
                                    info.full_name)
            except BaseException:
                client.abort_txn(txn)
                raise
        log.info("read lease on %s: txn %d, lock %d", info.full_name, txn, lock)
        return cls(dict(options), info.full_name, txn, lock, every_s)

    def beat(self) -> None:
        with client_from_options(self.options) as client:
            client.heartbeat(self.txn_id, self.lock_id)

    def task_heartbeat(self) -> TaskHeartbeat:
        return TaskHeartbeat(self, self.every_s)

    def release(self) -> None:
        """End the lease now (its read is done)."""
        try:
            with client_from_options(self.options) as client:
                client.commit_txn(self.txn_id)
        except MetastoreError as e:  # already timed out: nothing to release
            log.info("read lease txn %d of %s: %s", self.txn_id, self.table, e)
