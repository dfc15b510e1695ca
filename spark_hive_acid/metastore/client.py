"""A Hive Metastore Thrift client for ACID tables: metadata, snapshots, transactions, locks.

Thrift over ``TSocket`` / ``TBufferedTransport`` / ``TBinaryProtocol`` (no SASL/Kerberos), using the
Hive 3.x bindings of the PyPI package ``hive-metastore-client``. It works against Hive 2.x and
3.x+ metastores: the first call that needs Hive 3's write ids probes for them once; a 2.x
server answers "Invalid method name" and the client then uses transaction ids as write ids.

Every call is serialised by a lock, so one client can be shared with a heartbeat thread.
Thrift errors become :mod:`spark_hive_acid.exceptions` errors that name the metastore URI.
"""
from __future__ import annotations

import getpass
import logging
import os
import re
import socket
import threading
import time
from typing import Any, Iterable, Mapping, Optional, Sequence

from ..acid.snapshot import ValidIdList
from ..exceptions import (
    HiveAcidError,
    InvalidOptionError,
    MetastoreError,
    MetastoreUnavailableError,
    NotAnAcidTableError,
    TableNotFoundError,
    TransactionAbortedError,
    UnknownMethodError,
    WriteConflictError,
)
from ._thrift import AddDynamicPartitionsV2, bindings, thrift_module
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
from .partitions import PartitionFilter, make_partition_name, partition_values
from .snapshots import (
    txn_list_from_open_txns,
    write_ids_from_table_valid_write_ids,
    write_ids_from_txn_list,
)
from .uris import parse_uri, resolve_metastore_uris

log = logging.getLogger(__name__)

DEFAULT_TXN_TIMEOUT_S = 300.0
_UNKNOWN_METHOD = 1  # TApplicationException.UNKNOWN_METHOD
_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0, "secs": 1.0,
               "m": 60.0, "min": 60.0, "mins": 60.0, "h": 3600.0, "hour": 3600.0,
               "hours": 3600.0, "d": 86400.0, "day": 86400.0, "days": 86400.0}


def default_user() -> str:
    """``$HADOOP_USER_NAME``, else the OS user (what Hive records as the txn/lock owner)."""
    return os.environ.get("HADOOP_USER_NAME") or getpass.getuser()


