"""Dates and timestamps before 1582-10-15 in files on the hybrid Julian/Gregorian calendar
(issue 17 §3): read as their writer meant them, i.e. as Hive 2.3's own reader shows them.

Oracles: Hive 2.3.10's writer and reader (tests/hive_ref; its ORC 2.3.0 writer records
``calendar = JULIAN_GREGORIAN`` in the footer), Spark's published Julian->Gregorian switch
table (``RebaseDateTime.scala``), and day numbers quoted by Spark and by tests/hive_ref. Older
Java ORC writers (before ORC-27, ORC 1.6) left the calendar out: such a file is made by removing
the field from a Hive-written file's footer (``_drop_calendar``), everything else byte for byte.
"""
from __future__ import annotations

import datetime
import random
import shutil
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pytest
from pyspark.sql.datasource import EqualTo, GreaterThanOrEqual

from spark_hive_acid.io.protobuf import fields, read_varint, varint
from spark_hive_acid.read.calendar import SWITCH_DAY, footer_facts, julian_to_gregorian_days, rebase
from spark_hive_acid.read.pushdown import DataPredicate, compile_filter
from spark_hive_acid.read.reader import TaskReader
from spark_hive_acid.catalog import open_scan
from spark_hive_acid.direct import read_table
from spark_hive_acid.write.orc_tail import as_original_chunks, add_user_metadata_to_bytes

from corpus_location import corpus_table

EPOCH = datetime.date(1970, 1, 1)
# The issue's values: first day of year 1, a Julian-only leap day, the last Julian and the first
# Gregorian day, and a modern date (time of day on the timestamps).
DATES = ["0001-01-01", "1000-02-29", "1582-10-04", "1582-10-15", "1900-01-01"]
TIMES = ["0001-01-01 00:00:00", "1000-02-29 12:34:56.789", "1582-10-04 23:59:59.999999",
         "1582-10-15 00:00:01", "1900-01-01 10:00:00"]
COLUMNS = [("id", "int"), ("d", "date"), ("ts", "timestamp"),
           ("s", "struct<d:date,ts:timestamp>"), ("a", "array<date>"),
           ("m", "map<string,timestamp>")]


def _days(text: str) -> int:
    return (datetime.date.fromisoformat(text) - EPOCH).days


def _dates(*days: int) -> pa.Array:
    return pa.array(list(days), pa.int32()).view(pa.date32())


# --- the rebase itself, against independent numbers --------------------------------------------

# Spark's RebaseDateTime.scala (julianGregDiffSwitchDay / julianGregDiffs): from the Julian day
# number of 0001-01-01, the days to add to a hybrid day number to get the proleptic one.
SPARK_SWITCH_DAYS = [-719164, -682945, -646420, -609895, -536845, -500320, -463795,
                     -390745, -354220, -317695, -244645, -208120, -171595, -141427]
SPARK_DIFFS = [2, 1, 0, -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, 0]


def test_every_day_since_year_1_matches_sparks_switch_table():
    days = np.arange(-719164, 40000, dtype=np.int32)
    expected = days + np.array(SPARK_DIFFS)[np.searchsorted(SPARK_SWITCH_DAYS, days, "right") - 1]
    got = rebase(_dates(*days.tolist())).view(pa.int32()).to_numpy()
    assert np.array_equal(got, expected)


def test_switch_table_equals_the_calendar_arithmetic():
    """The reader looks days since year 1 up in a table; before year 1 it computes them."""
    days = np.arange(-719164 - 3000, SWITCH_DAY, dtype=np.int64)
    looked_up = rebase(_dates(*days.tolist())).view(pa.int32()).to_numpy()
    assert np.array_equal(looked_up, julian_to_gregorian_days(days))


def test_quoted_day_numbers():
    # tests/hive_ref: Hive 2 stores '1500-01-01' as day -171655; Spark: Julian 1582-01-01 is
    # -141704; hybrid 1582-10-04 is the day before 1582-10-15 (-141427)
    got = rebase(_dates(-171655, -141704, -141428, -141427, None)).to_pylist()
    assert got == [datetime.date(1500, 1, 1), datetime.date(1582, 1, 1),
                   datetime.date(1582, 10, 4), datetime.date(1582, 10, 15), None]


