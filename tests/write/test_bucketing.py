"""Hive bucket hashing: the worked values of hive-acid-format.md §7 and values derived by hand
from Hive's source (the randomized comparison with Hive's own code is test_bucketing_hive.py)."""
from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import pyarrow as pa
import pytest

from spark_hive_acid.acid.bucket_values import legacy_seconds
from spark_hive_acid.acid.bucketing import bucket_hash, bucket_ids, field_hash
from spark_hive_acid.acid.murmur3 import murmur3_bytes, murmur3_int32, murmur3_int64, murmur3_rows
from spark_hive_acid.exceptions import InvalidOptionError


def test_murmur_worked_values():
    assert murmur3_int32(np.array([1, 2, 3])).tolist() == [1321152925, -249917244, 1183246022]
    assert murmur3_int64(np.array([1])).tolist() == [-913662660]
    assert murmur3_bytes(b"abc") == -885266671
    # 2-byte tail >= 0x80: Hive sign-extends (standard murmur3 gives -1372482606)
    assert murmur3_bytes("é".encode("utf-8")) == -527561221


@pytest.mark.parametrize("values,typ,v2,v1", [
    ([1, 2, 3], pa.int32(), [1, 0, 2], [1, 2, 3]),
    ([1], pa.int64(), [0], [1]),
    (["abc", "é"], pa.string(), [1, 3], [2, 2]),
])
def test_bucket_worked_values(values, typ, v2, v1):
    hive = {pa.int32(): "int", pa.int64(): "bigint", pa.string(): "string"}[typ]
    arr = pa.array(values, typ)
    assert bucket_ids([arr], [hive], 4, version=2).tolist() == v2
    assert bucket_ids([arr], [hive], 4, version=1).tolist() == v1


def test_two_columns_worked_value():
    cols = [pa.array([1], pa.int32()), pa.array(["abc"])]
    assert bucket_hash(cols, ["int", "string"], 2).tolist() == [1415768340]
    assert bucket_ids(cols, ["int", "string"], 8, 2).tolist() == [4]


def test_vectorised_matches_scalar_reference():
    rng = np.random.default_rng(7)
    ints = rng.integers(-2**31, 2**31, 500, dtype=np.int64).astype(np.int32)
    longs = rng.integers(-2**63, 2**63 - 1, 500, dtype=np.int64)
    assert murmur3_int32(ints).tolist() == [murmur3_bytes(int(v).to_bytes(4, "big", signed=True)) for v in ints]
    assert murmur3_int64(longs).tolist() == [murmur3_bytes(int(v).to_bytes(8, "big", signed=True)) for v in longs]
    shorts = np.array([0, 1, -1, 255, 256, -32768, 32767, 200], dtype=np.int16)
    got = field_hash(pa.array(shorts), "smallint", 2).tolist()
    assert got == [murmur3_bytes(int(v).to_bytes(2, "big", signed=True)) for v in shorts]


def test_nulls_hash_to_zero_and_strings_per_distinct():
    arr = pa.array(["a", None, "a", "bb"])
    h = field_hash(arr, "string", 2)
    assert h[1] == 0 and h[0] == h[2] == murmur3_bytes(b"a")
    assert field_hash(pa.array([None, 5], pa.int32()), "int", 2).tolist()[0] == 0


def test_other_types():
    assert field_hash(pa.array([True, False]), "boolean", 2).tolist() == [1, 0]
    assert field_hash(pa.array([-3], pa.int8()), "tinyint", 2).tolist() == [-3]
    d = pa.array([dt.date(1970, 1, 2)])
    assert field_hash(d, "date", 2).tolist() == murmur3_int32(np.array([1])).tolist()
    assert field_hash(d, "date", 1).tolist() == [1]
    # v1 bigint folds the halves; v1 string is Java-style over signed bytes from 0
    assert field_hash(pa.array([2**32 + 1], pa.int64()), "bigint", 1).tolist() == [0]
    assert field_hash(pa.array(["abc"]), "string", 1).tolist() == [96354]
    # char: trailing spaces do not count
    assert field_hash(pa.array(["ab  "]), "char(4)", 2).tolist() == [murmur3_bytes(b"ab")]
    # float/double quirk: the bit pattern is converted as a number before hashing
    bits = np.array([1.5], np.float64).view(np.int64)
    expected = murmur3_bytes(np.array([float(bits[0])], ">f8").tobytes())
    assert field_hash(pa.array([1.5]), "double", 2).tolist() == [expected]


def test_murmur_rows_matches_scalar_per_length():
    rng = np.random.default_rng(3)
    data = rng.integers(0, 256, (64, 13), dtype=np.uint8)
    lengths = np.arange(64) % 14
    want = [murmur3_bytes(bytes(data[i, :lengths[i]])) for i in range(64)]
    assert murmur3_rows(data, lengths).tolist() == want


def test_v1_text_hashes_start_where_hive_starts():
    # string: ObjectInspectorUtils' own loop from 0; varchar/char (Text.hashCode) and binary
    # (BytesWritable.hashCode) use WritableComparator.hashBytes, from 1: 31*(31*1+97)+98
    assert field_hash(pa.array(["ab"]), "string", 1).tolist() == [31 * 97 + 98]
    assert field_hash(pa.array(["ab"]), "varchar(9)", 1).tolist() == [4066]
    assert field_hash(pa.array(["ab   "]), "char(5)", 1).tolist() == [4066]
    assert field_hash(pa.array([b"ab"]), "binary", 1).tolist() == [4066]
    assert field_hash(pa.array([""]), "char(3)", 1).tolist() == [1]


