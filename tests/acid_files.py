"""Hand-made Hive ACID table files for reader tests (hive-acid-format.md §2, §5, §9).

Everything here is written with pyorc / pyarrow.parquet directly, never with the project's own
writer, so the reader is tested against files laid out the way Hive lays them out:

- :func:`write_acid_file`: an ACID event file (``bucket_N``) with the exact event schema and the
  footer user metadata ``hive.acid.key.index`` / ``hive.acid.stats`` / ``hive.acid.version``;
- :func:`write_orc_file`: a plain ORC file ("original" files, raw LOAD DATA files, MM tables);
- :func:`write_parquet_file`: a Parquet file (insert-only tables);
- :func:`write_acid_version_file`, :func:`write_flush_length`, :func:`write_metadata_acid`:
  the per-directory side files.

Event tuples are ``(operation, originalTransaction, bucket, rowId, currentTransaction, row)``;
:func:`inserts` and :func:`deletes` build them. :func:`bp` is BucketCodec V1.
"""
from __future__ import annotations

import io
import json
import os
import struct
from pathlib import Path
from typing import Iterable, Optional, Sequence, Union

import pyorc

PathLike = Union[str, "os.PathLike[str]"]

INSERT = 0
UPDATE = 1  # legacy, never written by ACID v2
DELETE = 2

ACID_FIELDS = ("operation", "originalTransaction", "bucket", "rowId", "currentTransaction", "row")
ACID_FIELD_TYPES = ("int", "bigint", "int", "bigint", "bigint")

LONG_MAX = 9223372036854775807
ROW_SCHEMA = "struct<a:int,b:string>"

Event = tuple[int, int, int, int, int, Optional[tuple]]


# --- names and codes ------------------------------------------------------------------------------
def bp(writer_id: int, statement_id: int = 0) -> int:
    """BucketCodec V1 bucket property: ``(1<<29) | (N<<16) | S`` (spec §5.3)."""
    return (1 << 29) | (writer_id << 16) | statement_id


def base_name(write_id: int, visibility_txn: Optional[int] = None) -> str:
    return f"base_{write_id:07d}" + (f"_v{visibility_txn:07d}" if visibility_txn else "")


def delta_name(lo: int, hi: int, stmt: Optional[int] = None, visibility_txn: Optional[int] = None,
               delete: bool = False) -> str:
    name = ("delete_delta_" if delete else "delta_") + f"{lo:07d}_{hi:07d}"
    if stmt is not None:
        name += f"_{stmt:04d}"
    if visibility_txn:
        name += f"_v{visibility_txn:07d}"
    return name


def bucket_name(n: int) -> str:
    return f"bucket_{n:05d}"


def write_ids(hwm: int, open_ids: Sequence[int] = (), aborted: Sequence[int] = (),
              table: str = "db.t") -> str:
    """A ValidReaderWriteIdList string as Hive's ``writeToString`` prints it (spec §3.1)."""
    min_open = min(open_ids) if open_ids else LONG_MAX
    return (f"{table}:{hwm}:{min_open}:{','.join(map(str, sorted(open_ids)))}:"
            f"{','.join(map(str, sorted(aborted)))}")


def txns(hwm: int, open_ids: Sequence[int] = (), aborted: Sequence[int] = ()) -> str:
    """A ValidReadTxnList string."""
    min_open = min(open_ids) if open_ids else LONG_MAX
    return (f"{hwm}:{min_open}:{','.join(map(str, sorted(open_ids)))}:"
            f"{','.join(map(str, sorted(aborted)))}")


# --- events -----------------------------------------------------------------------------------------
def inserts(write_id: int, bucket_prop: int, rows: Iterable[tuple], first_row_id: int = 0,
            current: Optional[int] = None) -> list[Event]:
    """Insert events ``(0, W, bp, rowId.., W, row)`` with consecutive row ids."""
    cur = write_id if current is None else current
    return [(INSERT, write_id, bucket_prop, first_row_id + i, cur, tuple(r))
            for i, r in enumerate(rows)]


def deletes(current: int, keys: Iterable[tuple[int, int, int]]) -> list[Event]:
    """Delete events ``(2, owid, bp, rowId, current, None)``, sorted by key as Hive writes them."""
    return [(DELETE, o, b, r, current, None) for o, b, r in sorted(keys)]


def acid_schema(row_schema: str = ROW_SCHEMA, lowercase_names: bool = False) -> str:
    names = [n.lower() if lowercase_names else n for n in ACID_FIELDS]
    parts = [f"{n}:{t}" for n, t in zip(names, ACID_FIELD_TYPES)]
    parts.append(f"{names[5]}:{row_schema}")
    return "struct<" + ",".join(parts) + ">"