@pytest.mark.hive
def test_random_days_match_javas_hybrid_calendar(hive_ref):  # noqa: F811
    """Also before year 1, where Spark's table stops: Java's own hybrid ``GregorianCalendar``
    gives the Julian fields (era BC: year 1 - y) and ``LocalDate`` the proleptic day, as Spark's
    slow path ``localRebaseJulianToGregorianDays`` does."""
    rng = random.Random(17)
    days = ([rng.randint(-5_000_000, -719165) for _ in range(40)]
            + [rng.randint(-719164, SWITCH_DAY - 1) for _ in range(40)] + [-719165, -720000])
    jvm = hive_ref.jvm
    utc = jvm.java.util.TimeZone.getTimeZone("UTC")
    expected = []
    for day in days:
        cal = jvm.java.util.GregorianCalendar(utc)
        cal.setTimeInMillis(day * 86_400_000)
        era, year = cal.get(jvm.java.util.Calendar.ERA), cal.get(jvm.java.util.Calendar.YEAR)
        year = year if era == jvm.java.util.GregorianCalendar.AD else 1 - year
        first = jvm.java.time.LocalDate.of(year, cal.get(jvm.java.util.Calendar.MONTH) + 1, 1)
        expected.append(first.plusDays(cal.get(jvm.java.util.Calendar.DAY_OF_MONTH) - 1).toEpochDay())
    assert rebase(_dates(*days)).view(pa.int32()).to_pylist() == expected


def test_timestamps_keep_their_time_of_day_in_every_unit():
    day_us = 86_400_000_000
    tod = 12 * 3_600_000_000 + 345_678  # 12:00:00.345678
    us = pa.array([-141704 * day_us + tod, -141704 * day_us - 1, None], pa.timestamp("us"))
    assert rebase(us).to_pylist() == [
        datetime.datetime(1582, 1, 1, 12, 0, 0, 345678),
        datetime.datetime(1581, 12, 31, 23, 59, 59, 999999), None]
    ms = pa.array([-171655 * 86_400_000 + 1], pa.timestamp("ms"))
    assert rebase(ms).to_pylist() == [datetime.datetime(1500, 1, 1, 0, 0, 0, 1000)]


def test_modern_values_are_left_alone_without_a_copy():
    rng = np.random.default_rng(17)
    days = _dates(*rng.integers(SWITCH_DAY, 2_932_896, 1000).tolist())
    assert rebase(days) is days
    ts = pa.array(rng.integers(SWITCH_DAY * 86_400_000_000, 2**62, 1000), pa.timestamp("us"))
    assert rebase(ts) is ts
    nested = pa.StructArray.from_arrays([days, ts], ["d", "ts"])
    assert rebase(nested) is nested
    ints = pa.array([1, 2])
    assert rebase(ints) is ints


def test_nested_and_sliced_arrays():
    old, new = -171655, 0  # 1500-01-01 (hybrid), 1970-01-01
    d = datetime.date
    lists = pa.ListArray.from_arrays(pa.array([0, 1, 1, 3, 4]), _dates(old, old, new, old),
                                     mask=pa.array([False, True, False, False]))
    assert rebase(lists).to_pylist() == [[d(1500, 1, 1)], None, [d(1500, 1, 1), d(1970, 1, 1)],
                                         [d(1500, 1, 1)]]
    assert rebase(lists.slice(2)).to_pylist() == [[d(1500, 1, 1), d(1970, 1, 1)], [d(1500, 1, 1)]]
    maps = pa.MapArray.from_arrays(pa.array([0, 2, 3]), pa.array(["a", "b", "c"]),
                                   _dates(old, new, old))
    assert rebase(maps.slice(1)).to_pylist() == [[("c", d(1500, 1, 1))]]
    struct = pa.StructArray.from_arrays([_dates(old, old, new)], ["d"],
                                        mask=pa.array([False, True, False]))
    assert rebase(struct.slice(1)).to_pylist() == [None, {"d": d(1970, 1, 1)}]


