"""Work around a pyarrow ORC writer bug: children of a null struct nested in another column.

pyarrow's ORC writer (seen with pyarrow 26) writes a struct that sits inside another column (a
struct field, a list element, a map value) with child values for every slot, null structs
included, while ORC stores a child value only where its parent is present: every null struct
then shifts the values of the rows after it (``{x: 1}`` read back as the ``{x: 0}`` hidden under
the null before it). A top-level struct is written correctly. Every ACID file nests the table's
columns in its ``row`` struct, so any table with a struct column (or an array or map of structs)
holding nulls was affected.

The writer gets it right when each child is itself null wherever its parent struct is null:
:func:`null_children_of_null_structs` makes them so, recursively, before a batch is written.
Columns without a struct inside are returned as they are, without a copy.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def has_nested_struct(t: pa.DataType, depth: int = 0) -> bool:
    """Whether a struct sits inside ``t`` at depth >= 1 (``t`` itself at depth ``depth``)."""
    if pa.types.is_struct(t):
        return depth >= 1 or any(has_nested_struct(f.type, depth + 1) for f in t)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return has_nested_struct(t.value_type, depth + 1)
    if pa.types.is_map(t):
        return has_nested_struct(t.key_type, depth + 1) or has_nested_struct(t.item_type, depth + 1)
    return False


def null_children_of_null_structs(arr: pa.Array) -> pa.Array:
    """``arr`` with every child of every null struct inside it null too (same values)."""
    if not has_nested_struct(arr.type, 1):
        return arr
    return _fix(arr, None)


def _fix(arr: pa.Array, extra_nulls: pa.Array | None) -> pa.Array:
    """``arr`` with nulls also where ``extra_nulls`` (a boolean array) is true, pushed down into
    struct children; list and map values are fixed for their own structs."""
    if extra_nulls is not None and not pc.any(extra_nulls).as_py():
        extra_nulls = None
    if extra_nulls is not None:
        nulls = pc.or_(pc.is_null(arr), extra_nulls)
    else:
        nulls = pc.is_null(arr) if arr.null_count else None
    t = arr.type
    if pa.types.is_struct(t):
        children = [_fix(arr.field(i), nulls) for i in range(t.num_fields)]
        return pa.StructArray.from_arrays(children, fields=list(t), mask=nulls)
    if pa.types.is_map(t) or pa.types.is_list(t) or pa.types.is_large_list(t):
        # the offsets of a sliced array index the whole child: rebased on the slice's children
        offsets = np.asarray(arr.offsets)
        lo, hi = int(offsets[0]), int(offsets[-1])
        offsets = pa.array(offsets - lo, type=arr.offsets.type)
        if pa.types.is_map(t):
            return pa.MapArray.from_arrays(offsets, _fix(arr.keys.slice(lo, hi - lo), None),
                                           _fix(arr.items.slice(lo, hi - lo), None), type=t,
                                           mask=nulls)
        cls = pa.ListArray if pa.types.is_list(t) else pa.LargeListArray
        return cls.from_arrays(offsets, _fix(arr.values.slice(lo, hi - lo), None), type=t,
                               mask=nulls)
    if extra_nulls is None:  # no null to push down: its own nulls are already there
        return arr
    return pc.if_else(nulls, pa.nulls(len(arr), t), arr)

