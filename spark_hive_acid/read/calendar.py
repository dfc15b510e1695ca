"""Dates and timestamps of ORC files written on the hybrid Julian/Gregorian calendar.

Hive before 3.1 and Spark before 3.0 computed dates and timestamps with ``java.sql`` types on
Java's hybrid calendar: Julian before 1582-10-15, Gregorian from then on. Hive 3.1+, Spark 3+,
ORC C++ (pyarrow) and this library use the proleptic Gregorian calendar. Both store days (and
seconds) since 1970-01-01, so a day number below 1582-10-15 names different dates in the two:
Hive 2 stored '1500-01-01' as day -171655, which is 1500-01-10 proleptic.

Which calendar a file uses is decided once per file, from its footer (:func:`file_is_hybrid`);
values of hybrid files are then *rebased* (:func:`rebase`): the Julian date-time fields a value
has are kept, and the proleptic Gregorian value with those fields is returned, exactly as Spark's
``RebaseDateTime.rebaseJulianToGregorianDays`` does. A Julian leap day the Gregorian calendar
lacks (1000-02-29) becomes the next day (1000-03-01), as in Spark. Timestamps are Hive's
zone-less wall-clock values: the time of day is kept and only the day is rebased (Spark's rebase
in UTC). Only values before 1582-10-15 change.
"""
from __future__ import annotations

import datetime
import logging
from dataclasses import dataclass
from typing import Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as po

from ..exceptions import CorruptFileError
from ..io.protobuf import fields, payload, read_varint
from .pushdown import Cond

log = logging.getLogger(__name__)

#: 1582-10-15, the first Gregorian day: the same day number in both calendars; every day number
#: from here on names the same date in both.
SWITCH_DAY = -141427
_JULIAN_YEAR_1 = -719164  # Julian 0001-01-01
_SWITCH_DATE = datetime.date(1582, 10, 15)
_SWITCH_DATETIME = datetime.datetime(1582, 10, 15)
_UNITS_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}

# orc_proto.proto: FileTail.footer = 2; Footer.metadata = 5, writer = 9, calendar = 11;
# UserMetadataItem.name = 1; CalendarKind JULIAN_GREGORIAN = 1, PROLEPTIC_GREGORIAN = 2.
_TAIL_FOOTER = 2
_FOOTER_METADATA, _FOOTER_WRITER, _FOOTER_CALENDAR = 5, 9, 11
JULIAN_GREGORIAN, PROLEPTIC_GREGORIAN = 1, 2
ORC_JAVA = 0
HIVE3_ACID_KEY = b"hive.acid.version"  # Hive 3's ACID writers (OrcRecordUpdater) set it


@dataclass(frozen=True)
class FooterFacts:
    """What an ORC footer says about the calendar of its dates and timestamps."""

    calendar: Optional[int]  # Footer.calendar; None: absent (ORC Java before 1.6, ORC C++)
    writer: Optional[int]  # Footer.writer; None: absent (old ORC Java)
    hive3_acid: bool  # user metadata hive.acid.version present

    @property
    def hybrid(self) -> bool:
        """The decision documented in docs/reading.md ("Dates before 1582")."""
        if self.calendar in (JULIAN_GREGORIAN, PROLEPTIC_GREGORIAN):
            return self.calendar == JULIAN_GREGORIAN
        if self.writer not in (None, ORC_JAVA):
            return False  # ORC C++ (pyarrow, this library), Presto, Trino...: proleptic
        return not self.hive3_acid  # ORC Java before 1.6: Hive 3.1's ACID files are proleptic


def footer_facts(tail: bytes) -> FooterFacts:
    """Parse the calendar facts out of a serialized ORC ``FileTail`` (footer uncompressed)."""
    footer = b""
    for num, wire, raw in fields(tail):
        if num == _TAIL_FOOTER and wire == 2:
            footer = payload(raw)
    calendar = writer = None
    hive3 = False
    for num, wire, raw in fields(footer):
        if num == _FOOTER_CALENDAR and wire == 0:
            calendar = read_varint(raw, 0)[0]
        elif num == _FOOTER_WRITER and wire == 0:
            writer = read_varint(raw, 0)[0]
        elif num == _FOOTER_METADATA and wire == 2 and not hive3:
            hive3 = any(n == 1 and payload(v) == HIVE3_ACID_KEY for n, _, v in fields(payload(raw)))
    return FooterFacts(calendar, writer, hive3)


def file_is_hybrid(orc: po.ORCFile, path: str) -> bool:
    """Whether the open ORC file ``orc`` stores dates and timestamps on the hybrid calendar.
    Reads nothing more: pyarrow already holds the file's tail."""
    try:
        facts = footer_facts(orc.reader.serialized_file_tail())
    except CorruptFileError as e:
        raise CorruptFileError(f"Cannot read the footer of ORC file {path}: {e}") from e
    log.debug("%s: calendar %s, writer %s, hive.acid.version %s -> %s", path, facts.calendar,
              facts.writer, facts.hive3_acid, "hybrid" if facts.hybrid else "proleptic")
    return facts.hybrid


def columns_to_rebase(orc: po.ORCFile, path: str, acid: bool,
                      positions: list[int]) -> frozenset[int]:
    """Which of the data columns at ``positions`` (of the ``row`` struct if ``acid``) hold dates
    or timestamps to rebase: none unless the file is hybrid. The footer is looked at only when
    such columns are read."""
    struct = orc.schema.field(5).type if acid else orc.schema
    temporal = [i for i in positions if has_temporal(struct.field(i).type)]
    if not temporal or not file_is_hybrid(orc, path):
        return frozenset()
    return frozenset(temporal)


