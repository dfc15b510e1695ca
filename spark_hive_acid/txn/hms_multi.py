"""One metastore transaction writing several tables (issue 26: Hive's multi-insert, and
``spark_hive_acid.transaction``).

Hive lets one transaction write several tables: ``open_txns`` once, one write id per table
(``allocate_table_write_ids``), one lock request per table, ``commit_txn`` once. Readers see all
of it or none of it: every table's write id turns committed with that one call.

:class:`HmsGroup` is that transaction; each table joins it as a :class:`JoinedTransaction`, an
:class:`~spark_hive_acid.txn.hms.HmsTransaction` that shares the group's connection and heartbeat,
so every writer's usual path (``WriteSession`` + ``commit_write``) serves a table of the group
unchanged. Its ``commit`` only *prepares* (files published under the still-uncommitted write id,
statistics marked stale); :meth:`HmsGroup.commit` then commits them all at once, and an abort of
any table aborts the whole transaction and removes what every table published. While the block
runs, each table's keep-alive process (``HmsTransaction.keep_alive``) aborts the transaction and
cleans that table up if this process dies (kill -9).
"""
from __future__ import annotations

import logging
from typing import Any, Optional

from .. import options as opt
from ..acid.snapshot import ValidIdList
from ..exceptions import MetastoreError
from ..metastore.client import MetastoreClient
from ..metastore.locks import Operation, acquire_lock, lock_specs
from ..metastore.model import TableInfo
from ..metastore.snapshots import txn_list_from_open_txns
from .hms import HmsTransaction
from .hms_lifecycle import DEFAULT_LOCK_TIMEOUT_S
from .hms_keepalive import HmsBeat
from .keepalive import KeepAliveThread

log = logging.getLogger(__name__)


class HmsGroup:
    """One metastore transaction over several tables (see the module docstring). It opens on the
    first table that joins; ``commit``/``abort`` end it (``abort`` is idempotent)."""

    def __init__(self, client: MetastoreClient, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT_S,
                 heartbeat_interval: Optional[float] = None,
                 options: Optional[dict[str, str]] = None):
        self.client = client
        self.lock_timeout = lock_timeout
        self.heartbeat_interval = heartbeat_interval
        self.options = dict(options or {})
        self.txn_id: Optional[int] = None
        self.state = "new"
        self.members: list[JoinedTransaction] = []
        self.keeper: Optional[KeepAliveThread] = None
        self.txns: Optional[ValidIdList] = None  # the transactions its reads see (at open)

    @classmethod
    def from_options(cls, options: dict[str, str]) -> "HmsGroup":
        from ..metastore.api import client_from_options
        from ..metastore.uris import OPTION_URI

        return cls(client_from_options(options),
                   lock_timeout=opt.value(options, "lockWaitTimeout") or DEFAULT_LOCK_TIMEOUT_S,
                   heartbeat_interval=opt.value(options, "heartbeatInterval"),
                   options={k: v for k, v in opt.lowered(options).items()
                            if k != OPTION_URI.lower()})

    def _open(self) -> None:
        if self.state != "new":
            if self.state != "open":
                raise MetastoreError(f"Transaction {self.txn_id} is already {self.state}")
            return
        self.txn_id = self.client.open_txn()
        self.state = "open"
        interval = self.heartbeat_interval or self.client.txn_timeout_seconds() / 3.0
        self.heartbeat_interval = max(float(interval), 0.05)
        self.keeper = KeepAliveThread(HmsBeat(self.client.uris, self.txn_id, None,
                                              client=self.client),
                                      self.heartbeat_interval,
                                      f"hive-acid-heartbeat-txn{self.txn_id}").start()
        self.txns = txn_list_from_open_txns(self.client.txn_states(), self.txn_id)
        log.info("opened txn %d (several tables)", self.txn_id)

    def join(self, table: TableInfo, operation: str) -> "JoinedTransaction":
        """Table ``table`` joins the transaction (opened now if it is the first): its write id
        allocated and its lock for ``operation`` acquired."""
        self._open()
        member = JoinedTransaction(self, table, operation)
        self.members.append(member)
        try:
            member.begin()
        except BaseException as e:
            self.abort(f"{table.full_name} could not join: {e}")
            raise
        return member

    def read_snapshot(self, db: str, tbl: str) -> tuple[ValidIdList, ValidIdList]:
        """``(write ids, txns)`` of ``db.tbl`` at the transaction's one snapshot (its open): every
        table read in the transaction is read at the same ValidTxnList."""
        self._open()
        return self.client.read_snapshot(db, tbl, current_txn=self.txn_id, txns=self.txns)

    @property
    def heartbeat_error(self) -> Optional[BaseException]:
        return self.keeper.error if self.keeper is not None else None

    def stop_heartbeat(self) -> None:
        if self.keeper is not None:
            self.keeper.stop(join_s=max(5.0, self.client.timeout))

    def commit(self) -> None:
        """``commit_txn`` once, for every table (each must have prepared: its files published).
        Raises as ``HmsTransaction.commit`` does; on failure the whole transaction is aborted
        (or, when its outcome is unknown, left to the keep-alive processes)."""
        if not self.members:
            self.close()
            return
        unprepared = [m.full_name for m in self.members if not m.prepared]
        if unprepared:
            self.abort(f"{unprepared} never published")
            raise MetastoreError(f"Transaction {self.txn_id}: {unprepared} did not publish")
        try:
            HmsTransaction.commit_txn(self.members[0])
        finally:
            self.close()
        log.info("committed txn %d on %s", self.txn_id, [m.full_name for m in self.members])

    def open_id(self) -> int:
        if self.txn_id is None:
            raise MetastoreError("the transaction of several tables was never opened")
        return self.txn_id

    def abort(self, reason: str = "") -> bool:
        """Abort the transaction (idempotent), removing what every table published; False when
        the metastore could not confirm it (the keep-alive processes finish it then)."""
        try:
            if self.members:
                return HmsTransaction.abort(self.members[0], reason)
            if self.state == "open":
                self.stop_heartbeat()
                self.state = "aborted"
                try:
                    self.client.abort_txn(self.open_id())
                except MetastoreError as e:
                    log.warning("could not abort txn %s: %s", self.txn_id, e)
                    return False
            return True
        finally:
            self.close()

    def ended(self, state: str) -> None:
        self.stop_heartbeat()
        self.state = state
        for m in self.members:
            m.state = state

    def close(self) -> None:
        if self.state in ("new", "open") and self.txn_id is not None:
            return  # still running: the connection stays
        self.client.close()


