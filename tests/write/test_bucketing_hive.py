"""Bucket hashes and bucketed writes against Hive's own hash functions.

Hive 3.1.3 and 4.1.0's own ``ObjectInspectorUtils`` (tests/hive_jvm: ``hashCode`` /
``getBucketHashCodeOld`` for bucketing_version 1, ``hashCodeMurmur`` / ``getBucketHashCode`` for
version 2, ``getBucketNumber``) and, for version 1, Hive 2.3.10's (tests/hive_ref, HiveHashRef).
Values are random (seeded) plus the edges: nulls, -0.0, NaN payloads, extreme decimals, unicode
with trailing spaces, dates and timestamps before 1582 and 1970, nanoseconds, the 2^31-second
boundary.
"""
from __future__ import annotations

import datetime as dt
import decimal
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pytest

from hive_ref.fixtures import hive_ref  # noqa: F401
from hive_jvm.fixtures import hive3_oracle, newer_hives  # noqa: F401
from spark_hive_acid.txn import pathlog as txnlog
from spark_hive_acid.acid.bucketing import bucket_hash, bucket_ids, field_hash
from spark_hive_acid.acid.layout import TableLayout, save_layout
from spark_hive_acid.txn.committer import commit_write
from spark_hive_acid.write.task_writer import TableSpec
from spark_hive_acid.write.task_writer import InsertTarget, InsertWriter

pytestmark = [pytest.mark.hive, pytest.mark.hive31, pytest.mark.hive41]

EPOCH = dt.datetime(1970, 1, 1)
MIN_S = int((dt.datetime(1, 1, 1) - EPOCH).total_seconds())
MAX_S = int((dt.datetime(9999, 12, 31, 23, 59, 59) - EPOCH).total_seconds())
EDGE_TIMES = ["0001-01-01 00:00:00", "1000-02-28 12:00:00", "1582-10-04 23:59:59",
              "1582-10-05 12:00:00", "1582-10-14 23:59:59", "1582-10-15 00:00:00",
              "1899-12-31 23:59:59", "1969-12-31 23:59:59", "1970-01-01 00:00:00",
              "2038-01-19 03:14:07", "2038-01-19 03:14:08", "9999-12-31 23:59:59"]
TEXT = "ab é€😀 \x00x"  # 1-4 byte UTF-8, NUL, spaces
TYPES = ["boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "string",
         "varchar(5)", "char(5)", "char(1)", "binary", "date", "timestamp", "timestamp_ns",
         "decimal(10,2)", "decimal(18,0)", "decimal(38,10)", "decimal(38,0)", "decimal(38,38)"]


def _seconds(text: str) -> int:
    return int((dt.datetime.fromisoformat(text) - EPOCH).total_seconds())


def _ts_text(seconds: int, nanos: int) -> str:
    d = EPOCH + dt.timedelta(seconds=seconds)
    base = f"{d.year:04d}-{d.month:02d}-{d.day:02d} {d.hour:02d}:{d.minute:02d}:{d.second:02d}"
    return base + (f".{nanos:09d}" if nanos else "")


def _with_nulls(rng: random.Random, values: list) -> list:
    return [None if rng.random() < 0.1 else v for v in values]


def _decimal_values(rng: random.Random, p: int, s: int, n: int) -> list:
    top = 10 ** p - 1
    edges = [0, 1, -1, top, -top, 10 ** (p - 1), 2 ** 63 - 1, 2 ** 63, -(2 ** 63), 2 ** 64,
             2 ** 95, -(2 ** 96), 10 ** s, -(10 ** s) * 7]
    vals = [v for v in edges if abs(v) <= top]
    while len(vals) < n:
        digits = rng.randint(1, p)
        v = rng.randint(-(10 ** digits - 1), 10 ** digits - 1)
        if rng.random() < 0.4:  # trailing zeros: HiveDecimal drops them
            k = rng.randint(0, min(digits, s) if s else 0)
            v = v // 10 ** k * 10 ** k
        vals.append(v)
    with decimal.localcontext(decimal.Context(prec=60)):  # every value at exactly scale s
        return [decimal.Decimal(v).scaleb(-s).quantize(decimal.Decimal(1).scaleb(-s)) for v in vals]


