"""Ranged reads of object-store files through pyarrow: few, large requests per file.

pyarrow's S3 (GCS, Azure) input file sends one ``GET`` with a ``Range`` for every read the ORC
reader makes (the footer, then each stream of each stripe) after a ``HEAD`` for the size.
:class:`ArrowRangedFile` puts :class:`~.ranged_file.RangedInputFile` in front: the size comes from
the listing, the tail
(footer) is one request and each stripe about one more. pyarrow's ``open_input_file`` takes no
known size, so opening still costs its ``HEAD``: a one-stripe file is three requests.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, NamedTuple, Optional, Protocol

from ..exceptions import StorageError
from .ranged_file import RangedInputFile


def vanished(uri: str) -> str:
    return (f"File vanished: {uri}; a compaction cleaner may have removed it after the read was "
            "planned: retry the read")


def _is_missing(e: OSError) -> bool:
    text = str(e)
    return isinstance(e, FileNotFoundError) or any(
        m in text for m in ("NoSuchKey", "NO_SUCH_KEY", "RESOURCE_NOT_FOUND", "Path does not exist"))


class Known(NamedTuple):
    """What reading a file taught: its size and its tail."""

    size: int
    tail_start: int
    tail: bytes


class RecentFiles:
    """Size and tail of the last ``limit`` files read (ACID data files never change once
    written): the reader opens a file for its footer and again for its rows, and the second open
    then needs neither the footer request again nor, when it has the size, the ``HEAD``."""

    def __init__(self, limit: int = 32) -> None:
        self.limit = limit
        self._known: OrderedDict[str, Known] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, path: str, known: Known) -> None:
        with self._lock:
            self._known[path] = known
            self._known.move_to_end(path)
            while len(self._known) > self.limit:
                self._known.popitem(last=False)

    def recall(self, path: str) -> Optional[Known]:
        with self._lock:
            return self._known.get(path)

    def forget_under(self, path: str) -> None:
        prefix = path.rstrip("/") + "/"
        with self._lock:
            for p in [p for p in self._known if p == path or p.startswith(prefix)]:
                del self._known[p]


class ArrowAccess(Protocol):
    """What a file needs of its file system (:class:`~.arrow_fs.ArrowFileSystem`)."""

    recent: RecentFiles

    @property
    def arrow(self) -> Any:
        """The ``pyarrow.fs.FileSystem`` (pyarrow has no type hints)."""

    def uri(self, path: str) -> str: ...

    def error(self, e: OSError, action: str, path: str) -> StorageError:
        """``e`` as this file system's StorageError."""


class ArrowRangedFile(RangedInputFile):
    """One file of an :class:`~.arrow_fs.ArrowFileSystem`, read in large cached ranges."""

    def __init__(self, fs: ArrowAccess, path: str, size: Optional[int] = None) -> None:
        super().__init__(path, size)
        self._fs = fs
        self._file: Any = None  # the pyarrow file, opened on the first fetch
        self._gone = False
        self.known = fs.recent.recall(path)
        if self.known is not None and (size is None or size == self.known.size):
            self._size = self.known.size
            self._preload_tail(self.known.tail_start, self.known.tail)
        else:
            self.known = None

    @property
    def name(self) -> str:
        return self._fs.uri(self.path)

    def open_remote(self) -> Any:
        """The pyarrow file (its open is the ``HEAD`` that tells the size)."""
        if self._file is None:
            self.requests_made += 1
            try:
                self._file = self._fs.arrow.open_input_file(self.path)
            except OSError as e:
                if _is_missing(e):
                    self._vanished()
                    raise StorageError(vanished(self.name)) from e
                if isinstance(e, IsADirectoryError) or "is a directory" in str(e).lower():
                    raise StorageError(f"Cannot read {self.name}: it is a directory") from e
                raise self._fs.error(e, "opening", self.path) from e
        return self._file

    def _load_size(self) -> int:
        return int(self.open_remote().size())

    def _fetch_range(self, offset: int, length: int) -> bytes:
        f = self.open_remote()
        self.requests_made += 1
        try:
            return f.read_at(length, offset)
        except OSError as e:
            if _is_missing(e):
                self._vanished()
                raise StorageError(vanished(self.name)) from e
            raise self._fs.error(e, "reading", self.path) from e

    def _vanished(self) -> None:
        self._gone = True
        self._fs.recent.forget_under(self.path)

    def close(self) -> None:
        size = self._size
        tail = None if self.closed or self._gone or size is None else self._tail_bytes()
        if size is not None and tail is not None:
            self._fs.recent.remember(self.path, Known(size, self._tail_start(), tail))
        if self._file is not None:
            self._file.close()
            self._file = None
        super().close()