# --- files ------------------------------------------------------------------------------------------
def _prepare(path: PathLike) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    return p


def _writer_kwargs(stripe_size: Optional[int], batch_size: Optional[int]) -> dict:
    kw: dict = {}
    if stripe_size is not None:
        # pyorc checks the stripe size after each batch: small batches give many stripes
        kw.update(stripe_size=stripe_size, batch_size=batch_size or 10,
                  memory_block_size=1024, compression_block_size=1024)
    elif batch_size is not None:
        kw["batch_size"] = batch_size
    return kw


def _orc_bytes(schema: str, rows: Sequence[tuple], metadata: Optional[dict[str, bytes]],
               kw: dict) -> bytes:
    buf = io.BytesIO()
    w = pyorc.Writer(buf, schema, **kw)
    for r in rows:
        w.write(r)
    if metadata:
        w.set_user_metadata(**metadata)
    w.close()
    return buf.getvalue()


def stripe_row_counts(data: bytes) -> list[int]:
    r = pyorc.Reader(io.BytesIO(data))
    return [len(r.read_stripe(i)) for i in range(r.num_of_stripes)]


def write_acid_file(path: PathLike, row_schema: str = ROW_SCHEMA, events: Sequence[Event] = (),
                    user_metadata: bool = True, lowercase_names: bool = False,
                    stripe_size: Optional[int] = None, batch_size: Optional[int] = None,
                    acid_version_file: bool = True) -> Path:
    """Write an ACID event file (e.g. ``.../delta_0000001_0000001_0000/bucket_00000``).

    ``events`` are ``(op, owid, bucket_prop, row_id, cur_wid, row_tuple_or_None)``, written in the
    given order. With ``user_metadata`` the footer carries Hive's key index (one entry per stripe:
    the key of the stripe's last event), the acid stats and version. ``acid_version_file`` also
    writes ``_orc_acid_version`` next to the file, as every Hive ACID writer does.
    """
    p = _prepare(path)
    schema = acid_schema(row_schema, lowercase_names)
    rows = [tuple(e) for e in events]
    kw = _writer_kwargs(stripe_size, batch_size)
    metadata = None
    if user_metadata:
        # first pass to learn the stripe boundaries (the writer is deterministic)
        counts = stripe_row_counts(_orc_bytes(schema, rows, None, kw)) if rows else []
        index, end = [], 0
        for n in counts:
            end += n
            last = rows[end - 1]
            index.append(f"{last[1]},{last[2]},{last[3]};")
        ops = [e[0] for e in rows]
        metadata = {
            "hive.acid.key.index": "".join(index).encode(),
            "hive.acid.stats": f"{ops.count(INSERT)},{ops.count(UPDATE)},{ops.count(DELETE)}".encode(),
            "hive.acid.version": b"2",
        }
    p.write_bytes(_orc_bytes(schema, rows, metadata, kw))
    if acid_version_file:
        write_acid_version_file(p.parent)
    return p


def write_orc_file(path: PathLike, schema: str = ROW_SCHEMA, rows: Sequence[tuple] = (),
                   stripe_size: Optional[int] = None, batch_size: Optional[int] = None) -> Path:
    """A plain (non-ACID) ORC file: originals, raw LOAD DATA files, insert-only table files."""
    p = _prepare(path)
    p.write_bytes(_orc_bytes(schema, [tuple(r) for r in rows], None,
                             _writer_kwargs(stripe_size, batch_size)))
    return p


def write_parquet_file(path: PathLike, columns: dict[str, list], types: Optional[dict] = None) -> Path:
    """A Parquet file (insert-only tables may use any format)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = _prepare(path)
    types = types or {}
    table = pa.table({k: pa.array(v, types.get(k)) for k, v in columns.items()})
    pq.write_table(table, p)
    return p


def write_acid_version_file(directory: PathLike) -> Path:
    """``_orc_acid_version``: the single ASCII byte ``2``, no newline."""
    p = Path(directory) / "_orc_acid_version"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(b"2")
    return p


def write_flush_length(bucket_path: PathLike, lengths: Sequence[int]) -> Path:
    """``bucket_N_flush_length``: 8-byte big-endian longs, the last one is the committed length."""
    p = Path(str(bucket_path) + "_flush_length")
    p.write_bytes(b"".join(struct.pack(">q", n) for n in lengths))
    return p


def write_metadata_acid(directory: PathLike, data_format: str = "compacted",
                        version: str = "0") -> Path:
    """``_metadata_acid`` JSON (Hive 3 compactor marker, 4.x truncate marker)."""
    p = Path(directory) / "_metadata_acid"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({"thisFileVersion": version, "dataFormat": data_format}))
    return p


def write_text_file(path: PathLike, text: str) -> Path:
    p = _prepare(path)
    p.write_text(text)
    return p
