"""Hive's ``char(n)`` and ``varchar(n)``: the length rules of a value, on write and on read.

What Hive 3.1 and 4.1 do (checked with their SQL engines, tests/test_char_varchar_hive.py):
``varchar(n)`` keeps at most ``n`` characters, silently cutting longer values
(``HiveBaseChar.enforceMaxLength``: Unicode code points, not bytes or UTF-16 units), and keeps
trailing spaces; ``char(n)`` cuts the same way and pads with spaces to ``n``
(``HiveBaseChar.getPaddedValue``), so ``'ab'`` is stored as ``'ab   '`` in a ``char(5)``. Hive
compares and hashes a char value without its trailing spaces (``HiveChar.getStrippedValue``;
bucketing: ``acid.bucketing``). Its readers return the padded value (``HiveCharWritable``), and
cut a longer value read from a file of a wider type. This library applies the rules to every
value it writes into, and reads from, a column declared so.
"""
from __future__ import annotations

import re
from typing import Optional

import pyarrow as pa
import pyarrow.compute as pc

_SIZED = re.compile(r"^\s*(char|varchar)\s*\(\s*(\d+)\s*\)\s*$", re.IGNORECASE)

#: ("char" | "varchar", n) of a column declared so; None for any other type
TextLimit = Optional[tuple[str, int]]


def text_limit(hive_type: str) -> TextLimit:
    m = _SIZED.match(hive_type)
    return None if m is None else (m.group(1).lower(), int(m.group(2)))


def enforce(arr: pa.Array, limit: TextLimit) -> pa.Array:
    """The values of ``arr`` (strings) as a column of ``limit``'s type holds them."""
    if limit is None or len(arr) == 0:
        return arr
    kind, n = limit
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_large_string(arr.type):
        arr = arr.cast(pa.string())
    if not pa.types.is_string(arr.type):
        return arr
    cut = pc.utf8_slice_codeunits(arr, 0, n)
    return pc.utf8_rpad(cut, width=n, padding=" ") if kind == "char" else cut
