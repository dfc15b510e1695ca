"""A Hive Metastore transaction behind the one transaction interface, across processes.

:class:`HmsTransaction` is :class:`~.hms_lifecycle.HmsLifecycle` (open, heartbeat, commit, abort
in this process) plus what lets other processes carry it on: its picklable
:class:`TransactionHandle`, resuming it from one, handing it over to a keep-alive process
(:mod:`.hms_keepalive`) that heartbeats it and aborts it if its owner dies.
:func:`write_transaction` makes one that owns its metastore connection.
"""
from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Optional, Sequence

from .. import options as opt
from ..exceptions import TransactionAbortedError
from ..metastore.api import client_from_options
from ..metastore.client import MetastoreClient
from ..metastore.locks import Operation, lock_specs
from ..metastore.model import TableInfo
from ..metastore.uris import OPTION_URI
from ..io.registry import get_filesystem
from .hms_keepalive import HmsBeat, WriteLeftovers, abort_and_clean, spawn_keepalive
from .hms_lifecycle import DEFAULT_LOCK_TIMEOUT_S, HmsLifecycle
from .keepalive import NO_TASK_HEARTBEAT, KeepAliveProcess, TaskHeartbeat
from .processes import this_process

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TransactionHandle:
    """An open metastore transaction, for other processes (picklable, no connection).

    ``options`` are what the resumed transaction needs besides the ids: the metastore timeout
    and heartbeat interval, and the file-system options its partitions' locations are read with.
    """

    uris: tuple[str, ...]
    db: str
    table: str
    operation: str
    txn_id: int
    write_id: int
    lock_id: Optional[int] = None
    options: Mapping[str, str] = field(default_factory=dict, hash=False)
    location: Optional[str] = None  # the table's location: where its write left files

    def client(self) -> MetastoreClient:
        return client_from_options(self.options, uris=self.uris)

    def resume(self, table: Optional[TableInfo] = None) -> "HmsTransaction":
        """The transaction, live again in this process (see :meth:`HmsTransaction.resume`)."""
        return HmsTransaction.resume(self.client(), self, table=table)

    def leftovers(self) -> Optional[WriteLeftovers]:
        return (WriteLeftovers(self.location, self.options, self.write_id)
                if self.location else None)

    def abort(self, reason: str = "") -> bool:
        """Abort it from here (idempotent) and remove what the write left; True once the
        metastore confirmed the transaction is not open any more, False when it could not be
        reached (hand the abort to the keep-alive process then: ``KeepAliveProcess.abort``)."""
        log.info("aborting txn %d on %s.%s (%s)", self.txn_id, self.db, self.table, reason)
        client = self.client()
        try:
            return abort_and_clean(client, self.txn_id, self.leftovers())
        finally:
            client.close()

    def task_heartbeat(self) -> TaskHeartbeat:
        return NO_TASK_HEARTBEAT  # tasks never talk to the metastore: a keeper heartbeats it


