"""Which Hive columns a target can hold, checked before anything is written.

The converter writes the table as our reader returns it (docs/reading.md, "Schema"): Hive types
become Arrow types, and each target maps those exactly:

| Hive | Arrow (our read) | Iceberg | Delta |
|---|---|---|---|
| boolean, int, bigint, float, double | same | same | same |
| tinyint, smallint | int8, int16 | int (Iceberg has no smaller integer; values kept) | byte, short |
| decimal(p,s) | decimal128(p,s) | decimal(p,s) | decimal(p,s) |
| string, char(n), varchar(n) | string | string | string |
| binary | binary | binary | binary |
| date | date32 | date | date |
| timestamp | timestamp[us] (no zone) | timestamp (without zone) | timestamp_ntz |
| array, map, struct | list, map, struct | list, map, struct | array, map, struct |

What a target cannot hold is an :class:`~spark_hive_acid.exceptions.UnsupportedTypeError`
naming the column: Hive's ``void`` (null type) in both, and in Delta (without column mapping)
a column or field name with one of `` ,;{}()\\n\\t=``.
"""
from __future__ import annotations

from typing import Iterator

import pyarrow as pa

from ..exceptions import UnsupportedTypeError

DELTA_BAD_NAME_CHARS = " ,;{}()\n\t="


def _fields(t: pa.DataType, path: str) -> Iterator[tuple[str, pa.DataType]]:
    yield path, t
    if pa.types.is_struct(t):
        for f in t:
            yield from _fields(f.type, f"{path}.{f.name}")
    elif pa.types.is_map(t):
        yield from _fields(t.key_type, f"{path}.key")
        yield from _fields(t.item_type, f"{path}.value")
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        yield from _fields(t.value_type, f"{path}.element")


def _every(schema: pa.Schema) -> Iterator[tuple[str, pa.DataType]]:
    for f in schema:
        yield from _fields(f.type, f.name)


def _common(schema: pa.Schema, target: str) -> None:
    for path, t in _every(schema):
        if pa.types.is_null(t):
            raise UnsupportedTypeError(
                f"Column {path} has Hive type void (no values): {target} has no such type. "
                "Leave the column out of the conversion (option columns) or cast it in Hive")
        if pa.types.is_union(t):
            raise UnsupportedTypeError(
                f"Column {path} is a Hive uniontype, which {target} cannot hold; leave it out "
                "(option columns)")


def check_iceberg(schema: pa.Schema) -> None:
    """UnsupportedTypeError for a column Iceberg cannot hold."""
    _common(schema, "Iceberg")
    seen: dict[str, str] = {}
    for f in schema:
        low = f.name.lower()
        if low in seen:
            raise UnsupportedTypeError(f"Columns {seen[low]} and {f.name} differ only by case")
        seen[low] = f.name


def check_delta(schema: pa.Schema) -> None:
    """UnsupportedTypeError for a column Delta (without column mapping) cannot hold."""
    _common(schema, "Delta")
    for path, _ in _every(schema):
        name = path.rsplit(".", 1)[-1]
        bad = sorted({c for c in name if c in DELTA_BAD_NAME_CHARS})
        if bad:
            shown = ", ".join(repr(c) for c in bad)
            raise UnsupportedTypeError(
                f"Column {path}: Delta tables without column mapping cannot have {shown} in a "
                "column name. Rename the column in Hive, or leave it out (option columns)")
