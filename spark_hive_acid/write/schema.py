"""Matching incoming data to a table's columns: names, order and safe widening."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from ..acid.char_types import TextLimit, enforce, text_limit
from ..acid.layout import TableLayout
from ..acid.types import arrow_to_hive, can_convert, hive_to_arrow
from ..exceptions import HiveAcidError, SchemaMismatchError

@dataclass(frozen=True)
class ColumnMapping:
    """How to turn an incoming batch into (table row columns, partition columns)."""

    data_sources: tuple[int, ...]  # incoming column index for each table data column
    partition_sources: tuple[int, ...]
    row_type: pa.StructType  # the ORC ``row`` struct (table data columns, Hive names)
    partition_names: tuple[str, ...]
    partition_types: tuple[pa.DataType, ...]
    #: per partition column whose source is -1 (not in the data): its value (a static partition
    #: overwrite's spec), as Hive text; None: the default partition
    partition_constants: tuple[Optional[str], ...] = ()
    #: per data column: Hive's char(n) / varchar(n) length rule (``acid.char_types``), or None
    text_limits: tuple[TextLimit, ...] = ()

    def conform(self, batch: pa.RecordBatch) -> tuple[pa.RecordBatch, list[pa.Array]]:
        cols = []
        limits = self.text_limits or (None,) * len(self.data_sources)
        for src, f, limit in zip(self.data_sources, self.row_type, limits):
            cols.append(enforce(_cast(batch.column(src), f.type), limit) if src >= 0
                        else pa.nulls(batch.num_rows, f.type))
        data = pa.RecordBatch.from_arrays(cols, schema=pa.schema(list(self.row_type)))
        parts = [batch.column(i) if i >= 0 else
                 _constant(self.partition_constants[k], self.partition_types[k], batch.num_rows)
                 for k, i in enumerate(self.partition_sources)]
        return data, parts


def _constant(value: Optional[str], typ: pa.DataType, n: int) -> pa.Array:
    if value is None:
        return pa.nulls(n, typ)
    return pa.repeat(pa.scalar(value, pa.string()).cast(typ), n)


def _cast(arr: pa.Array, typ: pa.DataType) -> pa.Array:
    if arr.type == typ:
        return arr
    if pa.types.is_timestamp(arr.type) and pa.types.is_timestamp(typ) and arr.type.tz:
        arr = arr.cast(pa.timestamp(arr.type.unit))  # keep the UTC wall clock
    return pc.cast(arr, typ, safe=True)


def _cast_hint(name: str, src: pa.DataType, hive_type: str, typ: pa.DataType) -> str:
    """What is wrong with one column and the fix, in Spark terms first (``cast("int")``)."""
    try:
        given = arrow_to_hive(src, name)
    except HiveAcidError:
        given = str(src)
    spark_type = re.sub(r"\b(?:var)?char\(\d+\)", "string", hive_type.lower())
    return (f"{name} is {given} in the data but {hive_type} in the table, which cannot hold every "
            f"value; cast it: df.withColumn('{name}', F.col('{name}').cast('{spark_type}')) "
            f"(pyarrow: cast to {typ})")


def row_type_of(layout: TableLayout) -> pa.StructType:
    return pa.struct([pa.field(n, hive_to_arrow(t, n)) for n, t in layout.columns])


def map_columns(layout: TableLayout, incoming: pa.Schema, *, table: str = "",
                constants: Sequence[tuple[str, Optional[str]]] = (),
                fill_missing: bool = False) -> ColumnMapping:
    """Match ``incoming`` columns to the table by name (case-insensitive); raise
    SchemaMismatchError naming every missing, extra or incompatible column. ``constants``:
    partition columns the data may leave out, with their value (a static partition spec);
    ``fill_missing`` (option mergeSchema): data columns the data lacks are written as NULL."""
    by_name: dict[str, int] = {}
    for i, name in enumerate(incoming.names):
        by_name.setdefault(name.lower(), i)
    wanted = [(n, hive_to_arrow(t, n)) for n, t in layout.columns]
    parts = [(n, hive_to_arrow(t, n)) for n, t in layout.partition_columns]
    missing: list[str] = []
    bad: list[str] = []
    data_src: list[int] = []
    part_src: list[int] = []
    hive_types = {n.lower(): t for n, t in layout.columns + layout.partition_columns}
    fixed = {n.lower(): v for n, v in constants}
    for (name, typ), dst in [(w, data_src) for w in wanted] + [(p, part_src) for p in parts]:
        found = by_name.get(name.lower())
        if found is None and ((dst is part_src and name.lower() in fixed)
                              or (dst is data_src and fill_missing)):
            dst.append(-1)
            continue
        if found is None:
            missing.append(name)
            continue
        dst.append(found)
        src_type = incoming.field(found).type
        if not can_convert(src_type, typ, lossless=True):
            bad.append(_cast_hint(name, src_type, hive_types[name.lower()], typ))
    known = {n.lower() for n, _ in wanted + parts}
    extra = [n for n in incoming.names if n.lower() not in known]
    problems = []
    if missing:
        problems.append(f"missing column(s) {', '.join(missing)}")
    if extra:
        problems.append(
            f"column(s) not in the table: {', '.join(extra)} (new columns: add them first with "
            "HiveAcidTable.addColumns(...), or write with .option('mergeSchema', 'true'))")
    if bad:
        problems.append("incompatible type(s): " + "; ".join(bad))
    if problems:
        cols = ", ".join(f"{n} {t}" for n, t in layout.columns + layout.partition_columns)
        raise SchemaMismatchError(
            f"The data does not match table {table}: " + "; ".join(problems)
            + f". The table has: {cols}. Nothing was written.")
    return ColumnMapping(tuple(data_src), tuple(part_src), row_type_of(layout),
                         tuple(n for n, _ in parts), tuple(t for _, t in parts),
                         tuple(fixed.get(n.lower()) for n, _ in parts),
                         tuple(text_limit(t) for _, t in layout.columns))


def check_names(names: Sequence[str], available: Sequence[str], what: str) -> None:
    low = {a.lower() for a in available}
    unknown = [n for n in names if n.lower() not in low]
    if unknown:
        from ..exceptions import InvalidOptionError
        raise InvalidOptionError(
            f"{what} names unknown column(s) {', '.join(unknown)}; the data has {', '.join(available)}")