class HmsTransaction(HmsLifecycle):
    """One Hive ACID transaction on one table (see :class:`~.hms_lifecycle.HmsLifecycle` for the
    arguments), which other processes can carry on from its :meth:`handle`."""

    @contextlib.contextmanager
    def keep_alive(self) -> Iterator[None]:
        """Besides its own heartbeat thread, a keep-alive process watches this process while the
        block runs: if this process dies (kill -9), or fails and cannot confirm its abort, the
        process aborts the transaction, retrying until the metastore confirms, and cleans up."""
        keeper = spawn_keepalive(self.handle(), float(self.heartbeat_interval or 60.0),
                                 this_process())
        try:
            yield
        except BaseException as e:
            confirmed = self.abort(f"{type(e).__name__}: {e}")
            if confirmed:
                keeper.stop()
            else:
                keeper.abort()
            raise
        keeper.stop()

    def handle(self) -> TransactionHandle:
        """A picklable description for other processes (no socket, no thread)."""
        self.require_open("hand out")
        return TransactionHandle(
            tuple(self.client.uris), self.db, self.tbl, self.operation.value,
            self.open_txn_id(), self.write_id, self.lock_id,
            {**self.options, "metastoretimeout": str(self.client.timeout),
             "heartbeatinterval": str(self.heartbeat_interval or "")},
            self.location)

    def detach(self) -> TransactionHandle:
        """Hand the open transaction to another process: stop heartbeating it here and close the
        connection *without* ending it. Returns the handle to :meth:`resume` it with; whoever
        holds the handle must heartbeat the transaction from now on, or it times out."""
        handle = self.handle()
        self.stop_heartbeat()
        self.state = "detached"
        self.close_client()
        return handle

    def hand_over(self, owner: tuple[int, Optional[int]]
                  ) -> tuple[TransactionHandle, Optional[KeepAliveProcess]]:
        """:meth:`detach`, with a keep-alive process that heartbeats the transaction from now on
        (and aborts it if ``owner`` dies before a commit or abort stops the process)."""
        handle = self.handle()
        keeper = spawn_keepalive(handle, float(self.heartbeat_interval or 60.0), owner)
        return self.detach(), keeper

    @classmethod
    def resume(cls, client: MetastoreClient, handle: TransactionHandle, *,
               table: Optional[TableInfo] = None, heartbeat_interval: Optional[float] = None,
               owns_client: bool = True) -> "HmsTransaction":
        """The open transaction ``handle`` describes, heartbeating from a thread of this process.

        Heartbeats once first: raises TransactionAbortedError (saying what to do) if the txn was
        aborted or timed out meanwhile, MetastoreUnavailableError if the metastore is unreachable.
        """
        if heartbeat_interval is None:
            heartbeat_interval = opt.value(handle.options, "heartbeatInterval")
        txn = cls(client, handle.db, handle.table, handle.operation, table=table,
                  heartbeat_interval=heartbeat_interval, owns_client=owns_client,
                  options=handle.options)
        beat = HmsBeat(handle.uris, handle.txn_id, handle.lock_id, client=client)
        try:
            beat.beat()
        except TransactionAbortedError as e:
            txn.close_client()
            raise TransactionAbortedError(
                f"Transaction {handle.txn_id} ({handle.operation} into {handle.db}.{handle.table}) "
                f"was aborted or timed out before it could commit ({e}); nothing was written, run "
                "the job again") from e
        except BaseException:
            txn.close_client()
            raise
        txn.txn_id, txn.write_id, txn.lock_id = handle.txn_id, handle.write_id, beat.lock
        txn.location = txn.location or handle.location
        txn.table = table or client.get_table(handle.db, handle.table)  # a dynamic partition write?
        txn.table_path = get_filesystem(txn.table.location, txn.options)[1]
        txn.lock_specs = lock_specs(txn.operation, txn.table, hive4=client.server_kind == "hive4")
        txn.state = "open"
        txn.start_heartbeat()
        return txn


def write_transaction(options: Mapping[str, str], db: str, tbl: str,
                      operation: Operation | str, *,
                      spark_conf: Optional[Mapping[str, str]] = None,
                      partitions: Optional[Sequence[Any]] = None,
                      read_tables: Sequence[tuple[str, str]] = ()) -> HmsTransaction:
    """A not-yet-begun :class:`HmsTransaction` owning its own metastore connection.

    ``with write_transaction(opts, "db", "t", "insert") as txn: ...`` begins on entry, aborts on
    an exception and commits on a clean exit; or call ``begin()``/``commit()``/``abort()``.
    """
    client = client_from_options(options, spark_conf)
    return HmsTransaction(
        client, db, tbl, operation, partitions=partitions, read_tables=read_tables,
        lock_timeout=opt.value(options, "lockWaitTimeout")
        or DEFAULT_LOCK_TIMEOUT_S,
        heartbeat_interval=opt.value(options, "heartbeatInterval"), owns_client=True,
        options={k: v for k, v in opt.lowered(options).items() if k != OPTION_URI.lower()})
