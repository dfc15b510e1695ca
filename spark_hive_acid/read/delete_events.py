"""The columnar delete-event set: which (originalWriteId, bucketProperty, rowId) keys are deleted.

Layout (about 8 bytes per event): the distinct (writeId, bucketProperty) pairs are kept in a tiny
sorted ``groups`` array; every event becomes one int64 ``group_index << 40 | rowId`` and the events
live in one sorted, de-duplicated int64 array. A lookup is ``np.searchsorted`` over a whole batch
(for a one-group batch only over the keys in its rowId range): no Python loop per row.
"""
from __future__ import annotations

from typing import Iterable, Optional

import numpy as np

from ..exceptions import CorruptFileError

ROW_ID_BITS = 40
_ROW_ID_LIMIT = 1 << ROW_ID_BITS
_GROUP_LIMIT = 1 << (63 - ROW_ID_BITS)


def pair_keys(write_ids: np.ndarray, bucket_props: np.ndarray) -> np.ndarray:
    """One int64 per (writeId, bucketProperty): ``writeId << 32 | uint32(bp)``.

    Order-preserving for write ids in [0, 2**31), which covers every real Hive table; the bucket
    property compares as unsigned, consistent within one table (all V1 or all V0)."""
    return (write_ids.astype(np.int64) << 32) | (bucket_props.astype(np.int64) & 0xFFFFFFFF)


