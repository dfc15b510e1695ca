"""Filter pushdown: Spark's pushed filters, compiled to exact vectorised predicates.

A filter is accepted only when it can be applied exactly (Spark never re-checks accepted
filters): comparisons, IN, null tests, string prefix/suffix/contains and NOT of those, on a
top-level column of a primitive type. Partition-column filters prune partitions at planning;
data-column filters run on each batch with pyarrow.compute, with SQL's three-valued logic.
"""
from __future__ import annotations

import datetime
import decimal
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

import pyarrow as pa
import pyarrow.compute as pc

_COMPARE = {"EqualTo": "equal", "GreaterThan": "greater", "GreaterThanOrEqual": "greater_equal",
            "LessThan": "less", "LessThanOrEqual": "less_equal"}
_STRING = {"StringStartsWith": "starts_with", "StringEndsWith": "ends_with",
           "StringContains": "match_substring"}


@dataclass(frozen=True)
class Cond:
    """A compiled filter: ``op`` on column ``column`` with ``value`` (already an Arrow scalar)."""

    op: str
    column: str
    value: Any = None
    child: Optional["Cond"] = None


def _primitive(t: pa.DataType) -> bool:
    return (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_string(t)
            or pa.types.is_boolean(t) or pa.types.is_date32(t) or pa.types.is_decimal(t)
            or pa.types.is_timestamp(t))


def _scalar(value: Any, t: pa.DataType) -> Optional[pa.Scalar]:
    if value is None:
        return None
    if pa.types.is_timestamp(t) and isinstance(value, datetime.datetime) and value.tzinfo:
        return None  # an instant against a zone-less Hive timestamp: let Spark decide
    if isinstance(value, bool) != pa.types.is_boolean(t):
        return None
    if pa.types.is_floating(t) and isinstance(value, decimal.Decimal):
        return None
    try:
        s = pa.scalar(value, type=t)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
        return None
    return s


def compile_filter(f: Any, types: Mapping[str, pa.DataType]) -> Optional[Cond]:
    """The Cond for a pyspark.sql.datasource filter, or None if it cannot be applied exactly."""
    kind = type(f).__name__
    if kind == "Not":
        child = compile_filter(f.child, types)
        return Cond("not", child.column, child=child) if child else None
    attr = getattr(f, "attribute", None)
    if not isinstance(attr, tuple) or len(attr) != 1:
        return None
    col = attr[0].lower()
    t = types.get(col)
    if t is None or not _primitive(t):
        return None
    if kind in ("IsNull", "IsNotNull"):
        return Cond(kind, col)
    if kind in _COMPARE or kind == "EqualNullSafe":
        s = _scalar(f.value, t)
        if s is None:
            return Cond("is_null", col) if kind == "EqualNullSafe" and f.value is None else None
        return Cond(_COMPARE.get(kind, "null_safe_equal"), col, s)
    if kind == "In":
        values = list(f.value)
        if any(v is None for v in values):
            return None
        scalars = [s for s in (_scalar(v, t) for v in values) if s is not None]
        if len(scalars) != len(values):
            return None
        return Cond("in", col, pa.array([s.as_py() for s in scalars], type=t))
    if kind in _STRING and pa.types.is_string(t) and isinstance(f.value, str):
        return Cond(_STRING[kind], col, f.value)
    return None


def evaluate(c: Cond, columns: Mapping[str, pa.Array]) -> pa.Array:
    """Boolean array (nulls = unknown) of one condition."""
    a = columns[c.column]
    if c.op == "not":
        assert c.child is not None, "compile_filter builds 'not' with its child"
        return pc.invert(evaluate(c.child, columns))
    if c.op == "IsNull" or c.op == "is_null":
        return pc.is_null(a)
    if c.op == "IsNotNull":
        return pc.is_valid(a)
    if c.op == "null_safe_equal":
        return pc.fill_null(pc.equal(a, c.value), False)
    if c.op == "in":
        hit = pc.is_in(a, value_set=c.value)
        return pc.if_else(pc.is_null(a), pa.scalar(None, pa.bool_()), hit)
    if c.op in ("starts_with", "ends_with", "match_substring"):
        return getattr(pc, c.op)(a, pattern=c.value)
    return getattr(pc, c.op)(a, c.value)


def evaluate_all(conds: Sequence[Cond], columns: Mapping[str, pa.Array]) -> Optional[pa.Array]:
    result = None
    for c in conds:
        r = evaluate(c, columns)
        result = r if result is None else pc.and_kleene(result, r)
    return result


@dataclass(frozen=True)
class DataPredicate:
    """Picklable predicate over a batch's data columns (keyed by table position)."""

    conds: tuple[Cond, ...]
    index_of: tuple[tuple[str, int], ...]  # column name -> data column position

    @property
    def column_indexes(self) -> tuple[int, ...]:
        used = {c.column for c in self.conds}
        return tuple(i for n, i in self.index_of if n in used)

    def __call__(self, data: Mapping[int, pa.Array]) -> Optional[pa.Array]:
        cols = {n: data[i] for n, i in self.index_of if i in data}
        return evaluate_all(self.conds, cols)
