"""A table named in a Hive Metastore: its location, layout and partitions come from the metastore,
its transactions are metastore transactions (with Hive's locks). Files are laid out exactly as in
path mode; the path-mode log (``_hiveacid_txnlog``) is never written for such a table."""
from __future__ import annotations

import logging
from typing import Any, Callable, Mapping, Optional, Sequence

import pyarrow as pa

from .. import options as opt
from ..acid.layout import TableLayout
from ..acid.log_records import ABORTED, COMMITTED, OPEN
from ..acid.snapshot import ValidIdList
from ..exceptions import (
    HiveAcidError,
    InvalidOptionError,
    MetastoreError,
    MetastoreNotConfiguredError,
    NotAnAcidTableError,
    TableNotFoundError,
    UnsupportedOperationError,
    UnsupportedTypeError,
)
from ..io.filesystem import FileSystem
from ..io.registry import get_filesystem
from ..metastore.api import client_from_options, parse_table_name
from ..metastore.client import MetastoreClient
from ..metastore.model import TableInfo
from ..metastore.uris import OPTION_URI, resolve_metastore_uris
from ..read.source import TableSource
from ..txn.hms import HmsTransaction
from ..txn.hms_lifecycle import DEFAULT_LOCK_TIMEOUT_S
from ..txn.hms_multi import HmsGroup, JoinedTransaction
from ..write.options import WriteOptions
from ..write.plain_file import (
    DEFAULT_COMPRESSION,
    ORC,
    PARQUET,
    check_codec,
    format_of_input_format,
)
from ..write.schema_change import check_new_columns
from ..write.table_setup import layout_from_columns, layout_from_schema
from .base import METASTORE_MODE, TableRef
from .dir_history import history_from_dirs

log = logging.getLogger(__name__)
URI_KEY = OPTION_URI.lower()


def resolve_uris(options: Mapping[str, str], spark_conf: Optional[Mapping[str, str]] = None,
                 *, in_worker: bool = False) -> str:
    """The metastore URIs (comma-separated) from the option, the Spark conf or hive-site.xml.
    ``in_worker``: we run in a Spark Python worker, which does not see the Spark conf (the error
    then says what reaches a worker)."""
    return ",".join(resolve_metastore_uris(options, None if in_worker else spark_conf))


