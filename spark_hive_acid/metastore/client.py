"""A Hive Metastore Thrift client for ACID tables: metadata, snapshots, transactions, locks.

It works against Hive 2.x and 3.x+ metastores: the first call that needs Hive 3's write ids probes
for them once; a 2.x server answers "Invalid method name" and the client then uses transaction ids
as write ids. The connection itself (retries, errors, capabilities) is
:class:`~spark_hive_acid.metastore.connection.MetastoreConnection`.
"""
from __future__ import annotations

import logging
from typing import Any, Mapping, Optional, Sequence

from ..acid.snapshot import ValidIdList
from ..exceptions import InvalidOptionError, MetastoreError, UnknownMethodError
from ._thrift import AddDynamicPartitionsV2, bindings
from ._wire import RawStruct
from .connection import (  # noqa: F401  (re-exported: the client's public helpers)
    DEFAULT_TXN_TIMEOUT_S,
    MetastoreConnection,
    default_user,
    parse_hive_time,
)
from .convert import check_acid  # noqa: F401  (re-exported)
from .model import (
    CompactionInfo,
    CompactionRequestResult,
    LockInfo,
    OpenTxnsInfo,
    TxnStatus,
    enum_name,
    lock_type_name,
)
from ..acid.partitions import partition_values
from .partitions import make_partition_name
from .snapshots import (
    open_txns_from_response,
    txn_list_from_open_txns,
    write_ids_from_table_valid_write_ids,
    write_ids_from_txn_list,
)
from .tables import PROCESSOR_CAPABILITIES, TableCalls  # noqa: F401  (re-exported)

log = logging.getLogger(__name__)


