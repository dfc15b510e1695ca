"""Hive's bucket routing for CLUSTERED BY tables (docs/format.md §7), vectorised with numpy.

``bucket = (hash & 0x7FFFFFFF) % numBuckets`` where ``hash = 31*hash + fieldHash`` over the
clustering columns in order (int32 arithmetic, starting at 0, null contributes 0).

Field hashes, per Hive type (Hive 3.1 / 4 ``ObjectInspectorUtils``; bucketing_version 1 is
``hashCode``, which Hive 3+ keeps for tables without ``bucketing_version=2``; version 2 is
``hashCodeMurmur``, Hive's :mod:`Murmur3 <.murmur3>` of the bytes named here):

============  =========================================  ========================================
type          version 1                                  version 2: Murmur3 of
============  =========================================  ========================================
boolean       1 / 0                                      (not hashed: 1 / 0)
tinyint       the value                                  (not hashed: the value)
smallint/int  the value                                  2 / 4 bytes big-endian
bigint        ``(int) (v ^ v >>> 32)``                   8 bytes big-endian
float/double  ``floatToIntBits`` / folded                the bit pattern *converted as a number*
              ``doubleToLongBits`` (NaN canonical)       to float/double, 4 / 8 bytes (sic)
string        ``31*h + b`` over the signed UTF-8 bytes,  the UTF-8 bytes
              from 0
varchar(n)    ``Text.hashCode``: the same from **1**     the UTF-8 bytes
char(n)       ``Text.hashCode`` of the value without     the UTF-8 bytes without trailing spaces
              trailing spaces
binary        ``BytesWritable.hashCode``: from 1         the bytes
date          the epoch day                              the epoch day, 4 bytes big-endian
timestamp     ``TimestampWritable.hashCode`` of the      ``TimestampWritableV2.getBytes()``
              hybrid-calendar seconds (see
              :func:`.bucket_values.legacy_seconds`)
decimal       ``BigDecimal.hashCode`` of the value       ``BigInteger.toByteArray()`` of the
              without trailing zeros                     unscaled value without trailing zeros
============  =========================================  ========================================

char(n) / varchar(n) values longer than n characters are hashed as Hive holds them: cut to n.
Fixed-width types, timestamps and decimals are hashed column-at-once; strings and binaries once
per distinct value.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Optional, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..exceptions import InvalidOptionError
from . import bucket_values as bv
from .murmur3 import murmur3_bytes, murmur3_int16, murmur3_int32, murmur3_int64, murmur3_rows

SUPPORTED = ("boolean, tinyint, smallint, int, bigint, float, double, decimal, string, "
             "varchar, char, binary, date and timestamp")
_SIZED = re.compile(r"^(char|varchar)\s*\(\s*(\d+)\s*\)$")
_FLOAT_NAN, _DOUBLE_NAN = np.int32(0x7FC00000), np.int64(0x7FF8000000000000)


# ------------------------------------------------------------------------------------------------
# Strings and binaries: once per distinct value
# ------------------------------------------------------------------------------------------------


def _java_bytes_hash(data: bytes, start: int) -> int:
    """``r = 31*r + signedByte`` over the bytes from ``start``: 0 is ObjectInspectorUtils' own
    string loop, 1 is Hadoop's ``WritableComparator.hashBytes`` (``Text``/``BytesWritable``)."""
    r = start
    for b in data:
        r = (31 * r + (b - 256 if b >= 128 else b)) & 0xFFFFFFFF
    return r - (1 << 32) if r >= (1 << 31) else r


def _per_distinct(arr: pa.Array, fn: Callable[[bytes], int],
                  to_bytes: Callable[[Any], bytes]) -> np.ndarray:
    """Apply a scalar hash to each distinct value once (nulls get 0, masked by the caller);
    ``to_bytes`` gets each value as ``to_pylist()`` gives it."""
    enc = pc.dictionary_encode(arr)
    table = np.zeros(len(enc.dictionary) + 1, dtype=np.int32)
    for i, v in enumerate(enc.dictionary.to_pylist()):
        table[i] = fn(to_bytes(v))
    idx = enc.indices.fill_null(len(enc.dictionary)).to_numpy(zero_copy_only=False)
    return table[idx]


def _text_hash(arr: pa.Array, kind: str, max_len: Optional[int], version: int) -> np.ndarray:
    is_binary = pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type)
    _expect(arr, is_binary if kind == "binary" else
            pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type), kind)
    if kind == "binary":
        return _per_distinct(arr, murmur3_bytes if version == 2 else lambda b: _java_bytes_hash(b, 1),
                             bytes)

    def to_bytes(v: object) -> bytes:
        s = str(v) if max_len is None else str(v)[:max_len]  # Hive cuts to n code points
        return (s.rstrip(" ") if kind == "char" else s).encode("utf-8")

    if version == 2:
        return _per_distinct(arr, murmur3_bytes, to_bytes)
    start = 0 if kind == "string" else 1
    return _per_distinct(arr, lambda b: _java_bytes_hash(b, start), to_bytes)


# ------------------------------------------------------------------------------------------------
# Column-at-once types
# ------------------------------------------------------------------------------------------------


def _numbers(arr: pa.Array, dtype: type[np.number]) -> np.ndarray:
    return np.asarray(arr.fill_null(0).to_numpy(zero_copy_only=False)).astype(dtype)