# --- which files are hybrid -------------------------------------------------------------------


def _facts(path) -> tuple:
    f = footer_facts(po.ORCFile(str(path)).reader.serialized_file_tail())
    return f.calendar, f.writer, f.hive3_acid, f.hybrid


def test_calendar_of_corpus_and_pyarrow_files(tmp_path):
    # Hive 3.1 ACID files (ORC Java 1.5, no calendar field, hive.acid.version): proleptic
    assert _facts(corpus_table("nation25k") / "base_0000002/bucket_00000") == (None, 0, True, False)
    # Hive 3.1 CTAS through Impala's ORC (JULIAN_GREGORIAN recorded): hybrid
    assert _facts(corpus_table("alltypes_original") / "000000_0") == (1, 0, False, True)
    # ORC C++ (pyarrow, and this library's writers): writer 1, no calendar field: proleptic
    po.write_table(pa.table({"d": _dates(-719162)}), str(tmp_path / "pa.orc"))
    assert _facts(tmp_path / "pa.orc") == (None, 1, False, False)


def test_hybrid_corpus_file_reads_as_before(corpus_copy):
    # alltypes_original is hybrid, but holds no value before 1582: nothing changes
    path = corpus_copy("alltypes_original")
    t = read_table(path, columns="id,timestamp_col")
    assert t.num_rows == 7300
    assert t.column("timestamp_col")[0].as_py() == datetime.datetime(2009, 10, 1)
    assert t.equals(read_table(path, columns="id,timestamp_col", rebaseDatetime="false"))


# --- Hive 2.3's own files -----------------------------------------------------------------------


def _rows(dates, times) -> list:
    return [[i, d, t, (d, t), [d, d], {"k": t}] for i, (d, t) in enumerate(zip(dates, times))]


def _no_trailing_zeros(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def _hive_text(v) -> str:
    """Our value in Hive's text form (fraction without trailing zeros)."""
    if isinstance(v, datetime.datetime):
        return _no_trailing_zeros(v.isoformat(sep=" "))
    return v.isoformat()


def _expected(text: str) -> str:
    """What we promise for Hive's text: the same, except that a Julian leap day the proleptic
    calendar lacks (Hive shows 1000-02-29) becomes the next day, as in Spark."""
    text = _no_trailing_zeros(text)
    year, rest = int(text[:4]), text[4:]
    if rest.startswith("-02-29") and not (year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)):
        return f"{year:04d}-03-01{rest[6:]}"
    return text


def _flat(row) -> list:
    """(id, d, ts, s.d, s.ts, a[0], a[1], m['k']) of a row as text."""
    i, d, ts, s, a, m = row
    m = m if isinstance(m, dict) else dict(m)
    return [i] + [_hive_text(v) if not isinstance(v, str) else v
                  for v in (d, ts, s[0], s[1], a[0], a[1], m["k"])]


def _ours(path, **options) -> list:
    t = read_table(str(path), **options)
    rows = [(r["id"], r["d"], r["ts"], (r["s"]["d"], r["s"]["ts"]), r["a"], r["m"])
            for r in t.to_pylist()]
    return sorted(_flat(r) for r in rows)


def _hive(hive_ref, path) -> list:
    return sorted([v[0]] + [_expected(x) for x in _flat(v)[1:]] for _, v in hive_ref.read(path, COLUMNS))


