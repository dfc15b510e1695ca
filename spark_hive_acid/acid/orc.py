"""Opening ORC files for the reader: flush-length side files, clear errors, schema kinds."""
from __future__ import annotations

import struct
from typing import Any, Optional, Sequence, Union

import numpy as np
import pyarrow as pa
import pyarrow.orc as po

from .names import FLUSH_LENGTH_SUFFIX
from ..exceptions import CorruptFileError, StorageError
from ..io.filesystem import FileSystem

ACID_FIELD_NAMES = ("operation", "originalTransaction", "bucket", "rowId", "currentTransaction", "row")
_ACID_LOWER = tuple(n.lower() for n in ACID_FIELD_NAMES)
ORC_MAGIC = b"ORC"
PARQUET_MAGIC = b"PAR1"


def is_acid_schema(schema: pa.Schema) -> bool:
    """True when the top-level fields are the six ACID event fields (names case-insensitive:
    Hive 3.1's compactor wrote them lower-case)."""
    names = tuple(n.lower() for n in schema.names)
    return names == _ACID_LOWER and pa.types.is_struct(schema.field(5).type)


def acid_field_names(schema: pa.Schema) -> dict[str, str]:
    """Canonical ACID name -> the spelling used in this file."""
    return {canon: actual for canon, actual in zip(ACID_FIELD_NAMES, schema.names)}


def check_acid_key_types(schema: pa.Schema, path: str) -> None:
    """Refuse an ACID event file whose key columns are not integers: only a damaged file or a
    foreign writer has them (Hive's readers fail on it with a ClassCastException)."""
    bad = [f"{f.name} {f.type}" for f in list(schema)[:5] if not pa.types.is_integer(f.type)]
    if bad:
        raise CorruptFileError(
            f"ACID file {path} has key columns of the wrong type ({', '.join(bad)}): Hive writes "
            "operation int, originalTransaction bigint, bucket int, rowId bigint, currentTransaction "
            "bigint. The file is damaged or was not written by Hive; remove it from the table "
            "directory or restore it.")


def delete_key_columns(schema: pa.Schema, path: str) -> list[str]:
    """This delete file's spellings of originalTransaction, bucket, rowId, currentTransaction,
    after checking that they are integers."""
    check_acid_key_types(schema, path)
    names = acid_field_names(schema)
    return [names["originalTransaction"], names["bucket"], names["rowId"], names["currentTransaction"]]


def key_arrays(data: Union[pa.Table, pa.RecordBatch], columns: Sequence[str],
               path: str) -> list[np.ndarray]:
    """The named key columns as numpy arrays; a null key means a damaged file (Hive never
    writes one, and numpy would turn it into a float NaN)."""
    out = []
    for c in columns:
        arr = data.column(c)
        if arr.null_count:
            raise CorruptFileError(
                f"ACID file {path} has {arr.null_count} null values in key column {c}; Hive never "
                "writes a null key. The file is damaged; remove it from the table directory or "
                "restore it.")
        out.append(np.asarray(arr.to_numpy()))
    return out


def flush_length(fs: FileSystem, path: str) -> Optional[int]:
    """The committed length of a streaming file from its ``_flush_length`` side file, if any."""
    side = path + FLUSH_LENGTH_SUFFIX
    if not fs.exists(side):
        return None
    data = fs.read_bytes(side)
    if len(data) < 8:
        raise CorruptFileError(f"Side file {side} holds no flush length (size {len(data)} bytes)")
    last = (len(data) // 8 - 1) * 8
    return struct.unpack(">q", data[last:last + 8])[0]


class OrcFile(po.ORCFile):  # type: ignore[misc]  # pyarrow ships no type hints
    """An ORC file that owns its input stream: the stream is closed with it (:meth:`close`, a
    ``with`` block, or when the last reference goes), so no file handle outlives its reader."""

    def __init__(self, source: Any):
        self._source: Any = None
        super().__init__(source)
        self._source = source

    def close(self) -> None:
        source, self._source = self._source, None
        if source is not None and hasattr(source, "close"):
            source.close()

    def __enter__(self) -> "OrcFile":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - never raise from a finalizer
            pass


def open_orc(fs: FileSystem, path: str, length: Optional[int] = None,
             size: Optional[int] = None) -> OrcFile:
    """Open an ORC file; ``length`` limits reading to a committed prefix (streaming deltas);
    ``size`` (known from a listing) saves remote back-ends a status request."""
    try:
        if length is not None:
            with fs.open_input(path) as f:
                data = f.read(length)
            if len(data) < length:
                raise CorruptFileError(
                    f"{path} is shorter ({len(data)} bytes) than its flush length {length}")
            return OrcFile(pa.BufferReader(data))
        stream = fs.open_input(path, size=size)
        try:
            return OrcFile(stream)
        except BaseException:
            stream.close()
            raise
    except (CorruptFileError, StorageError):
        raise
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError, ValueError) as e:
        raise CorruptFileError(
            f"Cannot read ORC file {path}: {e}. The file is corrupt, truncated or not ORC; "
            "remove it from the table directory or restore it.") from e


def sniff_format(fs: FileSystem, path: str) -> str:
    """'orc', 'parquet' or 'unknown' from the file's leading magic bytes."""
    head = fs.read_bytes(path, 4)
    if head.startswith(ORC_MAGIC):
        return "orc"
    if head.startswith(PARQUET_MAGIC):
        return "parquet"
    return "unknown"
