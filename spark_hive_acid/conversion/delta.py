"""A Delta table as the target, through deltalake (delta-rs; ``pip install
'spark-hive-acid[convert]'``).

* Data files are written by the converter (Parquet, without the partition columns, as Delta lays
  them out) and committed with ``DeltaTable.create_write_transaction``: ``add`` actions for new
  files, ``remove`` actions for the files a delete or update rewrote (copy-on-write: delta-rs
  writes no deletion vectors), one Delta version per Hive write id.
* The last applied write id is Delta's own idempotency record, the ``txn`` action of application
  id ``spark-hive-acid`` (``DeltaTable.transaction_version``), committed in the same version as
  the data it describes; the write id, commit time and operation are also in each version's
  ``commitInfo``.
* A new table is built in a hidden sibling directory and renamed into place when every version is
  committed, so a kill leaves either no table or all of it (local and HDFS paths: one rename; an
  object store has no atomic rename, so there the versions appear as they commit). Later mirror
  runs commit one version per write id: a kill leaves a prefix of them, each complete, and the
  next run goes on after the last.
"""
from __future__ import annotations

import logging
import os
import shutil
import time
import uuid
from typing import Any, Iterator, Optional
from urllib.parse import quote, unquote, urlparse

import pyarrow as pa

from ..exceptions import InvalidOptionError, UnsupportedOperationError
from .keys import GroupKey, parse_file_name
from .schema import check_delta
from .target import SOURCE_KEY, WRITE_ID_KEY, Step, Target, Version
from .writing import WrittenFile

log = logging.getLogger(__name__)

APP_ID = "spark-hive-acid"
STAGING_PREFIX = ".hiveacid-converting-"


def _deltalake() -> Any:
    try:
        import deltalake
    except ImportError as e:  # pragma: no cover - depends on the install
        raise UnsupportedOperationError(
            "Converting to Delta needs deltalake: pip install 'spark-hive-acid[convert]'") from e
    return deltalake


def _local_path(uri: str) -> Optional[str]:
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return unquote(parsed.path)
    if parsed.scheme == "" or (len(parsed.scheme) == 1 and os.name == "nt"):
        return os.path.abspath(uri)
    return None