def parse_hive_time(text: str, default_unit: str = "s") -> float:
    """Seconds in a Hive time setting such as ``300``, ``300s``, ``5m`` or ``500ms``."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", text or "")
    if not m:
        raise ValueError(f"not a Hive time value: {text!r}")
    unit = (m.group(2) or default_unit).lower()
    if unit not in _TIME_UNITS:
        raise ValueError(f"unknown time unit in {text!r}")
    return float(m.group(1)) * _TIME_UNITS[unit]


class MetastoreClient:
    """A connection to one Hive Metastore (the first of ``uris`` that answers).

    Use as a context manager, or call :meth:`open` / :meth:`close`.

    Args:
        uris: ``thrift://host:port`` or a list of them (tried in turn), or a comma-separated string.
        timeout: socket timeout for connecting and for each call, in seconds.
        user, hostname: recorded by the metastore as the owner of transactions and locks.
    """

    def __init__(self, uris: str | Sequence[str], *, timeout: float = 60.0,
                 user: Optional[str] = None, hostname: Optional[str] = None) -> None:
        raw = [u.strip() for u in uris.split(",")] if isinstance(uris, str) else list(uris)
        self.addresses = [parse_uri(u) for u in raw if u]
        if not self.addresses:
            raise InvalidOptionError("MetastoreClient needs at least one thrift://host:port URI")
        self.uris = [a.uri for a in self.addresses]
        self.timeout = timeout
        self.user = user or default_user()
        self.hostname = hostname or socket.gethostname()
        self.agent_info = f"spark-hive-acid pid={os.getpid()}"
        self.uri: Optional[str] = None  # the URI currently connected
        self._lock = threading.RLock()
        self._transport: Any = None
        self._client: Any = None
        self._has_write_ids: Optional[bool] = None

    @classmethod
    def from_options(cls, options: Mapping[str, str],
                     spark_conf: Optional[Mapping[str, str]] = None,
                     **kwargs: Any) -> "MetastoreClient":
        """A client for the metastore named by :func:`resolve_metastore_uris`."""
        return cls(resolve_metastore_uris(options, spark_conf), **kwargs)

    # -- connection -------------------------------------------------------------------------
    def open(self) -> "MetastoreClient":
        """Connect to the first URI that accepts a connection."""
        with self._lock:
            if self._transport is not None:
                return self
            _, TBinaryProtocol, TSocket, TTransport = thrift_module()
            hms, _ = bindings()
            errors = []
            for addr in self.addresses:
                # Connect ourselves (clean OSError, no logging from TSocket), then hand the
                # connected socket to TSocket.
                try:
                    conn = socket.create_connection((addr.host, addr.port), timeout=self.timeout)
                except OSError as e:
                    errors.append(f"{addr.uri}: {e}")
                    log.debug("metastore %s unreachable: %s", addr.uri, e)
                    continue
                sock = TSocket.TSocket(addr.host, addr.port)
                sock.setTimeout(int(self.timeout * 1000))
                sock.handle = conn
                transport = TTransport.TBufferedTransport(sock)
                self._transport = transport
                self._client = hms.Client(TBinaryProtocol.TBinaryProtocol(transport))
                self.uri = addr.uri
                log.debug("connected to Hive Metastore %s", addr.uri)
                return self
            raise MetastoreUnavailableError(
                "Cannot reach the Hive Metastore at " + ", ".join(self.uris) + " ("
                + "; ".join(errors) + "). Check the metastoreUri option / hive.metastore.uris "
                "and that the metastore is running.")

    def close(self) -> None:
        with self._lock:
            transport, self._transport, self._client = self._transport, None, None
            if transport is not None:
                try:
                    transport.close()
                except Exception:  # noqa: BLE001 - closing a broken socket may fail; ignore
                    log.debug("error closing metastore transport", exc_info=True)

    def __enter__(self) -> "MetastoreClient":
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def is_open(self) -> bool:
        return self._transport is not None

    def __getstate__(self) -> dict[str, Any]:
        raise TypeError("A MetastoreClient holds a socket and cannot be pickled: send the URIs "
                        "to executors and connect there")

    def _call(self, method: str, *args: Any, what: str = "", retry: bool = False,
              table: Optional[str] = None) -> Any:
        """Call a Thrift method, translating errors; ``retry`` reconnects once if the socket broke.

        Only idempotent calls pass ``retry=True``: a broken connection during e.g. ``commit_txn``
        leaves the outcome unknown, so it is reported, not retried.
        """
        Thrift, _, _, TTransport = thrift_module()
        what = what or method
        attempts = 2 if retry else 1
        with self._lock:
            for attempt in range(attempts):
                self.open()
                try:
                    return getattr(self._client, method)(*args)
                except Thrift.TApplicationException as e:
                    if e.type == _UNKNOWN_METHOD:
                        raise UnknownMethodError(
                            f"Hive Metastore {self.uri} does not implement {method}: {e}") from e
                    raise MetastoreError(
                        f"Hive Metastore {self.uri} failed {what}: {e} (see the metastore log)"
                    ) from e
                except (TTransport.TTransportException, OSError, EOFError) as e:
                    uri = self.uri
                    self.close()
                    if attempt + 1 < attempts:
                        log.warning("connection to %s broke during %s (%s); reconnecting", uri,
                                    what, e)
                        continue
                    raise MetastoreUnavailableError(
                        f"Connection to the Hive Metastore {uri} failed during {what}: {e}") from e
                except Thrift.TException as e:
                    if type(e).__name__ == "TProtocolException":  # the stream may be out of step
                        self.close()
                    raise self._translate(e, what, table) from e
        raise AssertionError("unreachable")

    def _translate(self, e: Exception, what: str, table: Optional[str]) -> HiveAcidError:
        kind = type(e).__name__
        message = getattr(e, "message", None) or str(e)
        where = f"Hive Metastore {self.uri}"
        if kind == "NoSuchObjectException" and table:
            return TableNotFoundError(f"Table {table} not found in the {where} ({message})")
        if kind == "TxnAbortedException":
            if "write conflict" in message.lower():
                return WriteConflictError(
                    f"{what} refused by the {where}: {message}. A concurrent transaction "
                    "committed a conflicting UPDATE/DELETE/MERGE first; nothing was committed, "
                    "retry the operation.")
            return TransactionAbortedError(f"{what}: the transaction was aborted ({message}; "
                                           f"{where})")
        if kind == "NoSuchTxnException":
            return TransactionAbortedError(
                f"{what}: {message} ({where}); it may have timed out and been removed")
        return MetastoreError(f"{where} refused {what}: {kind}: {message}")

    # -- server capabilities ----------------------------------------------------------------
    @property
    def supports_write_ids(self) -> bool:
        """True on Hive 3+ (per-table write ids); False on Hive 2.x. Probed once per client."""
        if self._has_write_ids is None:
            _, tt = bindings()
            probe = tt.GetValidWriteIdsRequest(fullTableNames=[],
                                               validTxnList=ValidIdList().to_string())
            try:
                self._call("get_valid_write_ids", probe, what="probing for Hive 3 write ids")
                self._has_write_ids = True
            except UnknownMethodError:
                self._has_write_ids = False
            except MetastoreUnavailableError:
                raise
            except MetastoreError as e:  # the method exists; it just disliked the empty probe
                log.debug("write id probe answered with an error (so it exists): %s", e)
                self._has_write_ids = True
            log.info("Hive Metastore %s: %s", self.uri,
                     "Hive 3+ (table write ids)" if self._has_write_ids
                     else "Hive 2.x (transaction id = write id)")
        return self._has_write_ids

    @property
    def server_kind(self) -> str:
        """``"hive3+"`` or ``"hive2"``."""
        return "hive3+" if self.supports_write_ids else "hive2"

    def get_config_value(self, name: str, default: str) -> str:
        """A server-side configuration value (only ``hive.*``-style names are allowed by Hive)."""
        return str(self._call("get_config_value", name, default, what=f"get_config_value({name})",
                              retry=True))

    def txn_timeout_seconds(self) -> float:
        """The server's ``hive.txn.timeout`` (default 300 s) in seconds."""
        try:
            return parse_hive_time(self.get_config_value("hive.txn.timeout", "300s"))
        except (MetastoreError, ValueError) as e:
            if isinstance(e, MetastoreUnavailableError):
                raise
            log.debug("cannot read hive.txn.timeout (%s); assuming %.0f s", e,
                      DEFAULT_TXN_TIMEOUT_S)
            return DEFAULT_TXN_TIMEOUT_S

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
            sd = _copy_sd(table.sd, location)
            stored = ["__HIVE_DEFAULT_PARTITION__" if v is None else v for v in values]
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