def _drop_calendar(path: Path, add_hive3_marker: bool = False) -> None:
    """Remove ``Footer.calendar`` (11) from an ORC file, as Java ORC wrote before ORC-27;
    optionally add ``hive.acid.version`` as Hive 3's ACID writers do."""
    data = path.read_bytes()
    ps_len = data[-1]
    ps = fields(data[-1 - ps_len:-1])
    values = {n: raw for n, _, raw in ps}
    footer_len = read_varint(values[1], 0)[0]
    compressed = read_varint(values[2], 0)[0]
    assert compressed in (0, 1), "ZLIB or uncompressed only"
    start = len(data) - 1 - ps_len - footer_len
    footer, i = data[start:start + footer_len], 0
    if compressed:
        plain = b""
        while i < len(footer):
            header = int.from_bytes(footer[i:i + 3], "little")
            chunk = footer[i + 3:i + 3 + (header >> 1)]
            plain += chunk if header & 1 else zlib.decompressobj(-15).decompress(chunk)
            i += 3 + (header >> 1)
        footer = plain
    kept = [(n, w, raw) for n, w, raw in fields(footer) if n != 11]
    assert len(kept) == len(fields(footer)) - 1, "the file had a calendar field"
    footer = b"".join(varint((n << 3) | w) + raw for n, w, raw in kept)
    if compressed:
        footer = as_original_chunks(footer, 1 << 20)
    new_ps = b"".join(varint((n << 3) | w) + (varint(len(footer)) if n == 1 else raw)
                      for n, w, raw in ps)
    out = data[:start] + footer + new_ps + bytes((len(new_ps),))
    if add_hive3_marker:
        out = add_user_metadata_to_bytes(out, {"hive.acid.version": b"2"})
    path.write_bytes(out)
    (path.parent / f".{path.name}.crc").unlink(missing_ok=True)  # Hadoop's checksum of the old bytes


@pytest.fixture(scope="module")
def hive2_table(hive_ref, tmp_path_factory):  # noqa: F811
    """A Hive 2.3 ACID table holding the issue's values, written by Hive."""
    t = tmp_path_factory.mktemp("hive2") / "t"
    hive_ref.write(t, COLUMNS, txn=1, inserts=_rows(DATES, TIMES))
    return t


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


@pytest.mark.hive
def test_issue_values_read_as_hive_reads_them(hive_ref, hive2_table):  # noqa: F811
    ours = _ours(hive2_table)
    assert ours == _hive(hive_ref, hive2_table)
    d = {row[0]: row[1] for row in ours}
    assert d == {0: "0001-01-01", 1: "1000-03-01", 2: "1582-10-04", 3: "1582-10-15",
                 4: "1900-01-01"}
    assert [row[2] for row in ours] == ["0001-01-01 00:00:00", "1000-03-01 12:34:56.789",
                                        "1582-10-04 23:59:59.999999", "1582-10-15 00:00:01",
                                        "1900-01-01 10:00:00"]


