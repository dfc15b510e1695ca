"""Hive's bucket routing for CLUSTERED BY tables (docs/format.md §7), vectorised with numpy.

``bucket = (hash & 0x7FFFFFFF) % numBuckets`` where ``hash = 31*hash + fieldHash`` over the
clustering columns in order (int32 arithmetic, starting at 0, null contributes 0).

* bucketing_version 2 (Hive 3+ default): fieldHash = Hive's ``Murmur3.hash32`` (x86_32, seed 104729)
  of the value's bytes, with Hive's quirk of sign-extending tail bytes >= 0x80.
* bucketing_version 1: Java-style hash codes (``ObjectInspectorUtils.hashCode``).

Fixed-width types are hashed column-at-once; strings and binaries once per distinct value.
Supported: boolean, tinyint, smallint, int, bigint, float, double, string/varchar/char, binary,
date. Other types (decimal, timestamp, nested) raise :class:`InvalidOptionError`.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..exceptions import InvalidOptionError

SEED = 104729
_C1, _C2 = np.uint32(0xCC9E2D51), np.uint32(0x1B873593)
_M, _N = np.uint32(5), np.uint32(0xE6546B64)

# ------------------------------------------------------------------------------------------------
# Murmur3 x86_32, Hive flavour
# ------------------------------------------------------------------------------------------------


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def _mix_k(k: np.ndarray) -> np.ndarray:
    k = k * _C1
    k = _rotl(k, 15)
    return k * _C2


def _body(h: np.ndarray, k: np.ndarray) -> np.ndarray:
    h = h ^ _mix_k(k)
    h = _rotl(h, 13)
    return h * _M + _N


def _fmix(h: np.ndarray, length: int) -> np.ndarray:
    h = h ^ np.uint32(length)
    h = h ^ (h >> np.uint32(16))
    h = h * np.uint32(0x85EBCA6B)
    h = h ^ (h >> np.uint32(13))
    h = h * np.uint32(0xC2B2AE35)
    return h ^ (h >> np.uint32(16))


def _le_words(be_values: np.ndarray) -> np.ndarray:
    """A 4-byte big-endian value read as Murmur's little-endian block = byte-swapped value."""
    return be_values.astype(np.uint32).byteswap()


def murmur3_int32(values: np.ndarray) -> np.ndarray:
    """Hive's Murmur3 of 4-byte big-endian ints (int, date), as int32."""
    with np.errstate(over="ignore"):
        h = np.full(len(values), SEED, dtype=np.uint32)
        h = _body(h, _le_words(values.astype(np.int32).view(np.uint32)))
        return _fmix(h, 4).view(np.int32)


