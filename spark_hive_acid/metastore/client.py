"""A Hive Metastore Thrift client for ACID tables: metadata, snapshots, transactions, locks.

It works against Hive 2.x and 3.x+ metastores: the first call that needs Hive 3's write ids probes
for them once; a 2.x server answers "Invalid method name" and the client then uses transaction ids
as write ids. The connection itself (retries, errors, capabilities) is
:class:`~spark_hive_acid.metastore.connection.MetastoreConnection`.
"""
from __future__ import annotations

import logging
import time
from typing import Any, Iterable, Mapping, Optional, Sequence

from ..acid.snapshot import ValidIdList
from ..exceptions import (
    InvalidOptionError,
    MetastoreError,
    MetastoreUnavailableError,
    TableNotFoundError,
    UnknownMethodError,
)
from ._thrift import AddDynamicPartitionsV2, bindings
from .connection import (  # noqa: F401  (re-exported: the client's public helpers)
    DEFAULT_TXN_TIMEOUT_S,
    MetastoreConnection,
    default_user,
    parse_hive_time,
)
from .convert import (  # noqa: F401  (check_acid re-exported)
    check_acid,
    copy_storage_descriptor,
    partition_info_from_thrift,
    table_info_from_thrift,
)
from .model import (
    ORC_INPUT_FORMAT,
    ORC_OUTPUT_FORMAT,
    ORC_SERDE,
    Column,
    CompactionInfo,
    CompactionRequestResult,
    LockInfo,
    OpenTxnsInfo,
    PartitionInfo,
    TableInfo,
    TxnStatus,
    enum_name,
)
from .partitions import DEFAULT_PARTITION, PartitionFilter, make_partition_name, partition_values
from .snapshots import (
    txn_list_from_open_txns,
    write_ids_from_table_valid_write_ids,
    write_ids_from_txn_list,
)

log = logging.getLogger(__name__)


