"""An order-insensitive fingerprint of a table's rows, vectorised (numpy over Arrow buffers).

Each value gets a 64-bit hash (fixed-width values by their bits, strings and binaries by a
polynomial over their bytes, lists and maps over their elements' hashes in order, structs over
their fields), a row the mix of its columns' hashes, and a set of rows the count and the sums of
the rows' hashes (two 32-bit halves summed in 64 bits: no overflow below 2**32 rows). Two tables
with the same rows in any order have the same fingerprint; a changed, missing or duplicated row
changes it (up to the 2**-64 chance of a collision).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_P = np.uint64(0x100000001B3)  # the polynomial's base (odd: invertible modulo 2**64)
_NULL = np.uint64(0x9E3779B97F4A7C15)
_EMPTY = np.uint64(0x2545F4914F6CDD1D)
_M = 1 << 64


def mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: every input bit affects every output bit."""
    x = np.asarray(x, dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def _powers(n: int, base: int) -> np.ndarray:
    """base**0 .. base**(n-1) modulo 2**64."""
    out = np.empty(n, dtype=np.uint64)
    if n:
        out[0] = 1
        if n > 1:
            with np.errstate(over="ignore"):
                out[1:] = np.full(n - 1, base, dtype=np.uint64).cumprod()
    return out


def _segments(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per segment [offsets[i], offsets[i+1]): sum of values[j] * P**(j - start), mod 2**64."""
    starts, ends = offsets[:-1], offsets[1:]
    lo = int(starts.min()) if len(starts) else 0
    hi = int(ends.max()) if len(ends) else 0
    vals = values[lo:hi].astype(np.uint64)
    pw = _powers(len(vals), int(_P))
    with np.errstate(over="ignore"):
        cum = np.concatenate(([np.uint64(0)], np.cumsum(vals * pw, dtype=np.uint64)))
        total = cum[ends - lo] - cum[starts - lo]
        inv = pow(int(_P), -1, _M)
        return total * _powers(hi - lo + 1, inv)[starts - lo]


def _nulls(arr: pa.Array) -> np.ndarray:
    return arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else \
        np.zeros(len(arr), dtype=bool)


def _fixed(arr: pa.Array) -> np.ndarray:
    t = arr.type
    if pa.types.is_boolean(t):
        return pc.fill_null(arr, False).cast(pa.uint8()).to_numpy().astype(np.uint64)
    if pa.types.is_decimal(t):
        arr = arr.cast(pa.decimal128(38, t.scale)) if t.bit_width != 128 else arr
        raw = np.frombuffer(arr.buffers()[1], dtype=np.uint64)
        pairs = raw[2 * arr.offset: 2 * (arr.offset + len(arr))].reshape(-1, 2)
        with np.errstate(over="ignore"):
            return pairs[:, 0] ^ mix(pairs[:, 1])
    if pa.types.is_floating(t):
        v = pc.fill_null(arr, 0).to_numpy().astype(np.float64)
        v = np.where(np.isnan(v), np.float64("nan"), v)
        return v.view(np.uint64)
    if pa.types.is_temporal(t):
        arr = arr.cast(pa.int64())
    return pc.fill_null(arr, 0).to_numpy().astype(np.int64).view(np.uint64)


def value_hashes(arr: pa.Array) -> np.ndarray:
    """One 64-bit hash per value of ``arr`` (nested types included)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = arr.type
    if pa.types.is_dictionary(t):
        return value_hashes(arr.dictionary_decode())
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        arr, t = arr.cast(pa.string()), pa.string()
    if pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        arr, t = arr.cast(pa.binary()), pa.binary()
    if pa.types.is_large_list(t):
        arr, t = arr.cast(pa.list_(t.value_field)), pa.list_(t.value_field)
    nulls = _nulls(arr)
    if pa.types.is_string(t) or pa.types.is_binary(t):
        offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32)[arr.offset: arr.offset + len(arr) + 1]
        data = np.frombuffer(arr.buffers()[2], dtype=np.uint8) if arr.buffers()[2] else \
            np.zeros(0, dtype=np.uint8)
        lengths = np.diff(offsets).astype(np.uint64)
        with np.errstate(over="ignore"):
            h = mix(_segments(data.astype(np.uint64) + np.uint64(1), offsets.astype(np.int64))
                    ^ (lengths * _EMPTY))
    elif pa.types.is_map(t) or pa.types.is_list(t):
        offsets = arr.offsets.to_numpy().astype(np.int64)
        if pa.types.is_map(t):
            with np.errstate(over="ignore"):
                elem = mix(value_hashes(arr.keys) * _P) ^ value_hashes(arr.items)
        else:
            elem = value_hashes(arr.values)
        lengths = np.diff(offsets).astype(np.uint64)
        with np.errstate(over="ignore"):
            h = mix(_segments(elem, offsets) ^ (lengths * _EMPTY))
    elif pa.types.is_struct(t):
        h = np.full(len(arr), _EMPTY, dtype=np.uint64)
        with np.errstate(over="ignore"):
            for i, child in enumerate(arr.flatten()):
                h = h * _P + mix(value_hashes(child) + np.uint64(i + 1))
        h = mix(h)
    else:
        with np.errstate(over="ignore"):
            h = mix(_fixed(arr) + np.uint64(0x632BE59BD9B4E019))
    return np.where(nulls, _NULL, h)


def row_hashes(batch: pa.RecordBatch | pa.Table) -> np.ndarray:
    """One 64-bit hash per row, over every column in order."""
    h = np.zeros(batch.num_rows, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for i, col in enumerate(batch.columns):
            h = h * _P + mix(value_hashes(col) + np.uint64(i + 7))
    return mix(h)