def partition_string(value: Any) -> Optional[str]:
    """A partition value as Delta's log spells it."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if hasattr(value, "isoformat") and hasattr(value, "hour"):
        return value.isoformat(sep=" ")
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


class DeltaTarget(Target):
    """The Delta table at ``uri`` (a local path, ``file://``, or any URI deltalake takes, with
    ``storage_options``)."""

    def __init__(self, uri: str, storage_options: Optional[dict[str, str]] = None):
        self.local = _local_path(uri)
        self.uri = self.local if self.local is not None else uri.rstrip("/")
        self.storage_options = storage_options
        self.display = f"delta:{self.uri}"
        self.partition_columns: list[str] = []
        self.commits_each_step = True
        self._root = self.uri  # where the table is being written (a staging dir when new)
        self._staging: Optional[str] = None
        self._schema: Optional[pa.Schema] = None
        self._file_schema: Optional[pa.Schema] = None
        self._created = False
        self._source = ""
        self._fs: Any = None

    # --- state ---------------------------------------------------------------------------------
    def _table(self, version: Optional[int] = None) -> Any:
        dl = _deltalake()
        return dl.DeltaTable(self._root, version=version, storage_options=self.storage_options)

    def exists(self) -> bool:
        return _deltalake().DeltaTable.is_deltatable(self.uri, self.storage_options)

    def source(self) -> Optional[str]:
        if not self.exists():
            return None
        for entry in self._table().history():  # newest first
            if entry.get(SOURCE_KEY) is not None:
                return str(entry[SOURCE_KEY])
        return None

    def last_write_id(self) -> Optional[int]:
        if not self.exists():
            return None
        table = self._table()
        last = table.transaction_version(APP_ID)
        newest = table.history(1)
        if last is not None and newest and newest[0].get(WRITE_ID_KEY) is None:
            raise UnsupportedOperationError(
                f"Version {newest[0].get('version')} of {self.display} was not made by the "
                "converter: the table was written since. A mirror applies Hive write ids only to "
                "a table nothing else writes")
        return last

    def current(self) -> Optional[Version]:
        if not self.exists():
            return None
        table = self._table()
        last = table.transaction_version(APP_ID)
        return None if last is None else Version(table.version(), last)

    def versions(self) -> list[Version]:
        if not self.exists():
            return []
        out = []
        for entry in self._table().history():
            value = entry.get(WRITE_ID_KEY)
            if value is not None:
                out.append(Version(int(entry["version"]), int(value)))
        return sorted(out, key=lambda v: v.ref)

    def current_files(self) -> dict[GroupKey, list[Any]]:
        table = self._table()
        self.partition_columns = list(table.metadata().partition_columns)
        adds = pa.table(table.get_add_actions(flatten=True))
        out: dict[GroupKey, list[Any]] = {}
        parts = [f"partition.{c}" for c in self.partition_columns]
        for row in adds.select(["path", "size_bytes", *parts]).to_pylist():
            rel = unquote(row["path"])
            directory, _, name = rel.rpartition("/")
            key = parse_file_name(directory, name)
            if key is not None:
                values = {c: row[p] for c, p in zip(self.partition_columns, parts)}
                out.setdefault(key, []).append((row["path"], row["size_bytes"],
                                                {c: partition_string(v) for c, v in values.items()}))
        return out

    def read(self, version: Any) -> Iterator[pa.RecordBatch]:
        yield from self._table(int(version)).to_pyarrow_dataset().to_batches()

    # --- writing -------------------------------------------------------------------------------
    def start(self, schema: pa.Schema, partition_columns: list[str], source: str) -> None:
        check_delta(schema)
        self._schema, self._source = schema, source
        self.partition_columns = list(partition_columns)
        self._file_schema = pa.schema([f for f in schema if f.name not in partition_columns])
        self._created = self.exists()
        if self._created:
            self._root = self.uri
            return
        if self.local is not None:
            if os.path.isdir(self.local) and os.listdir(self.local):
                raise InvalidOptionError(
                    f"{self.uri} exists and is not empty (and not a Delta table): give a new "
                    "directory for the converted table")
            parent, name = os.path.split(self.local.rstrip("/"))
            os.makedirs(parent, exist_ok=True)
            for old in os.listdir(parent):  # a run killed before its rename
                if old.startswith(f"{STAGING_PREFIX}{name}-"):
                    shutil.rmtree(os.path.join(parent, old), ignore_errors=True)
            self._staging = os.path.join(parent, f"{STAGING_PREFIX}{name}-{uuid.uuid4().hex[:8]}")
            os.makedirs(self._staging)
            self._root = self._staging

    def _filesystem(self) -> tuple[Any, str]:
        import pyarrow.fs as pafs

        if self.local is not None:
            return pafs.LocalFileSystem(), self._root
        if self._fs is None:
            self._fs = pafs.FileSystem.from_uri(self._root)
        return self._fs

    def data_file_path(self, key: GroupKey, tag: str) -> str:
        _, root = self._filesystem()
        return f"{root}/{key.partition + '/' if key.partition else ''}{key.file_name(tag)}"

    def open_output(self, path: str) -> Any:
        fs, _ = self._filesystem()
        fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
        return fs.open_output_stream(path)

    def file_batch(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        if not self.partition_columns:
            return batch
        return batch.drop_columns(self.partition_columns)

    def file_schema(self) -> pa.Schema:
        assert self._file_schema is not None
        return self._file_schema

    def _relative(self, path: str) -> str:
        _, root = self._filesystem()
        return quote(path[len(root):].lstrip("/"), safe="/=")

    def handle(self, f: WrittenFile) -> Any:
        values = dict(zip(self.partition_columns, f.partition_values))
        return (self._relative(f.path), f.size,
                {c: partition_string(v) for c, v in values.items()})

    def apply(self, step: Step) -> None:
        import json

        dl = _deltalake()
        from deltalake.transaction import AddAction, CommitProperties, RemoveAction, Transaction

        now = int(time.time() * 1000)
        adds = []
        for f in step.adds:
            rel, size, values = self.handle(f)
            adds.append(AddAction(rel, size, values, now, True, json.dumps({"numRecords": f.rows})))
        props = CommitProperties(custom_metadata={**step.properties(), SOURCE_KEY: self._source},
                                 max_commit_retries=0,
                                 app_transactions=[Transaction(APP_ID, step.write_id, now)])
        assert self._schema is not None
        if not self._created:
            from deltalake.transaction import create_table_with_add_actions

            create_table_with_add_actions(
                self._root, dl.Schema.from_arrow(self._schema), adds, mode="error",
                partition_by=self.partition_columns or None, storage_options=self.storage_options,
                commit_properties=props)
            self._created = True
            return
        removes = [RemoveAction(rel, True, now, size, values) for rel, size, values in step.removes]
        self._table().create_write_transaction(
            [*removes, *adds], "append", dl.Schema.from_arrow(self._schema),
            partition_by=self.partition_columns or None, commit_properties=props)

    def finish(self) -> None:
        if self._staging is not None:
            if self._created:
                assert self.local is not None  # staging is used for local tables only (start)
                if os.path.isdir(self.local):
                    os.rmdir(self.local)  # empty (checked by start)
                os.rename(self._staging, self.local)  # one rename: the whole table appears
            else:
                shutil.rmtree(self._staging, ignore_errors=True)
            self._staging = None
            self._root = self.uri

    def abort(self, written: list[WrittenFile]) -> None:
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)
            self._staging = None
            return
        fs, _ = self._filesystem()
        for f in written:
            try:
                fs.delete_file(f.path)
            except Exception as e:  # noqa: BLE001 - an unreferenced file harms no reader
                log.warning("could not remove %s: %s", f.path, e)