@pytest.mark.hive
def test_option_off_reads_the_stored_day_numbers(hive2_table):
    table = read_table(str(hive2_table), rebaseDatetime="false", columns="id,d,ts")
    [data] = list(hive2_table.glob("delta_*/bucket_00000"))
    raw = po.ORCFile(str(data)).read(columns=["row.d"]).column(0).combine_chunks()
    stored = raw.field("d").view(pa.int32()).to_pylist()
    assert table.column("d").combine_chunks().view(pa.int32()).to_pylist() == stored
    # Julian day numbers (Spark's table starts at 0001-01-01 = -719164; 1582-10-04 is the day
    # before 1582-10-15): what a reader without rebasing shows, 2 and 10 days off
    assert [stored[0], stored[2], stored[3], stored[4]] == [-719164, -141428, -141427, -25567]
    us = table.column("ts").combine_chunks().view(pa.int64()).to_pylist()
    assert [u // 86_400_000_000 for u in us] == stored


@pytest.mark.hive
def test_random_old_dates_match_hive(hive_ref, tmp_path):  # noqa: F811
    """300 random Julian/Gregorian dates and times of day of years 1-1700 (seeded), written by
    Hive 2.3 as an ACID delta and as an original file, read back as Hive reads them."""
    rng = random.Random(1582)
    month_days = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    dates, times = [], []
    while len(dates) < 300:
        y, m = rng.randint(1, 1700), rng.randint(1, 12)
        last = month_days[m - 1] if m != 2 or y % 4 == 0 and (y <= 1582 or y % 100 or y % 400 == 0) \
            else 28
        d = rng.randint(1, last)
        if y == 1582 and m == 10 and 5 <= d <= 14:
            continue  # days the hybrid calendar skips
        dates.append(f"{y:04d}-{m:02d}-{d:02d}")
        times.append(f"{dates[-1]} {rng.randrange(24):02d}:{rng.randrange(60):02d}:"
                     f"{rng.randrange(60):02d}.{rng.randrange(10**6):06d}")
    acid = tmp_path / "acid"
    hive_ref.write(acid, COLUMNS, txn=1, inserts=_rows(dates, times))
    assert _ours(acid) == _hive(hive_ref, acid)
    original = tmp_path / "original"
    hive_ref.write_original(original / "000000_0", COLUMNS, _rows(dates, times))
    assert _ours(original) == _hive(hive_ref, acid)


@pytest.mark.hive
def test_files_without_the_calendar_field(hive_ref, hive2_table, tmp_path):  # noqa: F811
    """Java ORC before 1.6 wrote no calendar: hybrid (Hive 2), unless Hive 3's ACID writer
    marked the file (``hive.acid.version``): proleptic, read as stored."""
    old = _copy(hive2_table, tmp_path / "old")
    [data] = list(old.glob("delta_*/bucket_00000"))
    _drop_calendar(data)
    assert _facts(data) == (None, 0, False, True)
    assert _ours(old) == _hive(hive_ref, old) == _hive(hive_ref, hive2_table)
    hive3 = _copy(hive2_table, tmp_path / "hive3")
    [data] = list(hive3.glob("delta_*/bucket_00000"))
    _drop_calendar(data, add_hive3_marker=True)
    assert _facts(data) == (None, 0, True, False)
    assert read_table(str(hive3)).equals(read_table(str(hive2_table), rebaseDatetime="false"))


@pytest.mark.hive
def test_stripe_statistics_of_hybrid_files_skip_nothing_they_should_not(hive_ref, tmp_path):  # noqa: F811
    """The statistics of a hybrid file hold stored day numbers (Julian 1000-02-29 looks like
    1000-02-24): a filter on the rebased value must not skip the stripe."""
    t = tmp_path / "t"
    hive_ref.write(t, [("id", "int"), ("d", "date")], txn=1, inserts=[[1, "1000-02-29"]])
    scan = open_scan({"path": str(t)})
    types = {c.name.lower(): c.type for c in scan.data_columns}
    schema = pa.schema([pa.field(c.name, c.type) for c in scan.data_columns])

    def read(f):
        pred = DataPredicate((compile_filter(f, types),),
                             tuple((c.name.lower(), i) for i, c in enumerate(scan.data_columns)))
        reader = TaskReader(scan.fs, scan.read_spec(schema, pred, pred.column_indexes))
        return [r["id"] for task in scan.tasks() for b in reader.read(task) for r in b.to_pylist()]

    assert read(EqualTo(("d",), datetime.date(1000, 3, 1))) == [1]
    assert read(GreaterThanOrEqual(("d",), datetime.date(1000, 2, 25))) == [1]
    assert read(GreaterThanOrEqual(("d",), datetime.date(1582, 10, 15))) == []


# --- through Spark --------------------------------------------------------------------------


@pytest.mark.hive
@pytest.mark.spark
def test_spark_reads_hive2_values_and_its_own(spark, hive_ref, hive2_table, tmp_path):  # noqa: F811
    df = spark.read.format("hiveacid").load(str(hive2_table))
    got = sorted([r["id"], _hive_text(r["d"]), _hive_text(r["ts"])] for r in df.collect())
    assert got == [row[:3] for row in _hive(hive_ref, hive2_table)]
    # the library's own files are proleptic: written and read back unchanged
    ours = str(tmp_path / "ours")
    df.select("id", "d", "ts").write.format("hiveacid").mode("append").save(ours)
    back = spark.read.format("hiveacid").load(ours)
    assert sorted(map(tuple, back.collect())) == sorted(map(tuple, df.select("id", "d", "ts").collect()))
    assert read_table(ours).sort_by("id").column("d").to_pylist()[:2] == [
        datetime.date(1, 1, 1), datetime.date(1000, 3, 1)]