def check_acid(info: TableInfo) -> None:
    """Raise NotAnAcidTableError unless ``info`` is a transactional table."""
    if (info.table_type or "").upper() == "VIRTUAL_VIEW":
        raise NotAnAcidTableError(f"{info.full_name} is a view, not a Hive ACID table; read it "
                                  f"with spark.read.table('{info.full_name}')")
    if not info.is_transactional:
        raise NotAnAcidTableError(
            f"Table {info.full_name} is not a Hive ACID table (TBLPROPERTIES 'transactional' is "
            f"{info.parameters.get('transactional', 'not set')!r}); read it with "
            f"spark.read.table('{info.full_name}')")


def table_info_from_thrift(t: Any) -> TableInfo:
    sd = t.sd
    serde = sd.serdeInfo if sd is not None else None
    return TableInfo(
        db=t.dbName, name=t.tableName, location=(sd.location if sd else None) or "",
        columns=tuple((c.name, c.type) for c in (sd.cols if sd else None) or []),
        partition_keys=tuple((c.name, c.type) for c in t.partitionKeys or []),
        bucket_cols=tuple(sd.bucketCols or []) if sd else (),
        num_buckets=int(sd.numBuckets) if sd and sd.numBuckets is not None else -1,
        parameters=dict(t.parameters or {}),
        input_format=sd.inputFormat if sd else None,
        output_format=sd.outputFormat if sd else None,
        serde=serde.serializationLib if serde else None,
        serde_parameters=dict(serde.parameters or {}) if serde else {},
        table_type=t.tableType, owner=t.owner)


def partition_info_from_thrift(p: Any, keys: Sequence[str]) -> PartitionInfo:
    values = tuple(p.values or [])
    return PartitionInfo(values, make_partition_name(keys, list(values)),
                         (p.sd.location if p.sd else None) or "", dict(p.parameters or {}))


def _copy_sd(sd: Any, location: str) -> Any:
    _, tt = bindings()
    serde = sd.serdeInfo
    return tt.StorageDescriptor(
        cols=list(sd.cols or []), location=location, inputFormat=sd.inputFormat,
        outputFormat=sd.outputFormat, compressed=sd.compressed, numBuckets=sd.numBuckets,
        serdeInfo=tt.SerDeInfo(name=serde.name, serializationLib=serde.serializationLib,
                               parameters=dict(serde.parameters or {})) if serde else None,
        bucketCols=list(sd.bucketCols or []), sortCols=list(sd.sortCols or []),
        parameters=dict(sd.parameters or {}), skewedInfo=sd.skewedInfo,
        storedAsSubDirectories=sd.storedAsSubDirectories)
