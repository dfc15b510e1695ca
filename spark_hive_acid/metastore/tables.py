"""Table and partition calls of the Hive Metastore client (a base of
:class:`~spark_hive_acid.metastore.client.MetastoreClient`).

Hive 3 and 4 want to know what the client can handle before they hand out or create ACID
tables: Hive 3 refuses insert-only tables to a client that does not declare
``INSERT_ONLY_TABLES``, Hive 4's default metadata transformer (``MetastoreDefaultTransformer``)
refuses to create ACID tables for a processor without ``HIVEFULLACIDWRITE`` /
``HIVEMANAGEDINSERTWRITE`` and marks the tables it returns by the processor's capabilities.
"""
from __future__ import annotations

import logging
import time
from typing import Any, Iterable, Mapping, Optional, Sequence

from ..exceptions import (
    InvalidOptionError,
    MetastoreError,
    MetastoreUnavailableError,
    TableNotFoundError,
)
from ._thrift import bindings
from ._wire import RawStruct, void_call
from .connection import MetastoreConnection
from .convert import (
    check_acid,
    copy_storage_descriptor,
    partition_info_from_thrift,
    table_info_from_thrift,
)
from .model import ORC_INPUT_FORMAT, ORC_OUTPUT_FORMAT, ORC_SERDE, Column, PartitionInfo, TableInfo
from ..acid.partitions import DEFAULT_PARTITION, partition_values
from .partitions import PartitionFilter, make_partition_name

log = logging.getLogger(__name__)

#: what this library does with ACID tables, in Hive 4's vocabulary (MetastoreDefaultTransformer)
PROCESSOR_CAPABILITIES = ("HIVEFULLACIDREAD", "HIVEFULLACIDWRITE", "HIVEMANAGEDINSERTREAD",
                          "HIVEMANAGEDINSERTWRITE", "EXTREAD", "EXTWRITE")
PROCESSOR_ID = "spark-hive-acid"


def hadoop_location(location: Optional[str]) -> Optional[str]:
    """``file:///p`` as Hadoop's ``Path`` writes it (``file:/p``). Hive 4 checks that a managed
    table lies in its warehouse by comparing the strings, and its warehouse root is a Hadoop path:
    ``file:///warehouse/t`` is refused where ``file:/warehouse/t`` is taken."""
    if location and location.startswith("file:///"):
        return "file:/" + location[len("file:///"):]
    return location


class TableCalls(MetastoreConnection):
    """Tables and partitions."""

    # -- tables -----------------------------------------------------------------------------
    def _raw_table(self, db: str, tbl: str) -> Any:
        """The Thrift ``Table``. Hive 3+: ``get_table_req`` declaring the client's capabilities
        (Hive 3 refuses insert-only tables to a client without ``INSERT_ONLY_TABLES``; Hive 4's
        metadata transformer judges ACID tables by the processor capabilities); Hive 2:
        ``get_table``."""
        what, full = f"get_table({db}.{tbl})", f"{db}.{tbl}"
        kind = self.server_kind
        if kind == "hive2":
            return self._call("get_table", db, tbl, what=what, retry=True, table=full)
        _, tt = bindings()
        caps = tt.ClientCapabilities(values=[tt.ClientCapability.INSERT_ONLY_TABLES])
        req: Any = tt.GetTableRequest(dbName=db, tblName=tbl, capabilities=caps)
        if kind == "hive4":
            req = RawStruct("GetTableRequest", [
                (1, "string", db), (2, "string", tbl), (3, "struct", caps),
                (8, "list<string>", list(PROCESSOR_CAPABILITIES)),
                (9, "string", PROCESSOR_ID)])
        return self._call("get_table_req", req, what=what, retry=True, table=full).table

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
            location=hadoop_location(location), inputFormat=input_format, outputFormat=output_format,
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
            self._call(self._create_call(table), what=f"create_table({db}.{tbl})")
        except MetastoreError as e:
            if "must be bucketed" in str(e):
                raise MetastoreError(
                    f"{e}. This metastore (Hive 2.x) accepts full-ACID tables only when they are "
                    "bucketed: pass bucket_cols=[...] and num_buckets=N (CLUSTERED BY ... INTO N "
                    "BUCKETS).") from e
            raise
        return self.get_table(db, tbl, require_acid=False)

    def _create_call(self, table: Any) -> Any:
        """``create_table``; on Hive 4 ``create_table_req`` with the processor capabilities, without
        which its metadata transformer refuses ACID tables ("Processor has no capabilities, cannot
        create an ACID table")."""
        if self.server_kind != "hive4":
            return lambda client: client.create_table(table)
        _, tt = bindings()
        request = RawStruct("CreateTableRequest", [
            (1, "struct", table), (9, "list<string>", list(PROCESSOR_CAPABILITIES)),
            (10, "string", PROCESSOR_ID)])
        return void_call("create_table_req", RawStruct("create_table_req_args",
                                                       [(1, "struct", request)]),
                         {1: tt.AlreadyExistsException, 2: tt.InvalidObjectException,
                          3: tt.MetaException, 4: tt.NoSuchObjectException})

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

    def get_partitions_by_names(self, db: str, tbl: str, names: Sequence[str],
                                keys: Sequence[str]) -> list[PartitionInfo]:
        """The partitions named (``k=v/...``; ``keys``: the table's partition columns) that
        exist, in one call however many partitions the table has."""
        if not names:
            return []
        parts = self._call("get_partitions_by_names", db, tbl, list(names),
                           what=f"{len(names)} partitions of {db}.{tbl}", retry=True,
                           table=f"{db}.{tbl}")
        return [partition_info_from_thrift(p, keys) for p in parts]

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