class JoinedTransaction(HmsTransaction):
    """One table of an :class:`HmsGroup`: its own write id and lock, the group's txn id,
    connection and heartbeat; ``commit`` prepares, the group commits; ``abort`` aborts the
    group."""

    def __init__(self, group: HmsGroup, table: TableInfo, operation: str):
        super().__init__(group.client, table.db, table.name, operation, table=table,
                         lock_timeout=group.lock_timeout,
                         heartbeat_interval=group.heartbeat_interval, owns_client=False,
                         options=group.options)
        self.group = group
        self.prepared = False
        self.extra_locks: list[int] = []

    def begin(self) -> "JoinedTransaction":
        g, table, op = self.group, self.table, Operation(self.operation)
        assert table is not None and g.txn_id is not None
        self.location = self.location or table.location
        self.lock_specs = lock_specs(op, table, None, [], hive4=self.client.server_kind == "hive4")
        self.txn_id = g.txn_id
        self.state = "open"
        self.write_id = (self.client.allocate_write_id(g.txn_id, self.db, self.tbl)
                         if op.allocates_write_id else g.txn_id)
        self._acquire_lock()
        log.info("txn %d: %s joined with write id %s (%s)", g.txn_id, self.full_name,
                 self.write_id, op.value)
        return self

    def lock_for(self, operation: str) -> None:
        """Another statement on this table needs ``operation``'s lock too (e.g. an overwrite after
        an append): one more lock request in the same transaction."""
        op = Operation(operation)
        if op == self.operation or self.table is None:
            return
        specs = lock_specs(op, self.table, None, [], hive4=self.client.server_kind == "hive4")
        acquire_lock(self.client, specs, self.group.open_id(),
                     self.lock_timeout, self.full_name, on_requested=self.extra_locks.append)

    def commit(self, outcome: Any = None, *, write_set: Any = None,
               properties: Any = None) -> None:
        """Prepare only: the group's ``commit_txn`` makes it visible (with the other tables)."""
        self.require_open("commit")
        self.prepare_commit(properties)
        self.prepared = True

    def abort(self, reason: str = "") -> bool:
        return self.group.abort(reason)

    def read_snapshot(self) -> tuple[ValidIdList, ValidIdList]:
        """The table at the group's one snapshot (every table of it at one ValidTxnList)."""
        self.require_open("read a snapshot")
        return self.group.read_snapshot(self.db, self.tbl)

    # the transaction-wide parts, for HmsTransaction's commit/abort run on the first member
    @property
    def heartbeat_error(self) -> Optional[BaseException]:
        return self.group.heartbeat_error

    def start_heartbeat(self) -> None:
        pass

    def stop_heartbeat(self) -> None:
        self.group.stop_heartbeat()

    def _finish(self, state: str) -> None:
        self.group.ended(state)

    def _remove_published(self, confirmed: bool = True) -> None:
        for m in self.group.members:
            HmsTransaction._remove_published(m, confirmed)
