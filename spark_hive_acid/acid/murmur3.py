"""Hive's ``org.apache.hive.common.util.Murmur3.hash32`` (x86_32, seed 104729), vectorised with numpy.

Hive's tail handling differs from the reference MurmurHash3: the 1-3 tail bytes are Java
``byte``s, sign-extended before they are shifted, so it matches the standard hash only when
``len % 4 == 0`` or the tail bytes are below 0x80 (docs/format.md §7).

:func:`murmur3_rows` hashes many short byte strings at once (one row of a ``uint8`` matrix each,
with its own length); the fixed-width helpers hash Java's big-endian ``ByteBuffer.put*`` bytes.
"""
from __future__ import annotations

import numpy as np

SEED = 104729
_C1, _C2 = np.uint32(0xCC9E2D51), np.uint32(0x1B873593)
_M, _N = np.uint32(5), np.uint32(0xE6546B64)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def _mix_k(k: np.ndarray) -> np.ndarray:
    return _rotl(k * _C1, 15) * _C2


def _fmix(h: np.ndarray, length: np.ndarray) -> np.ndarray:
    h = h ^ length
    h = h ^ (h >> np.uint32(16))
    h = h * np.uint32(0x85EBCA6B)
    h = h ^ (h >> np.uint32(13))
    h = h * np.uint32(0xC2B2AE35)
    return h ^ (h >> np.uint32(16))


def murmur3_rows(data: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``Murmur3.hash32`` of the first ``lengths[i]`` bytes of row i of ``data`` (uint8, n x width).

    Returns int32 per row. Bytes past a row's length are ignored.
    """
    data = np.asarray(data, dtype=np.uint8)
    n, width = data.shape
    lengths = np.asarray(lengths, dtype=np.int64)
    padded = np.zeros((n, width // 4 * 4 + 4), dtype=np.uint8)  # room for a full tail read
    padded[:, :width] = data
    words = padded.view("<u4")
    nblocks = lengths >> 2
    h = np.full(n, SEED, dtype=np.uint32)
    with np.errstate(over="ignore"):
        for b in range(int(nblocks.max(initial=0))):
            mixed = _rotl(h ^ _mix_k(words[:, b]), 13) * _M + _N
            h = np.where(nblocks > b, mixed, h)
        tail = lengths & 3
        if tail.any():
            rows = np.arange(n)
            start = nblocks << 2

            def signed(j: int) -> np.ndarray:  # Java's byte, sign-extended to int
                return padded[rows, start + j].view(np.int8).astype(np.int32)

            k = (np.where(tail >= 3, signed(2) << 16, 0) ^ np.where(tail >= 2, signed(1) << 8, 0)
                 ^ signed(0)).astype(np.int32).view(np.uint32)
            h = np.where(tail > 0, h ^ _mix_k(k), h)
        return _fmix(h, lengths.astype(np.uint32)).view(np.int32)


def _fixed(values: np.ndarray, big_endian: str) -> np.ndarray:
    """Murmur3 of each value's Java big-endian bytes (``ByteBuffer.putShort/putInt/putLong``)."""
    raw = np.ascontiguousarray(np.asarray(values).astype(big_endian))
    data = raw.view(np.uint8).reshape(len(raw), raw.dtype.itemsize)
    return murmur3_rows(data, np.full(len(raw), raw.dtype.itemsize))


def murmur3_int16(values: np.ndarray) -> np.ndarray:
    """Hive's Murmur3 of 2-byte big-endian shorts, as int32."""
    return _fixed(values, ">i2")


def murmur3_int32(values: np.ndarray) -> np.ndarray:
    """Hive's Murmur3 of 4-byte big-endian ints (int, date), as int32."""
    return _fixed(values, ">i4")


def murmur3_int64(values: np.ndarray) -> np.ndarray:
    """Hive's Murmur3 of 8-byte big-endian longs, as int32."""
    return _fixed(values, ">i8")


def murmur3_bytes(data: bytes, seed: int = SEED) -> int:
    """Hive's ``Murmur3.hash32(byte[])`` of one value, as a signed int32 (for per-value use)."""
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
