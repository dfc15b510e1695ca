"""Hive bucket hashing: the worked values of hive-acid-format.md §7, exactly."""
from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pytest

from spark_hive_acid.acid.bucketing import (bucket_hash, bucket_ids, field_hash, murmur3_bytes,
                                            murmur3_int32, murmur3_int64)
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


def test_unsupported_type_is_refused():
    with pytest.raises(InvalidOptionError, match="decimal"):
        field_hash(pa.array([1]), "decimal(10,2)", 2)
    with pytest.raises(InvalidOptionError):
        bucket_ids([pa.array([1])], ["int"], 0)