class MetastoreClient(MetastoreConnection):
    """A connection to one Hive Metastore and the calls this library makes (see
    :class:`~spark_hive_acid.metastore.connection.MetastoreConnection` for the arguments).

    Use as a context manager, or call :meth:`open` / :meth:`close`.
    """

    # -- tables -----------------------------------------------------------------------------
    def _raw_table(self, db: str, tbl: str) -> Any:
        return self._call("get_table", db, tbl, what=f"get_table({db}.{tbl})", retry=True,
                          table=f"{db}.{tbl}")

    def get_table(self, db: str, tbl: str, *, require_acid: bool = True) -> TableInfo:
        """Table metadata. Raises TableNotFoundError, or NotAnAcidTableError when
        ``require_acid`` and the table is a view or not ``transactional=true``."""
        info = table_info_from_thrift(self._raw_table(db, tbl))
        if require_acid:
            check_acid(info)
        return info

    def table_exists(self, db: str, tbl: str) -> bool:
        try:
            self._raw_table(db, tbl)
            return True
        except TableNotFoundError:
            return False

    def create_database(self, db: str, location: Optional[str] = None, *,
                        if_not_exists: bool = True) -> None:
        _, tt = bindings()
        database = tt.Database(name=db, description="", locationUri=location, parameters={},
                               ownerName=self.user, ownerType=tt.PrincipalType.USER)
        try:
            self._call("create_database", database, what=f"create_database({db})")
        except MetastoreError as e:
            if not (if_not_exists and "AlreadyExistsException" in str(e)):
                raise

    def create_table(self, db: str, tbl: str, columns: Sequence[Column],
                     partition_keys: Sequence[Column] = (), bucket_cols: Sequence[str] = (),
                     num_buckets: int = -1, properties: Optional[Mapping[str, str]] = None,
                     location: Optional[str] = None, *, input_format: str = ORC_INPUT_FORMAT,
                     output_format: str = ORC_OUTPUT_FORMAT, serde: str = ORC_SERDE,
                     external: bool = False) -> TableInfo:
        """Create a transactional ORC table (``transactional=true``,
        ``transactional_properties=default``, ``bucketing_version=2``; ``properties`` override).

        Hive 2.x metastores refuse full-ACID tables that are not bucketed: pass ``bucket_cols``
        and ``num_buckets`` there.
        """
        _, tt = bindings()
        if bucket_cols and num_buckets <= 0:
            raise InvalidOptionError(f"Table {db}.{tbl}: bucket_cols {list(bucket_cols)} need "
                                     "num_buckets > 0")
        params = {"transactional": "true", "transactional_properties": "default",
                  "bucketing_version": "2"}
        params.update(properties or {})
        if params.get("transactional", "").lower() != "true" and "transactional_properties" not in (
                properties or {}):
            params.pop("transactional_properties", None)
        if external:
            params["EXTERNAL"] = "TRUE"
        sd = tt.StorageDescriptor(
            cols=[tt.FieldSchema(name=n, type=t, comment=None) for n, t in columns],
            location=location, inputFormat=input_format, outputFormat=output_format,
            compressed=False, numBuckets=num_buckets if bucket_cols else -1,
            serdeInfo=tt.SerDeInfo(name=tbl, serializationLib=serde,
                                   parameters={"serialization.format": "1"}),
            bucketCols=list(bucket_cols), sortCols=[], parameters={},
            storedAsSubDirectories=False)
        table = tt.Table(tableName=tbl, dbName=db, owner=self.user, createTime=int(time.time()),
                         lastAccessTime=0, retention=0, sd=sd,
                         partitionKeys=[tt.FieldSchema(name=n, type=t, comment=None)
                                        for n, t in partition_keys],
                         parameters=params, tableType="EXTERNAL_TABLE" if external
                         else "MANAGED_TABLE")
        try:
            self._call("create_table", table, what=f"create_table({db}.{tbl})")
        except MetastoreError as e:
            if "must be bucketed" in str(e):
                raise MetastoreError(
                    f"{e}. This metastore (Hive 2.x) accepts full-ACID tables only when they are "
                    "bucketed: pass bucket_cols=[...] and num_buckets=N (CLUSTERED BY ... INTO N "
                    "BUCKETS).") from e
            raise
        return self.get_table(db, tbl, require_acid=False)

    def add_columns(self, db: str, tbl: str, columns: Sequence[Column]) -> TableInfo:
        """``ALTER TABLE db.tbl ADD COLUMNS (...)``: ``columns`` appended to the table's data
        columns (``alter_table``; partitions keep their own column lists, as without CASCADE:
        Hive reads old partitions' files with NULL for the new columns)."""
        _, tt = bindings()
        table = self._raw_table(db, tbl)
        table.sd.cols = list(table.sd.cols) + [tt.FieldSchema(name=n, type=t, comment=None)
                                               for n, t in columns]
        self._call("alter_table", db, tbl, table, what=f"alter_table({db}.{tbl}) add columns",
                   table=f"{db}.{tbl}")
        return self.get_table(db, tbl, require_acid=False)

    def drop_table(self, db: str, tbl: str, *, delete_data: bool = True,
                   if_exists: bool = True) -> None:
        try:
            self._call("drop_table", db, tbl, delete_data, what=f"drop_table({db}.{tbl})",
                       table=f"{db}.{tbl}")
        except TableNotFoundError:
            if not if_exists:
                raise

    # -- partitions -------------------------------------------------------------------------
    def list_partitions(self, db: str, tbl: str,
                        filter: Optional[PartitionFilter | str] = None) -> list[PartitionInfo]:
        """Partitions of a table, optionally filtered.

        A :class:`PartitionFilter` is sent to ``get_partitions_by_filter``; when the server
        refuses it (or it cannot be written in the filter language) all partitions are listed
        and pruned here. A ``str`` filter is passed through as is (no fallback).
        """
        table = self._raw_table(db, tbl)
        keys = [k.name for k in table.partitionKeys or []]
        if not keys:
            return []
        key_types = {k.name.lower(): k.type for k in table.partitionKeys}
        what = f"listing partitions of {db}.{tbl}"
        if isinstance(filter, str):
            parts = self._call("get_partitions_by_filter", db, tbl, filter, -1,
                               what=f"{what} with filter {filter!r}", retry=True,
                               table=f"{db}.{tbl}")
            return [partition_info_from_thrift(p, keys) for p in parts]
        if filter is not None:
            expr = filter.to_hive(key_types)
            if expr is not None:
                try:
                    parts = self._call("get_partitions_by_filter", db, tbl, expr, -1,
                                       what=f"{what} with filter {expr!r}", retry=True,
                                       table=f"{db}.{tbl}")
                    return [partition_info_from_thrift(p, keys) for p in parts]
                except (MetastoreUnavailableError, TableNotFoundError):
                    raise
                except MetastoreError as e:
                    log.info("metastore refused partition filter %r (%s); pruning client-side",
                             expr, e)
        parts = self._call("get_partitions", db, tbl, -1, what=what, retry=True,
                           table=f"{db}.{tbl}")
        infos = [partition_info_from_thrift(p, keys) for p in parts]
        if filter is not None:
            infos = [p for p in infos if filter.matches(p.spec(keys), key_types)]
        return infos

    def add_partitions(self, db: str, tbl: str,
                       partitions: Iterable[Mapping[str, Any] | Sequence[Any] | str],
                       locations: Optional[Sequence[Optional[str]]] = None, *,
                       if_not_exists: bool = True) -> list[PartitionInfo]:
        """Register partitions (``{key: value}``, value lists or names) with their locations.

        A missing location defaults to ``<table location>/<partition name>``. With
        ``if_not_exists`` existing partitions are left alone.
        """
        _, tt = bindings()
        table = self._raw_table(db, tbl)
        keys = [k.name for k in table.partitionKeys or []]
        if not keys:
            raise InvalidOptionError(f"Table {db}.{tbl} is not partitioned")
        specs = list(partitions)
        locs = list(locations) if locations is not None else [None] * len(specs)
        if len(locs) != len(specs):
            raise InvalidOptionError(f"{len(specs)} partitions but {len(locs)} locations")
        parts, infos = [], []
        for spec, loc in zip(specs, locs):
            values = partition_values(keys, spec)
            name = make_partition_name(keys, values)
            location = loc or f"{table.sd.location.rstrip('/')}/{name}"
            sd = copy_storage_descriptor(table.sd, location)
            stored = [DEFAULT_PARTITION if v is None else v for v in values]
            parts.append(tt.Partition(values=stored, dbName=db, tableName=tbl,
                                      createTime=int(time.time()), lastAccessTime=0, sd=sd,
                                      parameters={}))
            infos.append(PartitionInfo(tuple(stored), name, location, {}))
        if parts:
            req = tt.AddPartitionsRequest(dbName=db, tblName=tbl, parts=parts,
                                          ifNotExists=if_not_exists, needResult=True)
            self._call("add_partitions_req", req, what=f"adding partitions to {db}.{tbl}",
                       table=f"{db}.{tbl}")
        return infos

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

    def read_snapshot(self, db: str, tbl: str, current_txn: Optional[int] = None
                      ) -> tuple[ValidIdList, ValidIdList]:
        """``(write_ids, txns)`` for reading ``db.tbl`` now (or inside ``current_txn``)."""
        _, tt = bindings()
        txns = txn_list_from_open_txns(self.get_open_txns_info(), current_txn)
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
        _, tt = bindings()
        self._call("commit_txn", tt.CommitTxnRequest(txnid=txn_id), what=f"commit of txn {txn_id}")

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
                         enum_name(tt.LockState, e.state), enum_name(tt.LockType, e.type),
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
        return CompactionRequestResult(int(resp.id), str(resp.state), bool(resp.accepted))

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