class MetastoreClient(TableCalls):
    """A connection to one Hive Metastore and the calls this library makes (see
    :class:`~spark_hive_acid.metastore.connection.MetastoreConnection` for the arguments).

    Use as a context manager, or call :meth:`open` / :meth:`close`.
    """

    # -- snapshots --------------------------------------------------------------------------
    def get_open_txns_info(self) -> OpenTxnsInfo:
        """Every open or aborted transaction and the global high watermark."""
        _, tt = bindings()
        resp = self._call("get_open_txns_info", what="get_open_txns_info", retry=True)
        txns = tuple(
            TxnStatus(t.id, enum_name(tt.TxnState, t.state), t.user, t.hostname, t.agentInfo,
                      t.startedTime, t.lastHeartbeatTime)
            for t in resp.open_txns or [])
        return OpenTxnsInfo(int(resp.txn_high_water_mark), txns)

    def txn_states(self) -> OpenTxnsInfo:
        """The open and aborted transactions and the high watermark, for snapshots:
        ``get_open_txns`` on Hive 3+, what Hive's own clients use (Hive 4.1's
        ``get_open_txns_info`` fails outright while ``TXNS`` has a gap, e.g. after a restart:
        "Required field 'user' is unset"); ``get_open_txns_info`` on 2.x, whose
        ``get_open_txns`` answer the 3.x bindings cannot read (a set, not a list)."""
        if not self.supports_write_ids:
            return self.get_open_txns_info()
        return open_txns_from_response(self._call("get_open_txns", what="get_open_txns",
                                                  retry=True))

    def read_snapshot(self, db: str, tbl: str, current_txn: Optional[int] = None,
                      txns: Optional[ValidIdList] = None) -> tuple[ValidIdList, ValidIdList]:
        """``(write_ids, txns)`` for reading ``db.tbl`` now (or inside ``current_txn``); ``txns``:
        at that ValidTxnList instead of now (one snapshot across tables)."""
        _, tt = bindings()
        if txns is None:
            txns = txn_list_from_open_txns(self.txn_states(), current_txn)
        full = f"{db}.{tbl}".lower()
        if self.supports_write_ids:
            req = tt.GetValidWriteIdsRequest(fullTableNames=[full], validTxnList=txns.to_string())
            try:
                resp = self._call("get_valid_write_ids", req, what=f"get_valid_write_ids({full})",
                                  retry=True, table=full)
            except UnknownMethodError:
                self._has_write_ids = False
            else:
                for tvw in resp.tblValidWriteIds or []:
                    if (tvw.fullTableName or "").lower() == full:
                        return write_ids_from_table_valid_write_ids(tvw), txns
                raise MetastoreError(f"Hive Metastore {self.uri} returned no write id list for "
                                     f"{full}")
        return write_ids_from_txn_list(txns, full), txns

    # -- transactions and locks -------------------------------------------------------------
    def open_txn(self, *, user: Optional[str] = None, hostname: Optional[str] = None,
                 agent_info: Optional[str] = None) -> int:
        _, tt = bindings()
        req = tt.OpenTxnRequest(num_txns=1, user=user or self.user,
                                hostname=hostname or self.hostname,
                                agentInfo=agent_info or self.agent_info)
        resp = self._call("open_txns", req, what="open_txns")
        return int(resp.txn_ids[0])

    def allocate_write_id(self, txn_id: int, db: str, tbl: str) -> int:
        """The table write id of ``txn_id`` (Hive 3+), or ``txn_id`` itself on Hive 2.x."""
        if not self.supports_write_ids:
            return txn_id
        _, tt = bindings()
        req = tt.AllocateTableWriteIdsRequest(dbName=db, tableName=tbl, txnIds=[txn_id])
        try:
            resp = self._call("allocate_table_write_ids", req,
                              what=f"allocate_table_write_ids({db}.{tbl}, txn {txn_id})",
                              table=f"{db}.{tbl}")
        except UnknownMethodError:
            self._has_write_ids = False
            return txn_id
        for pair in resp.txnToWriteIds or []:
            if pair.txnId == txn_id:
                return int(pair.writeId)
        raise MetastoreError(f"Hive Metastore {self.uri} allocated no write id for txn {txn_id}")

    def lock(self, components: Sequence[Any], txn_id: Optional[int] = None) -> tuple[int, str]:
        """Request a lock; returns ``(lock_id, state)``.

        ``components`` are :class:`~spark_hive_acid.metastore.transaction.LockSpec` objects or
        Thrift ``LockComponent`` structs.
        """
        _, tt = bindings()
        comps = [c.to_thrift() if hasattr(c, "to_thrift") else c for c in components]
        req = tt.LockRequest(component=comps, txnid=txn_id, user=self.user,
                             hostname=self.hostname, agentInfo=self.agent_info)
        resp = self._call("lock", req, what=f"lock for txn {txn_id}")
        return int(resp.lockid), enum_name(tt.LockState, resp.state)

    def check_lock(self, lock_id: int, txn_id: Optional[int] = None) -> str:
        _, tt = bindings()
        resp = self._call("check_lock", tt.CheckLockRequest(lockid=lock_id, txnid=txn_id),
                          what=f"check_lock({lock_id})", retry=True)
        return enum_name(tt.LockState, resp.state)

    def unlock(self, lock_id: int) -> None:
        _, tt = bindings()
        self._call("unlock", tt.UnlockRequest(lockid=lock_id), what=f"unlock({lock_id})")

    def heartbeat(self, txn_id: Optional[int] = None, lock_id: Optional[int] = None) -> None:
        _, tt = bindings()
        self._call("heartbeat", tt.HeartbeatRequest(lockid=lock_id, txnid=txn_id),
                   what=f"heartbeat(txn {txn_id}, lock {lock_id})", retry=True)

    def commit_txn(self, txn_id: int) -> None:
        """Commit. On Hive 4 with ``exclWriteEnabled=false``: Hive 4 skips its write-set conflict
        check for commits that say they held EXCL_WRITE locks (the default of the field, which
        the 3.x bindings cannot send), because its own Driver re-validates the snapshot after
        locking and re-runs the statement. We do not re-run, so the metastore must still refuse
        an UPDATE/DELETE whose snapshot missed a conflicting commit (WriteConflictError)."""
        _, tt = bindings()
        req: Any = tt.CommitTxnRequest(txnid=txn_id)
        if self.server_kind == "hive4":
            req = RawStruct("CommitTxnRequest", [(1, "i64", txn_id), (6, "bool", False)])
        self._call("commit_txn", req, what=f"commit of txn {txn_id}")

    def abort_txn(self, txn_id: int) -> None:
        _, tt = bindings()
        self._call("abort_txn", tt.AbortTxnRequest(txnid=txn_id), what=f"abort of txn {txn_id}",
                   retry=True)

    def abort_txns(self, txn_ids: Sequence[int]) -> None:
        """Abort several transactions (an administrator's tool for abandoned ones)."""
        _, tt = bindings()
        self._call("abort_txns", tt.AbortTxnsRequest(txn_ids=list(txn_ids)),
                   what=f"abort of txns {list(txn_ids)}", retry=True)

    def add_dynamic_partitions(self, txn_id: int, write_id: int, db: str, tbl: str,
                               partition_names: Sequence[str], operation_type: int) -> None:
        """Tell the transaction manager which partitions a dynamic-partition write touched."""
        _, tt = bindings()
        if self.supports_write_ids:
            req: Any = tt.AddDynamicPartitions(txnid=txn_id, writeid=write_id, dbname=db,
                                               tablename=tbl,
                                               partitionnames=list(partition_names),
                                               operationType=operation_type)
        else:
            req = AddDynamicPartitionsV2(txn_id, db, tbl, partition_names, operation_type)
        self._call("add_dynamic_partitions", req,
                   what=f"add_dynamic_partitions({db}.{tbl}, txn {txn_id})", table=f"{db}.{tbl}")

    def show_locks(self, db: Optional[str] = None, tbl: Optional[str] = None) -> list[LockInfo]:
        """Current locks (all, or of one database / table)."""
        _, tt = bindings()
        resp = self._call("show_locks", tt.ShowLocksRequest(dbname=db, tablename=tbl),
                          what="show_locks", retry=True)
        return [LockInfo(e.lockid, e.dbname, e.tablename, e.partname,
                         enum_name(tt.LockState, e.state), lock_type_name(e.type),
                         e.txnid or 0, e.lastheartbeat or 0, e.acquiredat, e.user, e.hostname,
                         e.agentInfo, e.blockedByExtId)
                for e in resp.locks or []]

    # -- compaction -------------------------------------------------------------------------
    def request_compaction(self, db: str, tbl: str,
                           partition: Optional[Mapping[str, Any] | Sequence[Any] | str] = None,
                           kind: str = "major", *,
                           properties: Optional[Mapping[str, str]] = None
                           ) -> CompactionRequestResult:
        """Queue a ``major`` or ``minor`` compaction of a table or one of its partitions.

        The metastore only queues it: a compactor worker (``hive.compactor.worker.threads`` > 0
        on some metastore) must run it. ``accepted`` is False when one is already queued.
        """
        _, tt = bindings()
        ctype = {"major": tt.CompactionType.MAJOR, "minor": tt.CompactionType.MINOR}.get(
            kind.strip().lower())
        if ctype is None:
            raise InvalidOptionError(f"Compaction kind must be 'major' or 'minor', not {kind!r}")
        info = self.get_table(db, tbl)
        part_name = None
        if info.is_partitioned:
            if partition is None:
                raise InvalidOptionError(
                    f"Table {info.full_name} is partitioned: name the partition to compact")
            part_name = make_partition_name(info.partition_names,
                                            partition_values(info.partition_names, partition))
        elif partition is not None:
            raise InvalidOptionError(f"Table {info.full_name} is not partitioned")
        req = tt.CompactionRequest(dbname=db, tablename=tbl, partitionname=part_name, type=ctype,
                                   runas=self.user, properties=dict(properties or {}) or None)
        resp = self._call("compact2", req, what=f"compaction request for {info.full_name}")
        result = CompactionRequestResult(int(resp.id), str(resp.state), bool(resp.accepted))
        if not result.accepted and result.id < 0:
            # Hive 4 answers a duplicate with id -1, state "refused" (and the queued id only in
            # its message): report the queued compaction, as Hive 2/3 do
            for queued in self.compactions(db, tbl):
                if queued.id is not None and queued.partition == part_name \
                        and queued.state in ("initiated", "working"):
                    return CompactionRequestResult(queued.id, queued.state, False)
        return result

    def compactions(self, db: Optional[str] = None, tbl: Optional[str] = None
                    ) -> list[CompactionInfo]:
        """``show_compact``, optionally restricted to one database / table."""
        _, tt = bindings()
        resp = self._call("show_compact", tt.ShowCompactRequest(), what="show_compact",
                          retry=True)
        out = []
        for e in resp.compacts or []:
            if db and (e.dbname or "").lower() != db.lower():
                continue
            if tbl and (e.tablename or "").lower() != tbl.lower():
                continue
            out.append(CompactionInfo(e.id, e.dbname, e.tablename, e.partitionname,
                                      enum_name(tt.CompactionType, e.type), e.state, e.workerid,
                                      e.start, e.runAs, e.hightestTxnId, e.endTime))
        return out