class DeleteEventSet:
    """An immutable set of delete keys with vectorised membership tests."""

    __slots__ = ("groups", "keys")

    def __init__(self, groups: np.ndarray, keys: np.ndarray):
        self.groups = groups  # sorted unique pair keys
        self.keys = keys  # sorted unique group_index << 40 | rowId

    @classmethod
    def empty(cls) -> "DeleteEventSet":
        return cls(np.empty(0, np.int64), np.empty(0, np.int64))

    @classmethod
    def build(cls, write_ids: np.ndarray, bucket_props: np.ndarray,
              row_ids: np.ndarray) -> "DeleteEventSet":
        if len(row_ids) == 0:
            return cls.empty()
        _check_ranges(write_ids, row_ids)
        pairs = pair_keys(write_ids, bucket_props)
        # files are sorted, so pairs come in long runs: find the distinct values from run heads
        heads = np.concatenate(([True], pairs[1:] != pairs[:-1]))
        groups = np.unique(pairs[heads])
        if len(groups) >= _GROUP_LIMIT:
            raise CorruptFileError(f"{len(groups)} distinct (writeId, bucket) pairs in delete events: "
                             f"more than {_GROUP_LIMIT - 1} are not supported")
        gidx = np.searchsorted(groups, pairs)
        keys = (gidx.astype(np.int64) << ROW_ID_BITS) | row_ids.astype(np.int64)
        keys.sort(kind="stable" if len(groups) == 1 else "quicksort")
        if len(keys) > 1:
            keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))]
        return cls(groups, keys)

    @classmethod
    def concat_build(cls, parts: Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> "DeleteEventSet":
        parts = list(parts)
        if not parts:
            return cls.empty()
        return cls.build(*(np.concatenate([p[i] for p in parts]) for i in range(3)))

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def nbytes(self) -> int:
        return self.keys.nbytes + self.groups.nbytes

    def deleted_mask(self, write_ids: np.ndarray, bucket_props: np.ndarray,
                     row_ids: np.ndarray) -> Optional[np.ndarray]:
        """Boolean mask of deleted rows, or None when nothing in the batch is deleted."""
        if len(self.keys) == 0 or len(row_ids) == 0:
            return None
        pairs = pair_keys(write_ids, bucket_props)
        if pairs[0] == pairs[-1] and (len(pairs) < 3 or (pairs == pairs[0]).all()):
            group = self._group_index(int(pairs[0]))
            if group is None:
                return None
            return self._one_group_mask(group, row_ids.astype(np.int64, copy=False))
        g_clipped = np.minimum(np.searchsorted(self.groups, pairs), len(self.groups) - 1)
        known = self.groups[g_clipped] == pairs
        if not known.any():
            return None
        if row_ids.min() < 0 or row_ids.max() >= _ROW_ID_LIMIT:  # no event has such a rowId
            known &= (row_ids >= 0) & (row_ids < _ROW_ID_LIMIT)
        query = (g_clipped.astype(np.int64) << ROW_ID_BITS) | row_ids.astype(np.int64)
        pos = np.searchsorted(self.keys, query)
        np.minimum(pos, len(self.keys) - 1, out=pos)
        hit = (self.keys[pos] == query) & known
        return hit if hit.any() else None

    def deleted_range_mask(self, write_id: int, bucket_prop: int, first_row_id: int,
                           n: int) -> Optional[np.ndarray]:
        """``deleted_mask`` of ``n`` rows of one (writeId, bucketProperty) whose rowIds are
        ``first_row_id .. first_row_id + n - 1`` (what stripe statistics can prove), without
        materialising the key columns."""
        if len(self.keys) == 0 or n == 0:
            return None
        if first_row_id < 0 or first_row_id + n > _ROW_ID_LIMIT:  # beyond the key layout
            return self.deleted_mask(np.full(n, write_id, np.int64), np.full(n, bucket_prop, np.int32),
                                     np.arange(first_row_id, first_row_id + n, dtype=np.int64))
        g = self._group_index((write_id << 32) | (bucket_prop & 0xFFFFFFFF))
        if g is None:
            return None
        start = (g << ROW_ID_BITS) | first_row_id
        lo = np.searchsorted(self.keys, start)
        hi = np.searchsorted(self.keys, start + n - 1, side="right")
        return None if lo == hi else _range_hits(self.keys[lo:hi], start, n)

    def _group_index(self, pair: int) -> Optional[int]:
        g = int(np.searchsorted(self.groups, pair))
        return g if g < len(self.groups) and self.groups[g] == pair else None

    def _one_group_mask(self, group: int, row_ids: np.ndarray) -> Optional[np.ndarray]:
        """The common batch: every row from one (writeId, bucket). Only the keys between the
        batch's smallest and largest rowId can match (two scalar searches); when the row ids are
        consecutive and ascending, as in a Hive-written file, the window indexes the mask directly.
        """
        base = np.int64(group) << ROW_ID_BITS
        lo_id, hi_id = int(row_ids.min()), int(row_ids.max())
        if lo_id < 0 or hi_id >= _ROW_ID_LIMIT:  # such rowIds would alias other groups' keys
            fits = (row_ids >= 0) & (row_ids < _ROW_ID_LIMIT)
            sub = self._one_group_mask(group, row_ids[fits]) if fits.any() else None
            if sub is None:
                return None
            hit = np.zeros(len(row_ids), dtype=bool)
            hit[fits] = sub
            return hit
        lo = np.searchsorted(self.keys, base | lo_id)
        hi = np.searchsorted(self.keys, base | hi_id, side="right")
        if lo == hi:
            return None
        window = self.keys[lo:hi]  # the deleted keys with a rowId within [lo_id, hi_id]
        n = len(row_ids)
        if hi_id - lo_id == n - 1 and (n == 1 or bool((row_ids[1:] > row_ids[:-1]).all())):
            return _range_hits(window, base | lo_id, n)
        query = base | row_ids
        pos = np.searchsorted(window, query)
        np.minimum(pos, len(window) - 1, out=pos)
        hit = window[pos] == query
        return hit if hit.any() else None


def _range_hits(window: np.ndarray, start: int, n: int) -> np.ndarray:
    """Mask of n consecutive keys from ``start``; ``window``: the set's keys among them."""
    hit = np.zeros(n, dtype=bool)
    hit[window - start] = True
    return hit


def _check_ranges(write_ids: np.ndarray, row_ids: np.ndarray) -> None:
    if len(write_ids) and (write_ids.min() < 0 or write_ids.max() >= (1 << 31)):
        raise CorruptFileError("Delete events with write ids outside [0, 2^31) are not supported: "
                              "the delete delta is damaged or not written by Hive")
    if len(row_ids) and (row_ids.min() < 0 or row_ids.max() >= _ROW_ID_LIMIT):
        raise CorruptFileError(f"Delete events with row ids outside [0, 2^{ROW_ID_BITS}) are not "
                              "supported: the delete delta is damaged or not written by Hive")
