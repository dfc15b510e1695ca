"""Conditions and values given as SQL strings or Columns, and the columns they read."""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence, Union

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..exceptions import InvalidOptionError
from ..acid.names import ROW_ID_COLUMN as ROW_ID
from ._compat import plan_references

ColumnOrStr = Union[Column, str]


def assignments(given: Any, what: str) -> dict[str, Any]:
    """``set=`` / ``values=`` of DML: a non-empty dict ``{column: SQL string, Column or literal}``;
    anything else an InvalidOptionError showing the form (``what``: ``"update(set=...)"``)."""
    example = f"{what.split('=')[0]}={{'qty': 'qty + 1'}})"
    if not isinstance(given, Mapping):
        raise InvalidOptionError(
            f"{what} needs a dict {{column: expression}}, not {type(given).__name__}: "
            f"e.g. {example}")
    if not given:
        raise InvalidOptionError(f"{what} needs at least one column: e.g. {example}")
    bad = [k for k in given if not isinstance(k, str)]
    if bad:
        raise InvalidOptionError(f"{what}: the keys are column names, not {bad[0]!r}")
    return dict(given)


def to_column(c: Optional[ColumnOrStr]) -> Column:
    if c is None:
        return F.lit(True)
    if isinstance(c, str):
        return F.expr(c)
    if isinstance(c, Column):
        return c
    raise InvalidOptionError(
        f"A condition or value must be a SQL string or a Column, not {type(c).__name__}")


def to_value(v: Any) -> Column:
    if isinstance(v, (str, Column)):
        return to_column(v)
    return F.lit(v)


def int_literal(v: Optional[int]) -> Column:
    return F.lit(v).cast("int")


def union_names(first: Sequence[str], then: Sequence[str]) -> list[str]:
    seen = {n.lower() for n in first}
    return list(first) + [n for n in then if n.lower() not in seen]


def referenced_columns(df: DataFrame, condition: Column) -> Optional[list[str]]:
    """The columns of ``df`` that ``condition`` reads, from Spark's analyzed plan, in ``df``'s
    order; ``row__id`` excluded (the target always has it). None when they cannot be told (e.g.
    Spark Connect has no JVM plan): callers then read every column."""
    names = plan_references(df, [condition], [])
    by_lower = {c.lower(): c for c in df.columns}
    if names is None or not names <= set(by_lower):
        return None
    return [c for c in df.columns if c.lower() in names and c != ROW_ID]