def values(hive_type: str, n: int, seed: int, writer: bool = False) -> tuple[pa.Array, list]:
    """``n`` random values of ``hive_type`` (edges first, ~10% null) as (Arrow array of the type
    the writer stores, the same values for the Hive JVM)."""
    rng = random.Random(f"{hive_type}/{seed}")
    t = hive_type
    if t == "boolean":
        v = _with_nulls(rng, [rng.random() < 0.5 for _ in range(n)])
        return pa.array(v, pa.bool_()), v
    ints = {"tinyint": (8, pa.int8()), "smallint": (16, pa.int16()), "int": (32, pa.int32()),
            "bigint": (64, pa.int64())}
    if t in ints:
        bits, typ = ints[t]
        lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        v = [lo, hi, 0, -1, 1] + [rng.randint(lo, hi) for _ in range(n - 5)]
        v = _with_nulls(rng, v)
        return pa.array(v, typ), v
    if t in ("float", "double"):
        ftype, itype = (np.float32, np.uint32) if t == "float" else (np.float64, np.uint64)
        qnan = 0x7FC00001 if t == "float" else 0x7FF8000000000001
        snan = 0xFFC12345 if t == "float" else 0xFFF0000000000009
        nans = np.array([qnan, snan], dtype=itype).view(ftype).tolist()
        specials = [0.0, -0.0, float("inf"), float("-inf"), 5e-324, 1e-45, 3.4e38] + nans
        raw = specials + [rng.choice([rng.uniform(-1e30, 1e30), rng.uniform(-2, 2),
                                      float(rng.randint(-10 ** 6, 10 ** 6))])
                          for _ in range(n - len(specials))]
        arr = np.array(raw, dtype=ftype)
        mask = np.array([rng.random() < 0.1 for _ in raw])
        return pa.array(arr, mask=mask), [None if m else float(x) for m, x in zip(mask, arr)]
    if t in ("string", "binary") or t.startswith(("char", "varchar")):
        if t == "binary":
            v = [b"", b"\x80", b"\xff\xfe\xfd"] + [
                bytes(rng.randrange(256) for _ in range(rng.randint(0, 20))) for _ in range(n - 3)]
            v = _with_nulls(rng, v)
            return pa.array(v, pa.binary()), v
        v = ["", " ", "   ", "a ", " a", "é  ", "😀 ", "abcdefghij", "x" * 40] + [
            "".join(rng.choice(TEXT) for _ in range(rng.randint(0, 9))) for _ in range(n - 9)]
        v = _with_nulls(rng, v)
        return pa.array(v, pa.string()), v
    if t == "date":
        edges = [EDGE_TIMES[i][:10] for i in range(len(EDGE_TIMES))] + ["9999-12-31"]
        days = [(dt.date.fromisoformat(e) - EPOCH.date()).days for e in edges]
        days += [rng.randint(MIN_S // 86400, MAX_S // 86400) for _ in range(n - len(days))]
        days = _with_nulls(rng, days)
        jvm = [None if d is None else (EPOCH.date() + dt.timedelta(days=d)).isoformat() for d in days]
        return pa.array(days, pa.int32()).cast(pa.date32()), jvm
    if t.startswith("timestamp"):
        if t == "timestamp_ns":  # nanoseconds, within datetime64[ns]
            lo, hi = -(9 * 10 ** 9), 9 * 10 ** 9
            pairs = [(rng.randint(lo, hi), rng.choice([0, rng.randrange(10 ** 9), 999_999_999,
                                                        1, 100_000_000])) for _ in range(n)]
            unit, per = "ns", 1
        else:  # the whole Hive range, microseconds (what the writer stores)
            edges = [(_seconds(e), 0) for e in EDGE_TIMES] + [(-1, 999_999_000), (0, 1000),
                                                               (MAX_S, 999_999_000)]
            pairs = edges + [(rng.randint(MIN_S, MAX_S), rng.choice([0, rng.randrange(10 ** 6) * 1000]))
                             for _ in range(n - len(edges))]
            unit, per = "us", 1000
        pairs = _with_nulls(rng, pairs)
        ints = [None if p is None else p[0] * (10 ** 9 // per) + p[1] // per for p in pairs]
        jvm = [None if p is None else _ts_text(*p) for p in pairs]
        return pa.array(ints, pa.int64()).cast(pa.timestamp(unit)), jvm
    if t.startswith("decimal"):
        p, s = (int(x) for x in t[8:-1].split(","))
        v = _with_nulls(rng, _decimal_values(rng, p, s, n))
        return pa.array(v, pa.decimal128(p, s)), [None if x is None else str(x) for x in v]
    raise AssertionError(t)


def _hive_type(t: str) -> str:
    return "timestamp" if t == "timestamp_ns" else t


def nul_before_padding(value, hive_type: str) -> bool:
    """A char(n) value that Hive 4.1 hashes otherwise than Hive 2.3 / 3.1: its padded form ends
    in a space and has NUL characters before the trailing spaces. Hive 4's
    HiveCharWritable.getStrippedValue strips trailing spaces *and NULs* (stripTrailingWhitespace);
    Hive 3.1's strips spaces only, as the library does (pinned by
    test_hive41_strips_trailing_nuls_of_char_values)."""
    if value is None or not hive_type.startswith("char("):
        return False
    n = int(hive_type[5:-1])
    padded = value[:n].ljust(n)
    return padded.endswith(" ") and padded.rstrip(" ") != padded.rstrip(" \x00")


def _hive_hashes(hive_ref, hive3_oracle, columns, rows, num_buckets):  # noqa: F811
    """Version 1 and 2 from Hive 3.1 / 4.1; version 1 from Hive 2.3 must agree with it. Also
    returns the rows Hive 4.1 hashes otherwise (:func:`nul_before_padding`), left out."""
    new = hive3_oracle.bucket_hashes(columns, rows, num_buckets)
    old = hive_ref.bucket_hashes(columns, rows, num_buckets)["v1"]
    skip = set()
    if hive3_oracle.version.startswith("4."):
        skip = {i for i, r in enumerate(rows)
                if any(nul_before_padding(v, t) for v, (_, t) in zip(r, columns))}
    for key in ("fields", "hash", "bucket"):
        assert [x for i, x in enumerate(old[key]) if i not in skip] == \
            [x for i, x in enumerate(new["v1"][key]) if i not in skip], \
            f"Hive 2.3 and {hive3_oracle.version} differ on bucketing_version 1 ({key})"
    return new, skip


@pytest.mark.parametrize("hive_type", TYPES)
def test_field_hashes_and_buckets_equal_hives(hive_ref, hive3_oracle, hive_type):  # noqa: F811
    arr, jvm = values(hive_type, 300, seed=1)
    htype = _hive_type(hive_type)
    hive, skip = _hive_hashes(hive_ref, hive3_oracle, [("k", htype)], [[v] for v in jvm], 7)
    for version in (1, 2):
        want = [f[0] for f in hive[f"v{version}"]["fields"]]
        got = field_hash(arr, htype, version).tolist()
        bad = [(jvm[i], want[i], got[i]) for i in range(len(jvm))
               if want[i] != got[i] and i not in skip]
        assert not bad, f"v{version}: {len(bad)} of {len(jvm)} differ, e.g. {bad[:3]}"
        ours = bucket_ids([arr], [htype], 7, version).tolist()
        assert [b for i, b in enumerate(ours) if i not in skip] == \
            [b for i, b in enumerate(hive[f"v{version}"]["bucket"]) if i not in skip]
    assert len(skip) < len(jvm) // 10


def test_hive41_strips_trailing_nuls_of_char_values(hive31, hive41):  # noqa: F811
    """Hive 4.1 hashes a char(n) value whose padded form ends in spaces preceded by NULs without
    the NULs (HiveCharWritable.stripTrailingWhitespace strips bytes 0x20 and 0x00); Hive 3.1
    strips the spaces only, and so does the library (bucketing either version): for such values
    the two Hives put rows in different buckets. Other values agree."""
    rows = [["a\x00"], ["\x00"], ["a\x00 "], ["ab\x00\x00\x00"], ["a b"], ["\x00a"]]
    cols = [("k", "char(5)")]
    h3, h4 = hive31.bucket_hashes(cols, rows, 64), hive41.bucket_hashes(cols, rows, 64)
    arr = pa.array([r[0] for r in rows])
    for version in (1, 2):
        ours = field_hash(arr, "char(5)", version).tolist()
        assert ours == [f[0] for f in h3[f"v{version}"]["fields"]]
        # stripped only when the padded value ends in a space: 'ab' + 3 NULs fills char(5)
        hive4 = [r[0].ljust(5).rstrip(" \x00") if r[0].ljust(5).endswith(" ") else r[0]
                 for r in rows]
        stripped = field_hash(pa.array(hive4), "char(5)", version)
        assert [f[0] for f in h4[f"v{version}"]["fields"]] == stripped.tolist()
        differ = [a != b for a, b in zip(h3[f"v{version}"]["fields"], h4[f"v{version}"]["fields"])]
        assert differ == [True, True, True, False, False, False]


def test_hive_hashes_a_reused_binary_writable_with_its_padding(hive3_oracle):  # noqa: F811
    """hashCodeMurmur hashes a binary value's whole BytesWritable backing array
    (``getBytes()``), not its first ``getLength()`` bytes: a writable that grew for a longer value
    (as Hive's readers and converters reuse one) hashes the stale bytes too, so Hive's own
    bucket of a binary key depends on what the writable held before. The library hashes the
    value's bytes (what a fresh writable of exactly that value gives, the comparisons above)."""
    import base64
    from spark_hive_acid.acid.murmur3 import murmur3_bytes

    vals = [b"abcdefgh", b"xy", b"xy"]
    out = hive3_oracle.call("Hashes.binaryReused",
                            {"values": [base64.b64encode(v).decode() for v in vals]})
    for v, o in zip(vals, out):
        buf = base64.b64decode(o["buffer"])
        assert o["length"] == len(v) and buf[:len(v)] == v
        assert o["hash"] == murmur3_bytes(buf)  # the whole buffer, padding included
    assert len(base64.b64decode(out[1]["buffer"])) > 2  # grown for the first value
    assert out[1]["hash"] != field_hash(pa.array([b"xy"]), "binary", 2).tolist()[0]


def _shuffled(rng: random.Random, arr: pa.Array, jvm: list) -> tuple[pa.Array, list]:
    """The same values in a random order (so the edges of several columns meet other values)."""
    order = list(range(len(jvm)))
    rng.shuffle(order)
    return arr.take(pa.array(order)), [jvm[i] for i in order]


def test_multi_column_keys_equal_hives(hive_ref, hive3_oracle):  # noqa: F811
    rng = random.Random(5)
    for trial in range(12):
        types = rng.sample(TYPES, rng.randint(2, 4))
        cols = [_shuffled(rng, *values(t, 120, seed=100 + trial)) for t in types]
        htypes = [_hive_type(t) for t in types]
        rows = [list(r) for r in zip(*(jvm for _, jvm in cols))]
        buckets = rng.choice([1, 2, 31, 256, 4096])
        hive, skip = _hive_hashes(hive_ref, hive3_oracle,
                                  [(f"c{i}", t) for i, t in enumerate(htypes)], rows, buckets)

        def kept(xs):
            return [x for i, x in enumerate(xs) if i not in skip]

        for version in (1, 2):
            arrays = [arr for arr, _ in cols]
            assert kept(bucket_hash(arrays, htypes, version).tolist()) == \
                kept(hive[f"v{version}"]["hash"]), (types, version)
            assert kept(bucket_ids(arrays, htypes, buckets, version).tolist()) == \
                kept(hive[f"v{version}"]["bucket"]), (types, version)


def test_specs_worked_values_are_hives(hive3_oracle):  # noqa: F811
    """hive-acid-format.md §7's worked values are what Hive 3.1 / 4.1 compute (the 2-byte UTF-8
    tail of 'é' included: Hive's Murmur3 sign-extends tail bytes, unlike the reference hash)."""
    for htype, value, murmur, v2_bucket, v1_bucket in [
            ("int", 1, 1321152925, 1, 1), ("int", 2, -249917244, 0, 2), ("int", 3, 1183246022, 2, 3),
            ("bigint", 1, -913662660, 0, 1), ("string", "abc", -885266671, 1, 2),
            ("string", "é", -527561221, 3, 2)]:
        hive = hive3_oracle.bucket_hashes([("k", htype)], [[value]], num_buckets=4)
        assert hive["v2"]["hash"] == [murmur] and hive["v2"]["bucket"] == [v2_bucket]
        assert hive["v1"]["bucket"] == [v1_bucket]
    hive = hive3_oracle.bucket_hashes([("a", "int"), ("b", "string")], [[1, "abc"]], num_buckets=8)
    assert hive["v2"]["hash"] == [1415768340] and hive["v2"]["bucket"] == [4]


# ------------------------------------------------------------------------------------------------
# Real bucketed files: every row must sit in bucket_N with N = Hive's bucket of its key
# ------------------------------------------------------------------------------------------------


def _write_bucketed(tmp_path: Path, fs, columns: list, keys: list, arrays: list, buckets: int,
                    version: int) -> str:
    n = len(arrays[0])
    layout = TableLayout(columns=columns + [("id", "bigint")], bucket_columns=keys,
                         num_buckets=buckets, bucketing_version=version)
    t = str(tmp_path / "t")
    fs.mkdirs(t)
    save_layout(fs, t, layout)
    spec = TableSpec.of(t, layout)
    txn = txnlog.begin(fs, t, "append")
    w = InsertWriter(fs, spec, InsertTarget(txn.write_id), txnlog.staging_dir(fs, t, txn.write_id), 0)
    names = [c for c, _ in columns] + ["id"]
    for lo, hi in ((0, n // 3), (n // 3, n)):  # two batches into the same files
        batch = pa.record_batch([a.slice(lo, hi - lo) for a in arrays] + [pa.array(range(lo, hi), pa.int64())],
                                names=names)
        w.write(batch, [])
    commit_write(fs, spec, txn, w.close())
    return t


def _ids_by_bucket(table: str) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for f in sorted(Path(table).glob("delta_*/bucket_*")):
        rows = po.ORCFile(str(f)).read(columns=["row.id"]).column("row").to_pylist()
        out.setdefault(int(f.name.split("_")[1]), []).extend(r["id"] for r in rows)
    return out


def _assert_rows_in_hives_buckets(hives, table, columns, jvm_rows, buckets, version):
    by_bucket = _ids_by_bucket(table)
    assert sorted(i for ids in by_bucket.values() for i in ids) == list(range(len(jvm_rows)))
    assert len(by_bucket) > 1
    for hive in hives:
        want = hive.bucket_hashes(columns, jvm_rows, num_buckets=buckets)[f"v{version}"]["bucket"]
        skip = {i for i, r in enumerate(jvm_rows) if hive.version.startswith("4.")
                and any(nul_before_padding(v, t) for v, (_, t) in zip(r, columns))}
        wrong = [(i, n, want[i]) for n, ids in by_bucket.items() for i in ids
                 if want[i] != n and i not in skip]
        assert not wrong, f"{len(wrong)} rows not in {hive}'s bucket file, e.g. {wrong[:3]}"


WRITE_TYPES = [t for t in TYPES if t != "timestamp_ns"]  # the writer stores microseconds


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("hive_type", WRITE_TYPES)
def test_bucketed_write_puts_every_row_in_hives_bucket(newer_hives, tmp_path, fs, hive_type,  # noqa: F811
                                                       version):
    arr, jvm = values(hive_type, 150, seed=7 + version)
    _write_bucketed(tmp_path, fs, [("k", hive_type)], ["k"], [arr], 5, version)
    _assert_rows_in_hives_buckets(newer_hives, str(tmp_path / "t"), [("k", hive_type)],
                                  [[v] for v in jvm], 5, version)


@pytest.mark.parametrize("version", [1, 2])
def test_bucketed_write_multi_column_key(newer_hives, tmp_path, fs, version):  # noqa: F811
    types = ["decimal(12,3)", "timestamp", "char(4)", "date", "varchar(6)", "int"]
    cols = [values(t, 200, seed=30 + i) for i, t in enumerate(types)]
    columns = [(f"c{i}", t) for i, t in enumerate(types)]
    keys = ["c0", "c1", "c2", "c3", "c4"]  # c5 is a plain column in between the keys' data
    _write_bucketed(tmp_path, fs, columns, keys, [a for a, _ in cols], 16, version)
    rows = [list(r) for r in zip(*(jvm for _, jvm in cols[:5]))]
    _assert_rows_in_hives_buckets(newer_hives, str(tmp_path / "t"), columns[:5], rows, 16, version)


@pytest.mark.spark
def test_spark_write_bucketed_by_decimal_timestamp_char(newer_hives, acid_spark, tmp_path, fs):  # noqa: F811
    """The Spark path accepts decimal, timestamp and char keys and routes like Hive."""
    path = str(tmp_path / "t")
    columns = [("id", "bigint"), ("d", "decimal(10,2)"), ("ts", "timestamp"), ("c", "char(5)")]
    fs.mkdirs(path)
    save_layout(fs, path, TableLayout(columns=columns, bucket_columns=["d", "ts", "c"],
                                      num_buckets=8, bucketing_version=2))
    df = acid_spark.range(120).selectExpr(
        "id",
        "CASE WHEN id % 11 = 0 THEN NULL ELSE CAST(id * 7.31 - 400 AS DECIMAL(10,2)) END AS d",
        "TIMESTAMP '1960-01-01 00:00:00' + make_dt_interval(0, id * 1999, 0, id * 0.000137) AS ts",
        "CASE WHEN id % 13 = 0 THEN NULL ELSE substr('xy é😀ab ', 1 + id % 6, 1 + id % 5) END AS c",
    ).repartition(3)
    df.write.format("hiveacid").mode("append").option("bucketBy", "d,ts,c").option("numBuckets", "8") \
        .save(path)
    rows_by_bucket = {}
    for f in sorted(Path(path).glob("delta_*/bucket_*")):
        rows = po.ORCFile(str(f)).read().column("row").to_pylist()
        rows_by_bucket.setdefault(int(f.name.split("_")[1]), []).extend(rows)
    rows = [(n, r) for n, rs in rows_by_bucket.items() for r in rs]
    assert sorted(r["id"] for _, r in rows) == list(range(120))
    jvm = [[None if r["d"] is None else str(r["d"]),
            r["ts"].strftime("%Y-%m-%d %H:%M:%S.%f"), r["c"]] for _, r in rows]
    for hive in newer_hives:
        assert [n for n, _ in rows] == hive.bucket_hashes(columns[1:], jvm, 8)["v2"]["bucket"], hive
    assert len(rows_by_bucket) > 1
