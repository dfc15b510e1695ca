"""The Hive value encodings that bucket hashes are computed over, for whole Arrow arrays.

Timestamps and decimals are not hashed from their plain value: Hive hashes its own
writables (sources cited per function; Hive 3.1 / 4 ``ObjectInspectorUtils.hashCode`` for
bucketing_version 1 and ``hashCodeMurmur`` for version 2). Everything here is numpy over the
whole array; nothing loops per row in Python.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_GREGORIAN_START = -141427  # 1582-10-15, the first day java.util.GregorianCalendar is Gregorian
_UNIX_EPOCH_JDN = 2440588  # Julian day number of 1970-01-01
_M32 = np.uint64(0xFFFFFFFF)

# ------------------------------------------------------------------------------------------------
# Timestamps
# ------------------------------------------------------------------------------------------------


def timestamp_parts(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(epoch seconds, nanos) of a timestamp array's wall clock, floor-divided like Hive 3's
    ``Timestamp.toEpochSecond``/``getNanos`` (nanos in 0..999,999,999). Nulls give 0."""
    per_s = _PER_SECOND[arr.type.unit]
    v = np.asarray(pc.cast(arr.fill_null(0), pa.int64()).to_numpy(zero_copy_only=False), np.int64)
    seconds = np.floor_divide(v, per_s)
    nanos = (v - seconds * per_s) * (1_000_000_000 // per_s)
    return seconds, nanos


def _julian_epoch_day(days: np.ndarray) -> np.ndarray:
    """Epoch day that the Julian calendar gives the proleptic-Gregorian date ``days`` names."""
    d64 = days.astype("datetime64[D]")
    months = d64.astype("datetime64[M]")
    y = months.astype(np.int64) // 12 + 1970
    m = months.astype(np.int64) % 12 + 1
    d = (d64 - months.astype("datetime64[D]")).astype(np.int64) + 1
    a = (14 - m) // 12
    yy = y + 4800 - a
    mm = m + 12 * a - 3
    jdn = d + (153 * mm + 2) // 5 + 365 * yy + yy // 4 - 32083
    return jdn - _UNIX_EPOCH_JDN


def legacy_seconds(seconds: np.ndarray) -> np.ndarray:
    """Seconds of ``java.sql.Timestamp.valueOf(wall clock)`` in a UTC JVM.

    java.sql types use the hybrid Julian/Gregorian calendar: a wall clock before 1582-10-15 is
    read as a Julian date (one in the 1582-10-05..14 gap rolls forward, as lenient
    GregorianCalendar does), so it lands some days away from the proleptic value.
    """
    days = np.floor_divide(seconds, 86400)
    old = days < _GREGORIAN_START
    if not old.any():
        return seconds
    shift = np.zeros_like(seconds)
    shift[old] = (_julian_epoch_day(days[old]) - days[old]) * 86400
    return seconds + shift


def timestamp_v1_hash(seconds: np.ndarray, nanos: np.ndarray) -> np.ndarray:
    """``TimestampWritable.hashCode``: ``s = seconds << 30 | nanos; (int) (s >>> 32 ^ s)``.

    Hive 3.1 / 4 compute it on ``new TimestampWritable(java.sql.Timestamp.valueOf(ts.toString()))``
    (ObjectInspectorUtils.hashCode, "for backwards compatibility"), i.e. on the legacy seconds.
    """
    s = (legacy_seconds(seconds).view(np.uint64) << np.uint64(30)) | nanos.astype(np.uint64)
    return ((s >> np.uint64(32)) ^ s).astype(np.uint32).view(np.int32)


def _vlong(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hadoop's ``WritableUtils.writeVLong`` (= ``LazyBinaryUtils.writeVLongToByteArray``) bytes:
    one byte for -112..127, else a length/sign byte and the big-endian magnitude (``~v`` if
    negative). Returns (bytes n x 9, lengths)."""
    values = values.astype(np.int64)
    small = (values >= -112) & (values <= 127)
    neg = values < 0
    mag = np.where(neg, ~values, values).view(np.uint64)
    nbytes = sum((mag >= np.uint64(1 << (8 * k))).astype(np.int64) for k in range(8))
    out = np.zeros((len(values), 9), dtype=np.uint8)
    prefix = np.where(neg, -120 - nbytes, -112 - nbytes)
    out[:, 0] = np.where(small, values, prefix).astype(np.uint8)
    be = mag.astype(">u8").view(np.uint8).reshape(len(values), 8)
    out[:, 1:] = left_align(be, np.where(small, 8, 8 - nbytes))
    return out, np.where(small, 1, 1 + nbytes)


def timestamp_bytes(seconds: np.ndarray, nanos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``TimestampWritableV2.getBytes()`` (Hive 3.1 / 4; the same layout as Hive 2's
    ``TimestampWritable``): what bucketing_version 2 hashes. Returns (bytes n x 22, lengths).

    4 bytes big-endian: the low 31 bits of the seconds, top bit set when a VInt follows; the
    VInt: the 9 nanosecond digits reversed (0.1 s -> 1), ``-reversed - 1`` when the seconds do
    not fit 0..2^31-1, in which case a second VLong holds ``seconds >> 31``.
    """
    n = len(seconds)
    rev = np.zeros(n, dtype=np.int32)
    rest = nanos.astype(np.int32)
    for _ in range(9):
        digit = rest % 10
        rev = rev * 10 + digit
        rest = (rest - digit) // 10
    has_second = (seconds < 0) | (seconds > 0x7FFFFFFF)
    has_first = has_second | (rev != 0)
    first = (seconds & 0x7FFFFFFF) | np.where(has_first, 0x80000000, 0)
    out = np.zeros((n, 22), dtype=np.uint8)
    out[:, :4] = first.astype(">u4").view(np.uint8).reshape(n, 4)
    v1, len1 = _vlong(np.where(has_second, -rev.astype(np.int64) - 1, rev))
    len1 = np.where(has_first, len1, 0)
    out[:, 4:13] = np.where(np.arange(9) < len1[:, None], v1, 0)
    lengths = 4 + len1
    rows = np.flatnonzero(has_second)
    if rows.size:
        v2, len2 = _vlong(seconds[rows] >> 31)
        for L in np.unique(len1[rows]):  # the second VLong starts right after the first
            sel = len1[rows] == L
            out[rows[sel], 4 + L:13 + L] = v2[sel]
        lengths[rows] += len2
    return out, lengths


# ------------------------------------------------------------------------------------------------
# Decimals: HiveDecimal keeps no trailing fractional zeros (12.50 is 125 at scale 1)
# ------------------------------------------------------------------------------------------------


def _negate_where(neg: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two's complement negation (``~x + 1``, carry into the high word) of the 128-bit values
    (hi, lo uint64) where ``neg``."""
    nlo = ~lo + np.uint64(1)
    nhi = ~hi + (nlo == 0).astype(np.uint64)
    return np.where(neg, nhi, hi), np.where(neg, nlo, lo)


def _divmod10(words: list[np.ndarray]) -> tuple[list[np.ndarray], np.ndarray]:
    """Long division by 10 of magnitudes given as one uint64 word or as 32-bit limbs (uint64
    arrays), most significant first."""
    r: Optional[np.ndarray] = None
    q = []
    for w in words:
        cur = w if r is None else (r << np.uint64(32)) | w
        qw = cur // np.uint64(10)
        r = cur - qw * np.uint64(10)
        q.append(qw)
    assert r is not None
    return q, r


def decimal_parts(arr: pa.Array) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """(magnitude limbs, negative, scale) of each value as HiveDecimal holds it: trailing
    fractional zeros removed, zero at scale 0. Limbs are uint64 arrays holding 32 bits each,
    most significant first."""
    if not pa.types.is_decimal128(arr.type):  # decimal32/64/256: Hive's are at most 38 digits
        arr = arr.cast(pa.decimal128(min(arr.type.precision, 38), arr.type.scale))
    n = len(arr)
    raw = np.frombuffer(arr.buffers()[1], dtype="<u8", count=2 * (arr.offset + n))
    raw = raw[2 * arr.offset:].reshape(n, 2)
    lo, hi = raw[:, 0].copy(), raw[:, 1].copy()
    neg = hi.view(np.int64) < 0
    hi, lo = _negate_where(neg, hi, lo)
    scale = np.full(n, arr.type.scale, dtype=np.int64)
    nonzero = (lo | hi) != 0
    scale[~nonzero] = 0
    # one 64-bit word when every magnitude fits (the common case: cheaper division)
    wide = bool(hi.any())
    words = [hi >> np.uint64(32), hi & _M32, lo >> np.uint64(32), lo & _M32] if wide else [lo]
    active = np.flatnonzero(scale > 0)
    while active.size:  # strip one trailing zero per round from the rows that still have one
        q, r = _divmod10([w[active] for w in words])
        hit = r == 0
        active = active[hit]
        for w, qw in zip(words, q):
            w[active] = qw[hit]
        scale[active] -= 1
        active = active[scale[active] > 0]
    zero = np.zeros(n, dtype=np.uint64)
    limbs = words if wide else [zero, zero, words[0] >> np.uint64(32), words[0] & _M32]
    return limbs, neg & nonzero, scale


def decimal_v1_hash(limbs: list[np.ndarray], neg: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``HiveDecimalWritable.hashCode()`` = ``BigDecimal.hashCode()`` of the normalised value:
    ``31 * (signum * BigInteger.hashCode(|unscaled|)) + scale``, the BigInteger hash being
    ``h = 31*h + word`` over the 32-bit words of the magnitude (storage-api FastHiveDecimalImpl
    .fastHashCode; the same in Hive 2.3 and 3.1 / 4)."""
    h = np.zeros(len(neg), dtype=np.uint64)
    for limb in limbs:
        h = (h * np.uint64(31) + limb) & _M32
    h = np.where(neg, (np.uint64(1 << 32) - h) & _M32, h)
    return ((h * np.uint64(31) + scale.astype(np.uint64)) & _M32).astype(np.uint32).view(np.int32)


def decimal_bytes(limbs: list[np.ndarray], neg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``HiveDecimalWritable.getInternalStorage()``: ``BigInteger.toByteArray()`` of the
    normalised unscaled value (minimal big-endian two's complement), what bucketing_version 2
    hashes. Returns (bytes n x 16, lengths)."""
    hi = (limbs[0] << np.uint64(32)) | limbs[1]
    lo = (limbs[2] << np.uint64(32)) | limbs[3]
    hi, lo = _negate_where(neg, hi, lo)
    n = len(neg)
    full = np.stack([hi, lo], axis=1).astype(">u8").view(np.uint8).reshape(n, 16)
    fill = np.where(neg, 0xFF, 0x00)[:, None]
    # a leading byte is redundant when it is all sign and the next byte carries the same sign bit
    redundant = (full[:, :15] == fill) & ((full[:, 1:] & 0x80) == (fill & 0x80))
    skip = np.where(redundant.all(axis=1), 15, np.argmin(redundant, axis=1))
    return left_align(full, skip), 16 - skip


def left_align(data: np.ndarray, skip: np.ndarray) -> np.ndarray:
    """Row i of ``data`` without its first ``skip[i]`` bytes (zero-filled at the end)."""
    out = np.zeros_like(data)
    for s in np.unique(skip):
        rows = skip == s
        out[rows, :data.shape[1] - s] = data[rows, s:]
    return out
