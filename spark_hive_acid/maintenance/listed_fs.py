"""A view of a file system that remembers its listings and answers what they already say.

The warehouse-wide decisions (``hiveacid doctor``, ``maintain``) read directory listings and file
sizes only. :func:`spark_hive_acid.acid.state.select_acid_state` (Hive's ``getAcidState``) asks,
for every base directory, whether it is *compacted* (its ``_metadata_acid`` marker): one status
call and one small file read per base, so one per partition in a warehouse that was ever compacted.
The answer changes nothing for a base whose write id is committed and below every open write id
(``is_valid_base`` and ``is_valid`` agree, it is not aborted) when no other base of that partition
has the same write id: both branches choose it. :class:`ListedFileSystem` answers those look-ups
without touching storage and passes every other call on; ``opens`` counts the files it really
opened (tests assert it stays 0 on a plain warehouse).
"""
from __future__ import annotations

import threading
from typing import BinaryIO, Optional

from ..acid.names import METADATA_FILE, parse_acid_dir
from ..acid.snapshot import ValidIdList
from ..io.filesystem import FileStatus, FileSystem

#: what a compacted base's ``_metadata_acid`` holds (Hive 3's ``AcidMetaDataFile``)
_COMPACTED = b'{"thisFileVersion":"0","dataFormat":"compacted"}'


class ListedFileSystem(FileSystem):
    """``inner`` with a memory of listings (``seed`` + every :meth:`list_dir`) and the marker
    shortcut above for snapshot ``write_ids``. Thread-safe (listings run in parallel)."""

    def __init__(self, inner: FileSystem, write_ids: ValidIdList,
                 seed: Optional[dict[str, list[FileStatus]]] = None):
        self.inner = inner
        self.scheme = inner.scheme
        self.write_ids = write_ids
        self.listings: dict[str, list[FileStatus]] = {k.rstrip("/"): v for k, v in
                                                      (seed or {}).items()}
        self.opens = 0
        self.lists = 0
        self._base_counts: dict[str, dict[int, int]] = {}
        self._lock = threading.Lock()

    # --- listings -------------------------------------------------------------------------------
    def list_dir(self, path: str) -> list[FileStatus]:
        children = self.inner.list_dir(path)
        with self._lock:
            self.lists += 1
            self.listings[path.rstrip("/")] = children
        return children

    def listed(self, path: str) -> Optional[list[FileStatus]]:
        """The remembered listing of ``path`` (None when it was not listed)."""
        return self.listings.get(path.rstrip("/"))

    # --- the marker shortcut ----------------------------------------------------------------------
    def _answers_marker(self, path: str) -> bool:
        parent, _, name = path.rstrip("/").rpartition("/")
        if name != METADATA_FILE:
            return False
        partition, _, base_name = parent.rpartition("/")
        base = parse_acid_dir(base_name)
        if base is None or not base.is_base:
            return False
        w, ids = base.write_id, self.write_ids
        min_open = ids.min_open_or_none
        if not ids.is_valid(w) or (min_open is not None and w >= min_open):
            return False
        bases = self._bases(partition)
        return bases is not None and bases.get(w, 0) == 1

    def _bases(self, partition: str) -> Optional[dict[int, int]]:
        """Write id -> how many base directories of that write id ``partition`` holds (None:
        the partition was not listed); computed once per partition."""
        key = partition.rstrip("/")
        found = self._base_counts.get(key)
        if found is None:
            siblings = self.listed(key)
            if siblings is None:
                return None
            found = {}
            for c in siblings:
                if c.is_dir and c.name.startswith("base_"):
                    p = parse_acid_dir(c.name)
                    if p is not None:
                        found[p.write_id] = found.get(p.write_id, 0) + 1
            with self._lock:
                self._base_counts[key] = found
        return found

    def status(self, path: str) -> Optional[FileStatus]:
        if self._answers_marker(path):
            return FileStatus(path, METADATA_FILE, False, len(_COMPACTED))
        return self.inner.status(path)

    def exists(self, path: str) -> bool:
        return self.status(path) is not None

    def read_bytes(self, path: str, length: Optional[int] = None) -> bytes:
        if self._answers_marker(path):
            return _COMPACTED if length is None else _COMPACTED[:length]
        with self._lock:
            self.opens += 1
        return self.inner.read_bytes(path, length)

    def open_input(self, path: str, size: Optional[int] = None) -> BinaryIO:
        with self._lock:
            self.opens += 1
        return self.inner.open_input(path, size)

    # --- everything else goes to the real file system ---------------------------------------------
    def join(self, *parts: str) -> str:
        return self.inner.join(*parts)

    def is_dir(self, path: str) -> bool:
        return self.inner.is_dir(path)

    def mkdirs(self, path: str) -> None:
        raise PermissionError("ListedFileSystem is read-only (decisions only)")

    def open_output(self, path: str) -> BinaryIO:
        raise PermissionError("ListedFileSystem is read-only (decisions only)")

    def rename(self, src: str, dst: str) -> None:
        raise PermissionError("ListedFileSystem is read-only (decisions only)")

    def delete(self, path: str, recursive: bool = False) -> None:
        raise PermissionError("ListedFileSystem is read-only (decisions only)")

    def create_exclusive(self, path: str, data: bytes) -> bool:
        raise PermissionError("ListedFileSystem is read-only (decisions only)")
