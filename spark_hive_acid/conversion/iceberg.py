"""An Iceberg table as the target, through pyiceberg (``pip install 'spark-hive-acid[convert]'``).

* The catalog is a pyiceberg ``Catalog`` or the properties to load one (``load_catalog``): by
  default its SQL catalog on a SQLite file (no server), a Hive Metastore (``type=hive``) or a REST
  catalog (``type=rest``) by configuration.
* Data files are written by the converter (Parquet, with Iceberg's field ids) and committed as
  ``DataFile`` entries through pyiceberg's snapshot producers: an insert is a fast append, a
  delete or update an overwrite that removes the rewritten files and adds their new versions.
  pyiceberg 0.12 writes no position- or equality-delete files (it reads them), so deletes are
  copy-on-write, at the granularity of the converter's row groups (``conversion.keys``).
* Every snapshot of a run is made in ONE pyiceberg transaction, committed at the end by one
  catalog swap: a kill leaves the table without any of them or with all of them. A new table is
  created by the same transaction (``create_table_transaction``).
* The Hive write id of each snapshot is in its summary (``hive.write-id``); the last one is where
  a mirror resumes.
"""
from __future__ import annotations

import logging
import posixpath
from typing import Any, Iterator, Mapping, Optional, Union

import pyarrow as pa

from ..exceptions import InvalidOptionError, UnsupportedOperationError
from .keys import GroupKey, parse_file_name
from .schema import check_iceberg
from .target import SOURCE_KEY, WRITE_ID_KEY, Step, Target, Version
from .writing import WrittenFile

log = logging.getLogger(__name__)

CatalogLike = Union[Any, Mapping[str, str]]


def load(catalog: CatalogLike) -> Any:
    """A pyiceberg catalog: ``catalog`` itself, or loaded from its properties (``name`` is the
    catalog's name, default ``hiveacid``)."""
    try:
        from pyiceberg.catalog import Catalog, load_catalog
    except ImportError as e:  # pragma: no cover - depends on the install
        raise UnsupportedOperationError(
            "Converting to Iceberg needs pyiceberg: pip install 'spark-hive-acid[convert]'") from e
    if isinstance(catalog, Catalog):
        return catalog
    if not isinstance(catalog, Mapping):
        raise InvalidOptionError(f"catalog: give a pyiceberg Catalog or its properties, not "
                                 f"{type(catalog).__name__}")
    props = {str(k): str(v) for k, v in catalog.items()}
    return load_catalog(props.pop("name", "hiveacid"), **props)


