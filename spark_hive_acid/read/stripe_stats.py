"""What ORC stripe statistics prove, so the reader can decode less.

* Stripe skipping (``stripes_to_skip``): no row of the stripe can satisfy the pushed filters.
* Known ROW__IDs (``stripe_keys``): the key columns of a stripe are constant or a plain range,
  so they need not be decoded (about a fifth of the decode time of a typical table otherwise).

Stripe skipping only ever skips stripes; rows of kept stripes are still filtered exactly by the predicate, so a
conservative answer ("keep") is always correct. Skipping a stripe never affects deletes: a delete
event only removes rows, it cannot add any.
"""
from __future__ import annotations

import datetime
import decimal
import logging
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import pyorc

from .pushdown import Cond

log = logging.getLogger(__name__)

_RANGE_OPS = {"equal", "greater", "greater_equal", "less", "less_equal", "in", "null_safe_equal"}
_COMPARABLE = (int, float, str, datetime.date, decimal.Decimal)


def _value(v: Any) -> Any:
    """A condition's value as Python (Arrow scalars are converted)."""
    return v.as_py() if hasattr(v, "as_py") else v


def cond_rules_out(c: Cond, stats: Optional[dict]) -> bool:
    """True when a column with these stripe statistics cannot satisfy ``c``.

    ``stats`` None means the column is absent from the file (added later): every value is null.
    """
    if c.op == "IsNull":
        return stats is not None and not stats.get("has_null", True)
    if c.op == "IsNotNull":
        return stats is None or stats.get("number_of_values", 1) == 0
    if c.op not in _RANGE_OPS:
        return False
    if stats is None or stats.get("number_of_values", 1) == 0:
        return True  # only nulls: no comparison with a value is true
    lo, hi = stats.get("minimum"), stats.get("maximum")
    if lo is None or hi is None or isinstance(lo, (bool, datetime.datetime)):
        return False
    if not isinstance(lo, _COMPARABLE) or isinstance(lo, float) and (lo != lo or hi != hi):
        return False
    try:
        if c.op == "in":
            values = [v for v in c.value.to_pylist() if v is not None]
            return all(v < lo or v > hi for v in values)
        v = _value(c.value)
        if isinstance(v, float) and v != v:
            return False
        if c.op in ("equal", "null_safe_equal"):
            return v < lo or v > hi
        if c.op == "greater":
            return hi <= v
        if c.op == "greater_equal":
            return hi < v
        if c.op == "less":
            return lo >= v
        if c.op == "less_equal":
            return lo > v
    except TypeError:  # values of different kinds: never skip on a guess
        return False
    return False


def stripes_to_skip(reader: pyorc.Reader, conds: Sequence[Cond], column_paths: dict[str, Optional[str]],
                    first: int, end: int) -> dict[int, int]:
    """``{stripe index: its row count}`` of the stripes in [first, end) no row can come from
    (the counts keep synthetic row ids of original files right).

    ``column_paths`` maps a condition's column to its ORC column path in this file (e.g.
    ``row.amount``) or None when the file lacks the column. ``reader``: a ``pyorc.Reader`` of
    the file (one per slice, shared with ``stripe_keys``).
    """
    usable = [c for c in conds if c.column in column_paths]
    if not usable:
        return {}
    ids = {}
    for c in usable:
        path = column_paths[c.column]
        ids[c.column] = None if path is None else reader.schema.find_column_id(path)
    skip: dict[int, int] = {}
    for i in range(first, end):
        stripe = reader.read_stripe(i)
        for c in usable:
            col_id = ids[c.column]
            stats = None if col_id is None else stripe[col_id].statistics
            if cond_rules_out(c, stats):
                skip[i] = len(stripe)
                break
    return skip


@dataclass(frozen=True)
class StripeKeys:
    """ROW__ID parts of one stripe that its statistics prove, so they need not be decoded.

    ``write_id`` / ``bucket``: the one value of each in the stripe (``stripe_keys`` keeps only
    stripes where both are constant).
    ``first_row_id``: when write id and bucket are constant and the row ids span exactly as many
    values as the stripe has rows, row i has ``first_row_id + i``: insert events are strictly
    increasing in (originalWriteId, bucket, rowId) within a file (docs/format.md §5.4),
    so with the first two constant, rowIds are strictly increasing and min..max leaves no gap.
    """

    write_id: int
    bucket: int
    first_row_id: Optional[int]

    @property
    def all_known(self) -> bool:
        return self.first_row_id is not None


def stripe_keys(reader: pyorc.Reader, key_names: Sequence[str], first: int,
                end: int) -> dict[int, StripeKeys]:
    """``{stripe: StripeKeys}`` for the stripes in [first, end) where at least the write id and
    bucket are constant; ``reader``: a ``pyorc.Reader`` of the file; ``key_names``: this file's
    spellings of originalTransaction, bucket and rowId."""
    ids = [reader.schema.find_column_id(n) for n in key_names]
    out: dict[int, StripeKeys] = {}
    for i in range(first, end):
        stripe = reader.read_stripe(i)
        rows = len(stripe)
        wid, bkt, rid = (stripe[c].statistics for c in ids)
        if not rows or not (_constant(wid, rows) and _constant(bkt, rows)):
            continue
        first_row = None
        lo, hi = rid.get("minimum"), rid.get("maximum")
        if (rid.get("number_of_values") == rows and not rid.get("has_null")
                and isinstance(lo, int) and isinstance(hi, int) and hi - lo + 1 == rows):
            first_row = lo
        out[i] = StripeKeys(wid["minimum"], bkt["minimum"], first_row)
    return out


def _constant(stats: dict, rows: int) -> bool:
    lo = stats.get("minimum")
    return (stats.get("number_of_values") == rows and not stats.get("has_null")
            and isinstance(lo, int) and lo == stats.get("maximum"))
