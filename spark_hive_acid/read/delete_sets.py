"""The delete events a slice's rows are checked against: loaded once per worker process for the
slices that share them (Spark reuses Python workers, and the tasks of one bucket/partition share
their delete files), or, beyond ``maxDeleteEventsInMemory``, streamed with bounded memory (Hive's
``SortMergedDeleteEventRegistry`` fallback)."""
from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Callable, Optional, Sequence, Union

import pyarrow as pa
import pyarrow.orc as po

from ..acid.orc import delete_key_columns, is_acid_schema, key_arrays, open_orc
from ..acid.snapshot import ValidIdList
from ..exceptions import CorruptFileError
from ..io.filesystem import FileSystem
from .delete_events import DeleteEventSet
from .options import DEFAULT_MAX_DELETE_EVENTS
from .plan import DeleteFile, FileSlice
from .streaming_deletes import StreamingDeletes

log = logging.getLogger(__name__)


class _DeleteSetCache:
    """A few delete-event sets kept per worker process: Spark reuses Python workers, and the
    tasks of one bucket/partition share their delete files."""

    def __init__(self, max_entries: int = 4):
        self.max_entries = max_entries
        self._sets: OrderedDict[tuple, DeleteEventSet] = OrderedDict()

    def peek(self, key: tuple) -> Optional[DeleteEventSet]:
        return self._sets.get(key)

    def get(self, key: tuple, build: Callable[[], DeleteEventSet]) -> DeleteEventSet:
        found = self._sets.get(key)
        if found is not None:
            self._sets.move_to_end(key)
            return found
        built = build()
        self._sets[key] = built
        while len(self._sets) > self.max_entries:
            self._sets.popitem(last=False)
        return built


_CACHE = _DeleteSetCache()


def _open_delete_files(fs: FileSystem, deletes: Sequence[DeleteFile]) -> list[tuple[DeleteFile, po.ORCFile]]:
    opened = []
    for d in deletes:
        orc = open_orc(fs, d.path, d.flush_length, size=d.size if d.flush_length is None else None)
        if orc.nrows == 0:
            continue  # Hive skips delete files with no events too
        if not is_acid_schema(orc.schema):
            raise CorruptFileError(f"Delete delta file {d.path} does not have the ACID event schema")
        opened.append((d, orc))
    return opened


def load_delete_events(opened: Sequence[tuple[DeleteFile, po.ORCFile]],
                       write_ids: ValidIdList) -> DeleteEventSet:
    """Read the key columns of the delete files; keep events whose currentTransaction is valid."""
    parts = []
    for d, orc in opened:
        cols = delete_key_columns(orc.schema, d.path)
        try:
            table = orc.read(columns=cols)
        except (pa.ArrowInvalid, OSError) as e:
            raise CorruptFileError(f"Cannot read delete delta file {d.path}: {e}") from e
        owid, bp, rid, cur = key_arrays(table, cols, d.path)
        if not write_ids.everything_valid:
            keep = write_ids.valid_mask(cur)
            if not keep.all():
                owid, bp, rid = owid[keep], bp[keep], rid[keep]
        parts.append((owid, bp, rid))
    return DeleteEventSet.concat_build(parts)


def delete_set_for(fs: FileSystem, s: FileSlice, write_ids: ValidIdList,
                   max_events: int = DEFAULT_MAX_DELETE_EVENTS
                   ) -> Union[DeleteEventSet, StreamingDeletes]:
    """The delete events that apply to a slice: an in-memory set (cached per worker), or, beyond
    ``max_events`` events, a streaming sort-merge with bounded memory (Hive's fallback too)."""
    if not s.deletes:
        return DeleteEventSet.empty()
    key = (tuple((d.path, d.size, d.flush_length) for d in s.deletes), write_ids)
    cached = _CACHE.peek(key)
    if cached is not None:
        return cached
    opened = _open_delete_files(fs, s.deletes)
    total = sum(orc.nrows for _, orc in opened)
    if total > max_events:
        log.info("%d delete events for %s exceed maxDeleteEventsInMemory=%d: streaming them",
                 total, s.path, max_events)
        return StreamingDeletes(fs, [(d.path, d.flush_length) for d, _ in opened], write_ids)
    return _CACHE.get(key, lambda: load_delete_events(opened, write_ids))