def murmur3_int64(values: np.ndarray) -> np.ndarray:
    """Hive's Murmur3 of 8-byte big-endian longs, as int32."""
    v = values.astype(np.int64).view(np.uint64)
    hi = (v >> np.uint64(32)).astype(np.uint32)
    lo = (v & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    with np.errstate(over="ignore"):
        h = np.full(len(values), SEED, dtype=np.uint32)
        h = _body(h, _le_words(hi))
        h = _body(h, _le_words(lo))
        return _fmix(h, 8).view(np.int32)


def murmur3_int16(values: np.ndarray) -> np.ndarray:
    """Hive's Murmur3 of 2-byte big-endian shorts: a 2-byte tail, sign-extended as Java does."""
    v = values.astype(np.int16).view(np.uint16)
    first = (v >> np.uint16(8)).astype(np.uint8).view(np.int8).astype(np.int32)
    second = (v & np.uint16(0xFF)).astype(np.uint8).view(np.int8).astype(np.int32)
    k = ((second << 8) ^ first).view(np.uint32)
    with np.errstate(over="ignore"):
        h = np.full(len(values), SEED, dtype=np.uint32) ^ _mix_k(k)
        return _fmix(h, 2).view(np.int32)


def murmur3_bytes(data: bytes, seed: int = SEED) -> int:
    """Hive's ``Murmur3.hash32(byte[])`` of one value, as a signed int32."""
    m32 = 0xFFFFFFFF

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & m32

    def mix(k: int) -> int:
        k = (k * 0xCC9E2D51) & m32
        k = rotl(k, 15)
        return (k * 0x1B873593) & m32

    h = seed & m32
    n = len(data)
    nblocks = n // 4
    for i in range(nblocks):
        k = int.from_bytes(data[4 * i:4 * i + 4], "little")
        h ^= mix(k)
        h = rotl(h, 13)
        h = (h * 5 + 0xE6546B64) & m32
    tail = data[4 * nblocks:]
    if tail:
        def sbyte(b: int) -> int:  # Java's signed byte, sign-extended to 32 bits
            return (b - 256 if b >= 128 else b) & m32
        k = 0
        if len(tail) >= 3:
            k ^= (sbyte(tail[2]) << 16) & m32
        if len(tail) >= 2:
            k ^= (sbyte(tail[1]) << 8) & m32
        k ^= sbyte(tail[0])
        h ^= mix(k)
    h ^= n
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & m32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & m32
    h ^= h >> 16
    return h - (1 << 32) if h >= (1 << 31) else h


# ------------------------------------------------------------------------------------------------
# Per-type field hashes
# ------------------------------------------------------------------------------------------------


def _java_string_hash(data: bytes) -> int:
    """v1 string hash: ``r = 31*r + signedByte`` over the UTF-8 bytes, from 0."""
    r = 0
    for b in data:
        r = (31 * r + (b - 256 if b >= 128 else b)) & 0xFFFFFFFF
    return r - (1 << 32) if r >= (1 << 31) else r


def _per_distinct(arr: pa.Array, fn, strip_trailing_spaces: bool = False) -> np.ndarray:
    """Apply a scalar hash to each distinct value once; nulls hash to 0."""
    enc = pc.dictionary_encode(arr).combine_chunks() if isinstance(arr, pa.ChunkedArray) \
        else pc.dictionary_encode(arr)
    dictionary = enc.dictionary.to_pylist()
    table = np.empty(len(dictionary) + 1, dtype=np.int32)
    for i, v in enumerate(dictionary):
        if isinstance(v, str):
            v = (v.rstrip(" ") if strip_trailing_spaces else v).encode("utf-8")
        table[i] = fn(v)
    table[-1] = 0
    idx = enc.indices.fill_null(len(dictionary)).to_numpy(zero_copy_only=False)
    return table[idx]


def _numbers(arr: pa.Array, dtype) -> tuple[np.ndarray, np.ndarray]:
    valid = ~np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    values = np.asarray(arr.fill_null(0).to_numpy(zero_copy_only=False)).astype(dtype)
    return values, valid


def field_hash(arr: pa.Array, hive_type: str, version: int) -> np.ndarray:
    """Per-row hash of one clustering column (int32; 0 for nulls)."""
    t = hive_type.strip().lower()
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if t.startswith(("string", "varchar", "char")) or t == "binary":
        strip = t.startswith("char")
        fn = murmur3_bytes if version == 2 else _java_string_hash
        return _per_distinct(arr, fn, strip)
    if t == "boolean":
        v, valid = _numbers(arr.cast(pa.int8()), np.int32)
        return np.where(valid, v, 0).astype(np.int32)
    if t == "tinyint":
        v, valid = _numbers(arr, np.int32)
        return np.where(valid, v, 0).astype(np.int32)
    if t == "date":
        arr = arr.cast(pa.int32())
        t = "int"
    if t in ("int", "integer", "smallint"):
        v, valid = _numbers(arr, np.int32)
        if version == 1:
            h = v
        else:
            h = murmur3_int16(v) if t == "smallint" else murmur3_int32(v)
        return np.where(valid, h, 0).astype(np.int32)
    if t == "bigint":
        v, valid = _numbers(arr, np.int64)
        if version == 1:
            h = _fold_long(v)
        else:
            h = murmur3_int64(v)
        return np.where(valid, h, 0).astype(np.int32)
    if t == "float":
        v, valid = _numbers(arr, np.float32)
        bits = v.view(np.int32)
        if version == 1:
            h = bits
        else:  # Java quirk: putFloat(floatToIntBits(x)) converts the bit pattern as a number
            h = murmur3_int32(bits.astype(np.float32).view(np.int32))
        return np.where(valid, h, 0).astype(np.int32)
    if t == "double":
        v, valid = _numbers(arr, np.float64)
        bits = v.view(np.int64)
        if version == 1:
            h = _fold_long(bits)
        else:
            h = murmur3_int64(bits.astype(np.float64).view(np.int64))
        return np.where(valid, h, 0).astype(np.int32)
    raise InvalidOptionError(
        f"Cannot bucket by a column of Hive type {hive_type}: supported are boolean, tinyint, "
        "smallint, int, bigint, float, double, string, varchar, char, binary and date")


def _fold_long(v: np.ndarray) -> np.ndarray:
    """Java ``Long.hashCode``: ``(int)(v ^ (v >>> 32))``."""
    u = v.astype(np.int64).view(np.uint64)
    return ((u ^ (u >> np.uint64(32))) & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.int32)


def bucket_hash(columns: Sequence[pa.Array], hive_types: Sequence[str], version: int) -> np.ndarray:
    """Combined hash ``31*h + fieldHash`` over the clustering columns (int32 per row)."""
    if version not in (1, 2):
        raise InvalidOptionError(f"bucketingVersion must be 1 or 2, not {version}")
    if not columns:
        raise InvalidOptionError("Bucketing needs at least one column")
    h = np.zeros(len(columns[0]), dtype=np.int32)
    with np.errstate(over="ignore"):
        for arr, t in zip(columns, hive_types):
            h = (h.astype(np.int32) * np.int32(31) + field_hash(arr, t, version)).astype(np.int32)
    return h


def bucket_ids(columns: Sequence[pa.Array], hive_types: Sequence[str], num_buckets: int,
               version: int = 2) -> np.ndarray:
    """Hive's bucket number of every row: ``(hash & 0x7FFFFFFF) % numBuckets``."""
    if num_buckets <= 0:
        raise InvalidOptionError(f"numBuckets must be positive, not {num_buckets}")
    h = bucket_hash(columns, hive_types, version)
    return ((h.astype(np.int64) & 0x7FFFFFFF) % num_buckets).astype(np.int32)