class IcebergTarget(Target):
    """Table ``identifier`` (``"db.table"``) of ``catalog``."""

    def __init__(self, catalog: CatalogLike, identifier: str):
        self.catalog = load(catalog)
        self.identifier = identifier
        self.display = f"iceberg:{identifier}"
        self.partition_columns: list[str] = []
        self.commits_each_step = False
        self._txn: Any = None
        self._schema: Optional[pa.Schema] = None
        self._table: Any = None
        self._handles: dict[str, Any] = {}

    # --- state ---------------------------------------------------------------------------------
    def table(self) -> Any:
        if self._table is None:
            self._table = self.catalog.load_table(self.identifier)
        return self._table

    def exists(self) -> bool:
        return self.catalog.table_exists(self.identifier)

    def source(self) -> Optional[str]:
        return self.table().properties.get(SOURCE_KEY) if self.exists() else None

    def last_write_id(self) -> Optional[int]:
        if not self.exists():
            return None
        snap = self.table().current_snapshot()
        if snap is None:
            return None
        value = snap.summary.additional_properties.get(WRITE_ID_KEY) if snap.summary else None
        if value is None:
            raise UnsupportedOperationError(
                f"The current snapshot {snap.snapshot_id} of {self.display} was not made by the "
                "converter: the table was written since. A mirror applies Hive write ids only to "
                "a table nothing else writes")
        return int(value)

    def current(self) -> Optional[Version]:
        if not self.exists():
            return None
        table = self.table()
        snap = table.current_snapshot()
        if snap is None:
            return None
        last = None
        for ancestor in self._ancestors(table, snap):
            value = ancestor.summary.additional_properties.get(WRITE_ID_KEY) \
                if ancestor.summary else None
            if value is not None:
                last = int(value)
                break
        return None if last is None else Version(snap.snapshot_id, last)

    @staticmethod
    def _ancestors(table: Any, snap: Any) -> Iterator[Any]:
        while snap is not None:
            yield snap
            snap = table.snapshot_by_id(snap.parent_snapshot_id) \
                if snap.parent_snapshot_id is not None else None

    def versions(self) -> list[Version]:
        if not self.exists():
            return []
        out = []
        for snap in self.table().snapshots():  # oldest first
            value = snap.summary.additional_properties.get(WRITE_ID_KEY) if snap.summary else None
            if value is not None:
                out.append(Version(snap.snapshot_id, int(value)))
        return out

    def _partition_of(self, file_path: str, root: str) -> str:
        rel = posixpath.dirname(file_path[len(root):].lstrip("/"))
        return rel

    def current_files(self) -> dict[GroupKey, list[Any]]:
        table = self.table()
        self.partition_columns = [table.schema().find_field(f.source_id).name
                                  for f in table.spec().fields]
        if table.current_snapshot() is None:
            return {}
        root = self._data_root(table.metadata.location)
        out: dict[GroupKey, list[Any]] = {}
        for task in table.scan().plan_files():
            f = task.file
            key = parse_file_name(self._partition_of(f.file_path, root),
                                  posixpath.basename(f.file_path))
            if key is not None:
                out.setdefault(key, []).append(f)
        return out

    def read(self, version: Any) -> Iterator[pa.RecordBatch]:
        reader = self.table().scan(snapshot_id=version).to_arrow_batch_reader()
        yield from reader

    # --- writing -------------------------------------------------------------------------------
    @staticmethod
    def _data_root(location: str) -> str:
        return location.rstrip("/") + "/data/"

    def start(self, schema: pa.Schema, partition_columns: list[str], source: str) -> None:
        check_iceberg(schema)
        self.partition_columns = list(partition_columns)
        if self.exists():
            self._txn = self.table().transaction()
        else:
            namespace = tuple(self.identifier.split(".")[:-1])
            if namespace:
                self.catalog.create_namespace_if_not_exists(namespace)
            self._txn = self.catalog.create_table_transaction(
                self.identifier, schema=schema, properties={SOURCE_KEY: source,
                                                            "format-version": "2"})
            if partition_columns:
                with self._txn.update_spec() as spec:
                    for c in partition_columns:
                        spec.add_identity(c)
        self._schema = self._file_arrow_schema()

    def _file_arrow_schema(self) -> pa.Schema:
        from pyiceberg.io.pyarrow import schema_to_pyarrow

        return schema_to_pyarrow(self._txn.table_metadata.schema(), include_field_ids=True)

    def data_file_path(self, key: GroupKey, tag: str) -> str:
        root = self._data_root(self._txn.table_metadata.location)
        return root + (key.partition + "/" if key.partition else "") + key.file_name(tag)

    def open_output(self, path: str) -> Any:
        return self._txn._table.io.new_output(path).create(overwrite=False)

    def file_batch(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        return batch

    def file_schema(self) -> pa.Schema:
        assert self._schema is not None
        return self._schema

    def handle(self, f: WrittenFile) -> Any:
        if f.path not in self._handles:
            self._handles[f.path] = self._data_file(f)
        return self._handles[f.path]

    def _data_file(self, f: WrittenFile) -> Any:
        from pyiceberg.io.pyarrow import (
            compute_statistics_plan, data_file_statistics_from_parquet_metadata,
            parquet_path_to_id_mapping,
        )
        from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
        from pyiceberg.typedef import Record

        meta = self._txn.table_metadata
        stats = data_file_statistics_from_parquet_metadata(
            parquet_metadata=f.metadata,
            stats_columns=compute_statistics_plan(meta.schema(), meta.properties),
            parquet_column_mapping=parquet_path_to_id_mapping(meta.schema()))
        spec = meta.spec()
        partition = Record(*[f.partition_values[self.partition_columns.index(
            meta.schema().find_field(pf.source_id).name)] for pf in spec.fields])
        data_file = DataFile.from_args(
            content=DataFileContent.DATA, file_path=f.path, file_format=FileFormat.PARQUET,
            partition=partition, file_size_in_bytes=f.size, sort_order_id=None,
            equality_ids=None, key_metadata=None, **stats.to_serialized_dict())
        data_file.spec_id = meta.default_spec_id
        return data_file

    def apply(self, step: Step) -> None:
        update = self._txn.update_snapshot(snapshot_properties=step.properties())
        if step.removes:
            with update.overwrite() as producer:
                for f in step.removes:
                    producer.delete_data_file(f)
                for f in step.adds:
                    producer.append_data_file(self.handle(f))
        else:
            with update.fast_append() as producer:
                for f in step.adds:
                    producer.append_data_file(self.handle(f))

    def finish(self) -> None:
        self._txn.commit_transaction()
        self._txn = None
        self._table = None  # loaded again: the committed table

    def abort(self, written: list[WrittenFile]) -> None:
        self._txn = None
        io = self._file_io()
        for f in written:
            try:
                io.delete(f.path)
            except Exception as e:  # noqa: BLE001 - best effort: an orphan file harms no reader
                log.warning("could not remove %s: %s", f.path, e)

    def _file_io(self) -> Any:
        from pyiceberg.io import load_file_io

        return load_file_io(self.catalog.properties)