class MetastoreTable(TableRef):
    """The table ``db.name`` of the metastore at ``options["metastoreuri"]``."""

    mode = METASTORE_MODE

    def __init__(self, db: str, name: str, options: Mapping[str, str]):
        self.db, self.name = db.lower(), name.lower()
        self.options = opt.lowered(options)
        self.options.pop("path", None)
        self.options["table"] = f"{self.db}.{self.name}"
        if not self.options.get(URI_KEY):
            raise MetastoreNotConfiguredError(f"No metastore URI for table {self.display}")

    @classmethod
    def from_options(cls, options: Mapping[str, str], spark_conf: Optional[Mapping[str, str]] = None,
                     *, in_worker: bool = False) -> "MetastoreTable":
        """The table named by the ``table`` option, its metastore resolved from the options, the
        Spark conf or hive-site.xml."""
        raw = opt.lowered(options)
        db, name = parse_table_name(raw.get("table", ""))
        raw[URI_KEY] = resolve_uris(raw, spark_conf, in_worker=in_worker)
        return cls(db, name, raw)

    @property
    def display(self) -> str:
        return f"{self.db}.{self.name}"

    @property
    def full_name(self) -> str:
        return self.display

    @property
    def metastore_uri(self) -> str:
        return self.options[URI_KEY]

    def client(self) -> MetastoreClient:
        return client_from_options(self.options, uris=self.metastore_uri)

    def info(self, require_acid: bool = True) -> TableInfo:
        """The table's current metastore entry (TableNotFoundError, NotAnAcidTableError...)."""
        with self.client() as c:
            return c.get_table(self.db, self.name, require_acid=require_acid)

    def writable_info(self) -> TableInfo:
        """The table, if this library can write it: transactional, full ACID stored as ORC or
        insert-only stored as ORC or Parquet."""
        try:
            info = self.info()
        except NotAnAcidTableError as e:
            raise NotAnAcidTableError(
                f"{e}; to write it use Spark's Hive support (df.write.insertInto("
                f"'{self.display}')), not the hiveacid format") from e
        fmt = (info.input_format or "").lower()
        if info.is_insert_only:
            if fmt and format_of_input_format(fmt) is None:
                raise UnsupportedOperationError(
                    f"Table {info.full_name} is an insert-only table stored as "
                    f"{info.input_format}: hiveacid writes insert-only tables stored as ORC or "
                    "Parquet only; write this one with Hive (INSERT INTO)")
        elif fmt and "orc" not in fmt:
            raise UnsupportedTypeError(
                f"Table {info.full_name} is stored as {info.input_format}: full-ACID tables must "
                "be ORC")
        if not info.location:
            raise MetastoreError(f"Table {info.full_name} has no location in the metastore")
        return info

    def location(self, info: Optional[TableInfo] = None) -> tuple[FileSystem, str]:
        info = info or self.info()
        if not info.location:
            raise MetastoreError(f"Table {info.full_name} has no location in the metastore")
        return get_filesystem(info.location, self.options)

    def layout(self, adopt: Optional[Callable[[], pa.Schema]] = None,
               info: Optional[TableInfo] = None) -> TableLayout:
        info = info or self.info()
        layout = info.to_layout()
        layout.file_format = format_of_input_format(info.input_format) or ORC
        compression = opt.value(self.options, "compression") or info.parameters.get(
            "parquet.compression" if layout.file_format == PARQUET else "orc.compress")
        if compression:
            check_codec(layout.file_format, compression)  # validates
            layout.compression = compression.upper()
        elif layout.file_format == PARQUET:
            layout.compression = DEFAULT_COMPRESSION[PARQUET]
        return layout

    def prepare_write(self, schema: pa.Schema, write_options: WriteOptions
                      ) -> tuple[TableLayout, bool]:
        info = self.writable_info()
        _check_creation_options(write_options, info)
        self._check_writable(info)
        return self.merge_schema(self.layout(info=info), schema, write_options), False

    def add_columns(self, columns: Sequence[tuple[str, str]]) -> TableLayout:
        """The metastore's ALTER TABLE (``MetastoreClient.add_columns``)."""
        new = check_new_columns(self.layout(), columns, self.display)
        with self.client() as c:
            c.add_columns(self.db, self.name, new)
        return self.layout()

    def _check_writable(self, info: TableInfo) -> None:
        """The location's store must take this library's writes (object stores: conditional
        creates), asked before any transaction or file."""
        fs, path = self.location(info)
        fs.check_writable(path)

    def begin(self, operation: str, info: Optional[TableInfo] = None) -> HmsTransaction:
        info = info or self.writable_info()
        self._check_writable(info)
        txn = HmsTransaction(
            self.client(), self.db, self.name, operation, table=info or self.writable_info(),
            lock_timeout=opt.value(self.options, "lockWaitTimeout")
            or DEFAULT_LOCK_TIMEOUT_S,
            heartbeat_interval=opt.value(self.options, "heartbeatInterval"),
            owns_client=True, options=self.options)
        return txn.begin()

    def join(self, group: HmsGroup, operation: str) -> JoinedTransaction:
        """This table's part of a metastore transaction over several tables: its write id and
        lock in ``group``'s one transaction (``txn.hms_multi``)."""
        return group.join(self.writable_info(), operation)

    def reader_options(self) -> dict[str, str]:
        return dict(self.options)

    def compaction_state(self, compaction_id: int) -> str:
        """A compaction's transaction (it has a txn id, no write id) in the metastore's list."""
        txns = self.current_snapshot()[1]
        if txns.is_aborted(compaction_id):
            return ABORTED
        if txns.is_open(compaction_id) or compaction_id > txns.high_watermark:
            return OPEN
        return COMMITTED

    def txn_high_watermark(self) -> Optional[int]:
        """The metastore's global transaction high watermark now (what a compaction records
        with its install: ``txn.committer.commit_compaction``)."""
        with self.client() as c:
            return c.txn_states().high_watermark

    def history(self) -> list[dict[str, Any]]:
        """One entry per write id found in the table's directories, newest first (the metastore
        keeps no per-table history; see :mod:`.dir_history`)."""
        with self.client() as c:
            info = c.get_table(self.db, self.name)
            write_ids, _ = c.read_snapshot(info.db, info.name)
            places = self.partition_dirs(c, info)
        fs, _ = self.location(info)
        listed = []
        for part, where in places:
            try:
                listed.append((part, fs.list_dir(where)))
            except HiveAcidError:
                continue
        return history_from_dirs(listed, write_ids)

    def partition_dirs(self, client: MetastoreClient, info: Optional[TableInfo] = None
                       ) -> list[tuple[str, str]]:
        """``(partition name, directory)`` of every partition the metastore lists, sorted (``""``
        and the table's directory for an unpartitioned table)."""
        info = info or client.get_table(self.db, self.name)
        if not info.is_partitioned:
            return [("", self.location(info)[1])]
        return sorted((p.name, get_filesystem(p.location, self.options)[1])
                      for p in client.list_partitions(info.db, info.name) if p.location)

    def current_snapshot(self) -> tuple[ValidIdList, ValidIdList]:
        """The metastore's current snapshot of this table (write ids, txns)."""
        with self.client() as c:
            return c.read_snapshot(self.db, self.name)

    def source(self) -> TableSource:
        """One metastore round trip: the table, its snapshot and its partitions."""
        with self.client() as c:
            info = c.get_table(self.db, self.name)
            write_ids, txns = c.read_snapshot(info.db, info.name)
            parts = c.list_partitions(info.db, info.name) if info.partition_keys else []
        fmt = (info.input_format or "").lower()
        if info.is_insert_only and fmt and "orc" not in fmt and "parquet" not in fmt:
            raise UnsupportedTypeError(
                f"Table {info.full_name} stores its files as {info.input_format}: only ORC and "
                "Parquet insert-only tables are read")
        if not info.location:
            raise MetastoreError(f"Table {info.full_name} has no location in the metastore")
        fs, path = get_filesystem(info.location, self.options)
        st = fs.status(path)
        if st is None or not st.is_dir:
            raise TableNotFoundError(
                f"The location of table {info.full_name}, {info.location}, is not a directory "
                "(missing, or a file): the metastore points at data that is gone")
        known = None
        if info.partition_keys:
            known = (info.partition_names,
                     [(get_filesystem(p.location, self.options)[1], tuple(p.values))
                      for p in parts])
        log.info("metastore snapshot of %s: write ids %s", info.full_name, write_ids.to_string())
        return TableSource(fs, path, info.location, info.full_name, info.to_layout(),
                           info.is_insert_only, write_ids, txns, name=info.full_name,
                           known_partitions=known, log_times=False)

    def __repr__(self) -> str:
        return f"MetastoreTable({self.display!r}, metastore={self.metastore_uri})"


