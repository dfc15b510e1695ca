"""The slow path for ORC stripes pyarrow cannot decode: timestamps outside its nanosecond range
(before 1677 or after 2262) and hybrid-calendar dates before year 1. Such stripes are rare
(historic data), so a per-row decode through pyorc is acceptable here and only here."""
from __future__ import annotations

import io
from datetime import tzinfo
from typing import BinaryIO, NoReturn

import pyarrow as pa
import pyorc
from pyorc.converters import ORCConverter

from ..acid.types import normalize_read_type
from ..io.filesystem import FileSystem
from .plan import FileSlice


class _MicrosConverter(ORCConverter):
    """pyorc converter: ORC timestamps as integer microseconds (no datetime range limits)."""

    @staticmethod
    def from_orc(seconds: int, nanoseconds: int, timezone: tzinfo) -> int:
        return seconds * 1_000_000 + nanoseconds // 1000

    @staticmethod
    def to_orc(obj: object, timezone: tzinfo) -> NoReturn:  # pragma: no cover - never written
        raise NotImplementedError


class _DaysConverter(ORCConverter):
    """pyorc converter: ORC dates as integer days (Python dates stop at year 1; hybrid-calendar
    files hold earlier day numbers, e.g. Julian 0001-01-01)."""

    @staticmethod
    def from_orc(days: int) -> int:
        return days

    @staticmethod
    def to_orc(obj: object) -> NoReturn:  # pragma: no cover - never written through this converter
        raise NotImplementedError


def read_stripe_microseconds(fs: FileSystem, s: FileSlice, stripe: int,
                             schema: pa.Schema) -> pa.RecordBatch:
    """Decode one stripe with pyorc: timestamps as microseconds, dates as day numbers."""
    target = pa.schema([pa.field(f.name, normalize_read_type(f.type, f.name)) for f in schema])
    with s_open(fs, s) as fh:
        reader = pyorc.Reader(fh, struct_repr=pyorc.StructRepr.DICT,
                              converters={pyorc.TypeKind.TIMESTAMP: _MicrosConverter,
                                          pyorc.TypeKind.DATE: _DaysConverter})
        rows = list(reader.read_stripe(stripe))
    return pa.RecordBatch.from_pylist(rows, schema=target)


def s_open(fs: FileSystem, s: FileSlice) -> BinaryIO:
    """The slice's file, cut at its flush length (a streaming delta) when it has one."""
    if s.flush_length is None:
        return fs.open_input(s.path)
    with fs.open_input(s.path) as f:
        return io.BytesIO(f.read(s.flush_length))
