"""Grouping rows by partition/bucket, vectorised, and the partition directory a group goes to."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..acid.partitions import partition_name, value_string


def partition_path(names: Sequence[str], values: Sequence[Any]) -> str:
    """Relative leaf directory ``k1=v1/k2=v2`` of Python scalars ('' for an unpartitioned table)."""
    return partition_name(names, [value_string(v) for v in values])


def _codes(arr: pa.Array) -> tuple[np.ndarray, list]:
    """Dense codes of a column (nulls get their own code) and the value of each code."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    enc = pc.dictionary_encode(arr, null_encoding="encode")
    return (np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int64),
            enc.dictionary.to_pylist())


def group_rows(keys: Sequence[pa.Array], extra: Optional[np.ndarray] = None,
               num_rows: Optional[int] = None) -> list[tuple[tuple, np.ndarray]]:
    """Split row positions by the values of ``keys`` (and an optional int key ``extra``).

    Returns ``[(key values, sorted row positions), ...]``; key values are Python objects with the
    ``extra`` key last. Rows keep their relative order inside each group.
    """
    if num_rows is not None:
        n = num_rows
    elif keys:
        n = len(keys[0])
    elif extra is not None:
        n = len(extra)
    else:
        raise ValueError("group_rows: num_rows is needed without keys")
    if not keys and extra is None:
        return [((), np.arange(n))]
    combined = np.zeros(n, dtype=np.int64)
    dicts: list[list] = []
    for arr in keys:
        codes, values = _codes(arr)
        combined = combined * (len(values) + 1) + codes
        dicts.append(values)
    if extra is not None:
        ex = np.asarray(extra, dtype=np.int64)
        combined = combined * (int(ex.max(initial=0)) + 1) + ex
    uniq, inverse = np.unique(combined, return_inverse=True)
    if len(uniq) == 1:
        order = np.arange(n)
        bounds = [0, n]
    else:
        order = np.argsort(inverse, kind="stable")
        bounds = np.searchsorted(inverse[order], np.arange(len(uniq) + 1)).tolist()
    out = []
    for g in range(len(uniq)):
        idx = order[bounds[g]:bounds[g + 1]]
        first = int(idx[0])
        key = []
        for arr, values in zip(keys, dicts):
            code_value = arr[first].as_py()
            key.append(code_value)
        if extra is not None:
            key.append(int(extra[first]))
        out.append((tuple(key), idx))
    return out