def _check_creation_options(write_options: WriteOptions, info: TableInfo) -> None:
    """Table-creation options are not used by name: refuse those that contradict the metastore."""
    def differs(given: Sequence[str], actual: Sequence[str]) -> bool:
        return [g.lower() for g in given] != [a.lower() for a in actual]

    part = write_options.partition_by
    if part and differs(part, info.partition_names):
        raise InvalidOptionError(
            f"Table {info.full_name} is partitioned by ({', '.join(info.partition_names)}) in the "
            f"metastore, not ({', '.join(part)}); drop the partitionBy option")
    bucket = write_options.bucket_by
    if bucket and differs(bucket, info.bucket_cols):
        raise InvalidOptionError(
            f"Table {info.full_name} is bucketed by ({', '.join(info.bucket_cols) or 'nothing'}) "
            f"in the metastore, not ({', '.join(bucket)}); drop the bucketBy option")
    n = write_options.num_buckets
    if n and n != info.num_buckets:
        raise InvalidOptionError(
            f"Table {info.full_name} has {info.num_buckets} buckets in the metastore, not {n}")
    fmt = write_options.file_format
    if fmt and fmt != (format_of_input_format(info.input_format) or ORC):
        raise InvalidOptionError(
            f"Table {info.full_name} is stored as {info.input_format} in the metastore, not "
            f"{fmt}; drop the fileFormat option")


def create_table(table: MetastoreTable, schema: pa.Schema, write_options: WriteOptions, *,
                 location: Optional[str] = None, if_not_exists: bool = False,
                 columns: Optional[Sequence[tuple[str, str]]] = None) -> MetastoreTable:
    """Register a transactional (full-ACID, ORC) table with the columns of ``schema`` (partition
    columns included) and the creation options of ``write_options``; ``columns``: the same
    columns as (name, Hive type), which keeps declared ``char(n)`` / ``varchar(n)`` types."""
    if write_options.bucket_by and not write_options.num_buckets:
        raise InvalidOptionError("bucketBy needs numBuckets (a positive integer)")
    if write_options.num_buckets and not write_options.bucket_by:
        raise InvalidOptionError("numBuckets needs bucketBy (the CLUSTERED BY columns)")
    layout = (layout_from_schema(write_options, schema) if columns is None
              else layout_from_columns(write_options, columns))
    props = dict(layout.properties)
    if write_options.compression:
        props.setdefault("orc.compress", write_options.compression)
    with table.client() as c:
        if c.table_exists(table.db, table.name):
            if not if_not_exists:
                raise InvalidOptionError(
                    f"Table {table.display} already exists in the Hive Metastore {c.uri}; use "
                    "HiveAcidTable.forName, or create(..., ifNotExists=True)")
        else:
            c.create_table(table.db, table.name, layout.columns, layout.partition_columns,
                           layout.bucket_columns, layout.num_buckets or -1, props, location)
            log.info("created transactional table %s in %s", table.display, c.uri)
    return table


def metastore_table(table: TableRef, what: str) -> MetastoreTable:
    """``table`` as a metastore table, for ``what`` only they have (InvalidOptionError for a
    path)."""
    if isinstance(table, MetastoreTable):
        return table
    raise InvalidOptionError(f"{what} is for tables of a Hive Metastore "
                             "(HiveAcidTable.forName); this one is a path")