def has_temporal(t: pa.DataType) -> bool:
    """True when ``t`` is, or (nested) contains, a date or timestamp."""
    if pa.types.is_date32(t) or pa.types.is_timestamp(t):
        return True
    return any(has_temporal(t.field(i).type) for i in range(t.num_fields))


def julian_to_gregorian_days(days: np.ndarray) -> np.ndarray:
    """Day numbers of Julian calendar dates -> day numbers of the proleptic Gregorian dates with
    the same year, month and day (int64 in and out, any sign; a Julian Feb 29 the Gregorian
    year lacks becomes Mar 1). Integer arithmetic: floor division keeps it exact for every day."""
    c = days + (2440588 + 32082)  # Julian day number, shifted to a March-based 4-year cycle
    d = (4 * c + 3) // 1461
    e = c - (1461 * d) // 4
    m = (5 * e + 2) // 153
    day = e - (153 * m + 2) // 5 + 1
    month = m + 3 - 12 * (m // 10)
    year = d - 4800 + m // 10
    # proleptic Gregorian day number of (year, month, 1), years starting in March
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * ((month + 9) % 12) + 2) // 5
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468 + (day - 1)


# From Julian 0001-01-01 on, the difference (proleptic minus hybrid day number) is a step
# function: it drops by one on Julian March 1 of each century year the Gregorian calendar does
# not leap (100, 200, 300, 500, ...: the Julian Feb 29 it lacks maps to Mar 1). The same table
# as Spark's RebaseDateTime (julianGregDiffSwitchDay); tests check it against the arithmetic.
_SWITCHES = np.array([_JULIAN_YEAR_1, -682945, -646420, -609895, -536845, -500320, -463795,
                      -390745, -354220, -317695, -244645, -208120, -171595], dtype=np.int64)
_DIFFS = np.arange(2, -11, -1, dtype=np.int64)  # 2, 1, 0, -1, ..., -10


def _rebase_days(days: np.ndarray) -> np.ndarray:
    """:func:`julian_to_gregorian_days` of days before 1582-10-15: a table lookup from year 1
    on (about 4x faster), the arithmetic before it."""
    ad = days >= _JULIAN_YEAR_1
    if ad.all():
        return days + _DIFFS[np.searchsorted(_SWITCHES, days, "right") - 1]
    out = julian_to_gregorian_days(days)
    out[ad] = days[ad] + _DIFFS[np.searchsorted(_SWITCHES, days[ad], "right") - 1]
    return out


def _rebase_values(arr: pa.Array, per_day: int, int_type: pa.DataType) -> pa.Array:
    raw = arr.view(int_type)
    low = pc.min(raw).as_py()
    if low is None or low >= SWITCH_DAY * per_day:
        return arr  # the common case: one vectorised min, no copy
    values = raw.fill_null(0).to_numpy().astype(np.int64)
    early = values < SWITCH_DAY * per_day
    v = values[early]
    day = v // per_day
    values[early] = _rebase_days(day) * per_day + (v - day * per_day)
    mask = raw.is_null().to_numpy(zero_copy_only=False) if raw.null_count else None
    return pa.array(values, int_type, mask=mask).view(arr.type)


def rebase(arr: pa.Array) -> pa.Array:
    """``arr`` with its dates and timestamps (nested ones too) rebased from the hybrid to the
    proleptic Gregorian calendar; ``arr`` itself when nothing is before 1582-10-15."""
    t = arr.type
    if pa.types.is_date32(t):
        return _rebase_values(arr, 1, pa.int32())
    if pa.types.is_timestamp(t):
        return _rebase_values(arr, 86400 * _UNITS_PER_SECOND[t.unit], pa.int64())
    if not has_temporal(t):
        return arr
    mask = arr.is_null() if arr.null_count else None
    if pa.types.is_struct(t):
        children = [arr.field(i) for i in range(t.num_fields)]
        rebased = [rebase(c) for c in children]
        if all(a is b for a, b in zip(rebased, children)):
            return arr
        return pa.StructArray.from_arrays(rebased, fields=list(t), mask=mask)
    if pa.types.is_map(t):
        offsets, start, n = _window(arr)
        return pa.MapArray.from_arrays(offsets, rebase(arr.keys.slice(start, n)),
                                       rebase(arr.items.slice(start, n)), type=t, mask=mask)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        offsets, start, n = _window(arr)
        return type(arr).from_arrays(offsets, rebase(arr.values.slice(start, n)), type=t,
                                     mask=mask)
    return arr  # fixed-size lists, unions: not produced by the ORC reader for Hive types


def _window(arr: pa.Array) -> tuple[pa.Array, int, int]:
    """A list/map array's offsets rebased to 0, and the (start, length) of the child values
    they cover: ``.offsets`` of a slice point into the whole, unsliced child arrays."""
    offsets = arr.offsets
    start, end = offsets[0].as_py(), offsets[-1].as_py()
    if start:
        offsets = pc.subtract(offsets, pa.scalar(start, offsets.type))
    return offsets, start, end - start


def stats_decide_exactly(cond: Cond) -> bool:
    """Whether ORC statistics of a hybrid file (raw day numbers) still decide ``cond`` as the
    rebased values would. Rebasing only changes values before 1582-10-15, maps them to values
    before it and keeps their order, so a comparison with a later literal is unchanged."""
    if cond.child is not None:
        return stats_decide_exactly(cond.child)
    value = cond.value
    if isinstance(value, pa.Array):
        values = value.to_pylist()
    else:
        values = [value.as_py() if isinstance(value, pa.Scalar) else value]
    for v in values:
        if isinstance(v, datetime.datetime) and v.replace(tzinfo=None) < _SWITCH_DATETIME:
            return False
        if type(v) is datetime.date and v < _SWITCH_DATE:
            return False
    return True