def test_char_and_varchar_are_cut_to_their_length():
    # Hive holds 'abcdef' in a char(3) / varchar(3) column as 'abc' (the spec's -885266671)
    for t in ("char(3)", "varchar(3)", "VARCHAR( 3 )"):
        assert field_hash(pa.array(["abcdef"]), t, 2).tolist() == [-885266671]
    assert field_hash(pa.array(["é😀x"]), "varchar(2)", 2).tolist() == \
        [murmur3_bytes("é😀".encode("utf-8"))]  # characters, not bytes


def test_decimal_hashes_the_value_without_trailing_zeros():
    arr = pa.array([decimal.Decimal("12.50"), decimal.Decimal("-12.50"), decimal.Decimal("0.00"),
                    decimal.Decimal("1.28"), decimal.Decimal("-1.28"), None], pa.decimal128(10, 2))
    # v1: BigDecimal(12.5).hashCode() = 31 * 125 + scale 1; zero is 0 at scale 0
    assert field_hash(arr, "decimal(10,2)", 1).tolist() == [3876, -3874, 0, 31 * 128 + 2,
                                                             -31 * 128 + 2, 0]
    # v2: BigInteger.toByteArray() of the unscaled value: 125 -> 7d, 0 -> 00, 128 -> 00 80
    want = [murmur3_bytes(b) for b in (b"\x7d", b"\x83", b"\x00", b"\x00\x80", b"\x80")] + [0]
    assert field_hash(arr, "decimal(10,2)", 2).tolist() == want
    big = 10 ** 38 - 1
    arr = pa.array([decimal.Decimal(big), decimal.Decimal(-big)], pa.decimal128(38, 0))
    assert field_hash(arr, "decimal(38,0)", 2).tolist() == [
        murmur3_bytes(v.to_bytes(16, "big", signed=True)) for v in (big, -big)]


def _ts(text: str, unit: str = "ns") -> pa.Array:
    return pa.array([np.datetime64(text, unit).astype(np.int64)], pa.int64()).cast(pa.timestamp(unit))


def test_timestamp_v2_hashes_timestampwritable_bytes():
    # whole seconds in 0..2^31-1: just the 4 bytes, i.e. the int hash of the seconds
    assert field_hash(_ts("1970-01-01T00:00:01"), "timestamp", 2).tolist() == [1321152925]
    # a fraction: flag bit, then the VInt of the reversed nanos digits (0.5 s -> 5)
    assert field_hash(_ts("1970-01-01T00:00:01.5"), "timestamp", 2).tolist() == \
        [murmur3_bytes(b"\x80\x00\x00\x01\x05")]
    # 987654321 needs 4 bytes: the VLong prefix is -112 - 4 = 0x8c
    assert field_hash(_ts("1970-01-01T00:00:00.123456789"), "timestamp", 2).tolist() == \
        [murmur3_bytes(bytes.fromhex("80000000" "8c3ade68b1"))]
    # seconds -1: VInt -0-1 = -1 (0xff) announces a second VLong, -1 >> 31 = -1 (0xff)
    assert field_hash(_ts("1969-12-31T23:59:59", "us"), "timestamp", 2).tolist() == \
        [murmur3_bytes(b"\xff" * 6)]


def test_timestamp_v1_uses_hybrid_calendar_seconds():
    def secs(day: str) -> int:
        return int(np.datetime64(day, "s").astype(np.int64))

    # Julian 0001-01-01 is proleptic 0000-12-30; Julian 1582-10-04 is proleptic 1582-10-14;
    # a day in the 1582-10-05..14 gap rolls forward like it; from 1582-10-15 nothing moves
    got = legacy_seconds(np.array([secs(d) for d in ("0001-01-01", "1582-10-04", "1582-10-10",
                                                      "1582-10-15", "1969-12-31")]))
    assert got.tolist() == [secs("0001-01-01") - 2 * 86400, secs("1582-10-14"), secs("1582-10-20"),
                            secs("1582-10-15"), secs("1969-12-31")]
    # TimestampWritable.hashCode: s = seconds << 30 | nanos; (int) (s >>> 32 ^ s)
    assert field_hash(_ts("1970-01-01T00:00:01.5"), "timestamp", 1).tolist() == [(1 << 30) + 500000000]
    # -1 << 30 = 0xFFFFFFFF_C0000000: 0xFFFFFFFF ^ 0xC0000000
    assert field_hash(_ts("1969-12-31T23:59:59"), "timestamp", 1).tolist() == [0x3FFFFFFF]


def test_floats_hash_the_canonical_nan_and_keep_negative_zero():
    payload = np.array([0x7FC00001, 0xFFC00000], np.uint32).view(np.float32)
    arr = pa.array(np.concatenate([payload, np.array([-0.0, 0.0], np.float32)]))
    assert field_hash(arr, "float", 1).tolist() == [0x7FC00000, 0x7FC00000, -2 ** 31, 0]
    dbl = pa.array(np.array([0x7FF8000000000001], np.uint64).view(np.float64))
    assert field_hash(dbl, "double", 1).tolist() == [0x7FF80000]


def test_unsupported_type_is_refused():
    with pytest.raises(InvalidOptionError, match="struct<a:int>.*supported are"):
        field_hash(pa.array([{"a": 1}]), "struct<a:int>", 2)
    with pytest.raises(InvalidOptionError, match="column 'k'.*decimal"):
        bucket_ids([pa.array([1])], ["decimal(10,2)"], 4, names=["k"])
    with pytest.raises(InvalidOptionError):
        bucket_ids([pa.array([1])], ["int"], 0)