def _fold_long(v: np.ndarray) -> np.ndarray:
    """Java ``Long.hashCode``: ``(int)(v ^ (v >>> 32))``."""
    u = v.astype(np.int64).view(np.uint64)
    return ((u ^ (u >> np.uint64(32))) & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.int32)


def _float_hash(arr: pa.Array, double: bool, version: int) -> np.ndarray:
    """``floatToIntBits``/``doubleToLongBits`` (every NaN -> the canonical NaN, -0.0 kept)."""
    ftype, itype, nan = (np.float64, np.int64, _DOUBLE_NAN) if double else \
        (np.float32, np.int32, _FLOAT_NAN)
    v = _numbers(arr, ftype)
    bits = np.where(np.isnan(v), nan, v.view(itype))
    if version == 1:
        return _fold_long(bits) if double else bits
    # Java quirk: putFloat(floatToIntBits(x)) converts the bit pattern as a number
    return murmur3_int64(bits.astype(np.float64).view(np.int64)) if double \
        else murmur3_int32(bits.astype(np.float32).view(np.int32))


def _timestamp_hash(arr: pa.Array, version: int) -> np.ndarray:
    seconds, nanos = bv.timestamp_parts(arr)
    if version == 1:
        return bv.timestamp_v1_hash(seconds, nanos)
    return murmur3_rows(*bv.timestamp_bytes(seconds, nanos))


def _decimal_hash(arr: pa.Array, version: int) -> np.ndarray:
    limbs, neg, scale = bv.decimal_parts(arr)
    if version == 1:
        return bv.decimal_v1_hash(limbs, neg, scale)
    return murmur3_rows(*bv.decimal_bytes(limbs, neg))


def _expect(arr: pa.Array, ok: bool, hive_type: str) -> None:
    if not ok:
        raise InvalidOptionError(
            f"A bucketing column of Hive type {hive_type} holds Arrow {arr.type} values; "
            "write data of the column's type")


def _typed_hash(arr: pa.Array, t: str, version: int) -> np.ndarray:
    """Hash of every row of a non-text column (rows that are null get an arbitrary value)."""
    if t in ("boolean", "tinyint"):
        return _numbers(arr.cast(pa.int8()) if t == "boolean" else arr, np.int32)
    if t in ("smallint", "int", "integer", "date"):
        if t == "date":
            _expect(arr, pa.types.is_date(arr.type), t)
            arr = arr.cast(pa.date32()).cast(pa.int32())
        v = _numbers(arr, np.int32)
        if version == 1:
            return v
        return murmur3_int16(v) if t == "smallint" else murmur3_int32(v)
    if t == "bigint":
        v = _numbers(arr, np.int64)
        return _fold_long(v) if version == 1 else murmur3_int64(v)
    if t in ("float", "double"):
        return _float_hash(arr, t == "double", version)
    if t == "timestamp":
        _expect(arr, pa.types.is_timestamp(arr.type), t)
        return _timestamp_hash(arr, version)
    if t == "decimal" or t.startswith("decimal("):
        _expect(arr, pa.types.is_decimal(arr.type), t)
        return _decimal_hash(arr, version)
    raise InvalidOptionError(f"Cannot bucket by a column of Hive type {t}: supported are {SUPPORTED}")


def field_hash(arr: pa.Array, hive_type: str, version: int) -> np.ndarray:
    """Per-row hash of one clustering column (int32; 0 for nulls)."""
    t = hive_type.strip().lower()
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    sized = _SIZED.match(t)
    if t in ("string", "binary") or sized:
        h = _text_hash(arr, sized.group(1) if sized else t, int(sized.group(2)) if sized else None,
                       version)
    else:
        h = _typed_hash(arr, t, version)
    if arr.null_count:
        h = np.where(arr.is_valid().to_numpy(zero_copy_only=False), h, 0)
    return np.asarray(h, dtype=np.int32)


def bucket_hash(columns: Sequence[pa.Array], hive_types: Sequence[str], version: int,
                names: Optional[Sequence[str]] = None) -> np.ndarray:
    """Combined hash ``31*h + fieldHash`` over the clustering columns (int32 per row).
    ``names`` (the columns' names) only improve error messages."""
    if version not in (1, 2):
        raise InvalidOptionError(f"bucketingVersion must be 1 or 2, not {version}")
    if not columns:
        raise InvalidOptionError("Bucketing needs at least one column")
    h = np.zeros(len(columns[0]), dtype=np.int32)
    with np.errstate(over="ignore"):
        for i, (arr, t) in enumerate(zip(columns, hive_types)):
            try:
                f = field_hash(arr, t, version)
            except InvalidOptionError as e:
                if names is None:
                    raise
                raise InvalidOptionError(f"Bucketing column '{names[i]}': {e}") from e
            h = (h * np.int32(31) + f).astype(np.int32)
    return h


def bucket_ids(columns: Sequence[pa.Array], hive_types: Sequence[str], num_buckets: int,
               version: int = 2, names: Optional[Sequence[str]] = None) -> np.ndarray:
    """Hive's bucket number of every row: ``(hash & 0x7FFFFFFF) % numBuckets``."""
    if num_buckets <= 0:
        raise InvalidOptionError(f"numBuckets must be positive, not {num_buckets}")
    h = bucket_hash(columns, hive_types, version, names)
    return ((h.astype(np.int64) & 0x7FFFFFFF) % num_buckets).astype(np.int32)
