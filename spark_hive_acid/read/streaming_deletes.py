"""Delete filtering with bounded memory, for delete deltas too large to hold as one set.

Hive falls back from its in-memory ``ColumnizedDeleteEventRegistry`` to a sort-merge when more
than ``hive.transactional.events.mem`` events would be loaded. This is the same idea, columnar:
data files and delete files are both sorted by (originalWriteId, bucketProperty, rowId), so for
each data batch only the delete events inside the batch's key range are needed. One cursor per
delete file loads its stripes in order and drops events below the range as the data advances;
memory stays around one stripe per delete file.
"""
from __future__ import annotations

import logging
from typing import Optional, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.orc as po

from ..acid.snapshot import ValidIdList
from ..exceptions import CorruptFileError
from ..io.filesystem import FileSystem
from ..acid.orc import delete_key_columns, key_arrays, open_orc
from .delete_events import DeleteEventSet, pair_keys

log = logging.getLogger(__name__)


def _at_least(pairs: np.ndarray, rids: np.ndarray, lo: tuple[int, int]) -> np.ndarray:
    return (pairs > lo[0]) | ((pairs == lo[0]) & (rids >= lo[1]))


def _at_most(pairs: np.ndarray, rids: np.ndarray, hi: tuple[int, int]) -> np.ndarray:
    return (pairs < hi[0]) | ((pairs == hi[0]) & (rids <= hi[1]))


class _Cursor:
    """Reads one sorted delete file forward, stripe by stripe."""

    def __init__(self, fs: FileSystem, path: str, flush_length: Optional[int], write_ids: ValidIdList):
        self.fs, self.path, self.flush_length, self.write_ids = fs, path, flush_length, write_ids
        self._open()

    def _open(self) -> None:
        self.orc: po.ORCFile = open_orc(self.fs, self.path, self.flush_length)
        self.cols = delete_key_columns(self.orc.schema, self.path)
        self.next_stripe = 0
        self.pairs = np.empty(0, np.int64)
        self.rids = np.empty(0, np.int64)
        self.last_lo: Optional[tuple[int, int]] = None

    def _load_next(self) -> bool:
        if self.next_stripe >= self.orc.nstripes:
            return False
        try:
            batch = self.orc.read_stripe(self.next_stripe, columns=self.cols)
        except (pa.ArrowInvalid, OSError) as e:
            raise CorruptFileError(f"Cannot read delete delta file {self.path}: {e}") from e
        self.next_stripe += 1
        owid, bp, rid, cur = key_arrays(batch, self.cols, self.path)
        if not self.write_ids.everything_valid:
            keep = self.write_ids.valid_mask(cur)
            owid, bp, rid = owid[keep], bp[keep], rid[keep]
        self.pairs = np.concatenate([self.pairs, pair_keys(owid, bp)])
        self.rids = np.concatenate([self.rids, rid.astype(np.int64)])
        return True

    def events_in(self, lo: tuple[int, int], hi: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        if self.last_lo is not None and lo < self.last_lo:
            self._open()  # the data went backwards (unsorted file): start over
        self.last_lo = lo
        keep = _at_least(self.pairs, self.rids, lo)
        self.pairs, self.rids = self.pairs[keep], self.rids[keep]
        while (len(self.pairs) == 0 or _at_most(self.pairs[-1:], self.rids[-1:], hi)[0]) \
                and self._load_next():
            keep = _at_least(self.pairs, self.rids, lo)
            self.pairs, self.rids = self.pairs[keep], self.rids[keep]
        inside = _at_most(self.pairs, self.rids, hi)
        return self.pairs[inside], self.rids[inside]


class StreamingDeletes:
    """Same interface as :class:`DeleteEventSet` (``deleted_mask``), bounded memory."""

    def __init__(self, fs: FileSystem, files: Sequence[tuple[str, Optional[int]]],
                 write_ids: ValidIdList):
        self.cursors = [_Cursor(fs, p, fl, write_ids) for p, fl in files]

    def __len__(self) -> int:  # "has deletes": decides whether key columns are read
        return 1 if self.cursors else 0

    def deleted_mask(self, write_ids: np.ndarray, bucket_props: np.ndarray,
                     row_ids: np.ndarray) -> Optional[np.ndarray]:
        if len(row_ids) == 0 or not self.cursors:
            return None
        pairs = pair_keys(write_ids, bucket_props)
        rids = row_ids.astype(np.int64)
        lo_pair, hi_pair = int(pairs.min()), int(pairs.max())
        lo = (lo_pair, int(rids[pairs == lo_pair].min()))
        hi = (hi_pair, int(rids[pairs == hi_pair].max()))
        got = [c.events_in(lo, hi) for c in self.cursors]
        p = np.concatenate([g[0] for g in got])
        if len(p) == 0:
            return None
        r = np.concatenate([g[1] for g in got])
        owid = p >> 32
        bp = (p & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
        return DeleteEventSet.build(owid, bp, r).deleted_mask(write_ids, bucket_props, row_ids)
