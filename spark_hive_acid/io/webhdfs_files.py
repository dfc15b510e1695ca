"""The file objects of the WebHDFS back-end: a seekable ranged reader and a buffered writer."""
from __future__ import annotations

import io
import logging
import tempfile
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Optional, Protocol, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..exceptions import PathNotFoundError, StorageError
from .ranged_file import RangedInputFile

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

T = TypeVar("T")

_log = logging.getLogger(__name__)

_SPOOL_LIMIT = 32 * 1024 * 1024  # output buffered in memory up to this, then in a temp file


def vanished_message(uri: str, detail: str = "") -> str:
    """The message for a file that disappeared while it was being read."""
    extra = f" ({detail})" if detail else ""
    return (f"File vanished: {uri}{extra}; a compaction cleaner may have removed it after the read "
            "was planned: retry the read")


class Remembered(NamedTuple):
    """What reading a file taught: its size, its tail bytes and the DataNode URL serving it."""

    size: int
    tail_start: int
    tail: Optional[bytes]
    location: Optional[str]


class WebHdfsAccess(Protocol):
    """What the file objects need of their file system (:class:`~.webhdfs.WebHdfsFileSystem`):
    its settings, its client, its error translation and its memory of files recently read."""

    tail_size: int
    read_ahead: int
    max_cache: int
    reuse_datanode_url: bool

    @property
    def client(self) -> Any:
        """The ``hdfs`` package's client (untyped)."""

    def uri(self, path: str) -> str: ...

    def call(self, action: str, path: str, fn: Callable[[Any], T]) -> T:
        """``fn(client)``, its transport and WebHDFS errors translated to StorageError."""

    def recall(self, path: str) -> Optional[Remembered]: ...

    def remember(self, path: str, info: Remembered) -> None: ...

    def forget(self, path: Optional[str] = None) -> None: ...

    def upload(self, path: str, data: Any, *, overwrite: bool) -> None: ...


class WebHdfsInputFile(RangedInputFile):
    """A seekable, read-only view of one WebHDFS file (:class:`~.ranged_file.RangedInputFile`:
    the tail first, then ranges with read-ahead, cached).

    After the first ``OPEN`` the NameNode has redirected to a DataNode; later ranges go straight to
    that DataNode URL, falling back to the NameNode if the DataNode refuses. What was learned (size,
    tail, DataNode URL) is remembered by the file system for the next open of the same file.
    """

    def __init__(self, fs: WebHdfsAccess, path: str, size: Optional[int] = None) -> None:
        super().__init__(path, size, tail_size=fs.tail_size, read_ahead=fs.read_ahead,
                         max_cache=fs.max_cache)
        self._fs = fs
        self._location: Optional[str] = None  # DataNode URL of the last redirected OPEN
        self._gone = False  # the file vanished: remember nothing about it
        known = fs.recall(path)
        if known is not None and (size is None or size == known.size):
            self._size = known.size
            self._location = known.location
            if known.tail is not None:
                self._preload_tail(known.tail_start, known.tail)

    @property
    def name(self) -> str:
        return self._fs.uri(self.path)

    def _load_size(self) -> int:
        try:
            st = self._fs.call("reading the status of", self.path,
                                lambda c: c._get_file_status(self.path).json()["FileStatus"])
        except PathNotFoundError as e:
            self._gone = True
            self._fs.forget(self.path)
            raise StorageError(vanished_message(self.name)) from e
        finally:
            self.requests_made += 1
        if st.get("type") == "DIRECTORY":
            raise StorageError(f"Cannot read {self.name}: it is a directory")
        return int(st["length"])

    def close(self) -> None:
        if not self.closed and self._size is not None and not self._gone:
            self._fs.remember(self.path, Remembered(self._size, self._tail_start(),
                                                      self._tail_bytes(), self._location))
        super().close()

    def _fetch_range(self, offset: int, length: int) -> bytes:
        return self._fetch_once(offset, length)

    def _fetch_once(self, offset: int, length: int) -> bytes:
        import requests

        fs = self._fs
        if self._location is not None:
            url = _with_range(self._location, offset, length)
            try:
                self.requests_made += 1
                res = fs.client._request(method="GET", url=url)
                if res.ok:
                    _log.debug("WebHDFS read %s [%d, +%d) from %s", self.path, offset, length,
                               urlsplit(url).netloc)
                    return res.content
                _log.debug("DataNode answered %s for %s; asking the NameNode again",
                           res.status_code, self.path)
            except requests.exceptions.RequestException as e:
                _log.debug("DataNode unreachable for %s (%s); asking the NameNode again", self.path, e)
            self._location = None
        _log.debug("WebHDFS OPEN %s [%d, +%d)", self.path, offset, length)
        try:
            res = fs.call("reading", self.path,
                           lambda c: c._open(self.path, offset=offset, length=length))
            self.requests_made += 1 + len(res.history)
            data = fs.call("reading", self.path, lambda c: res.content)
        except PathNotFoundError as e:
            self.requests_made += 1
            self._gone = True
            fs.forget(self.path)
            raise StorageError(vanished_message(self.name)) from e
        if res.history and fs.reuse_datanode_url:
            self._location = res.url
        return data


class WebHdfsOutputFile(io.RawIOBase):
    """A write-only file buffered locally (in memory, then a temp file) and uploaded on close.

    Leaving a ``with`` block on an exception discards the data instead of uploading it.
    """

    def __init__(self, fs: WebHdfsAccess, path: str) -> None:
        super().__init__()
        self._fs = fs
        self.path = path
        self._buf: Any = io.BytesIO()
        self._spilled = False

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    def seekable(self) -> bool:
        return False

    def tell(self) -> int:
        return self._buf.tell()

    def write(self, b: ReadableBuffer) -> int:
        if self.closed:
            raise ValueError(f"write to closed file {self.path}")
        n = self._buf.write(b)
        if not self._spilled and self._buf.tell() > _SPOOL_LIMIT:
            spill = tempfile.TemporaryFile(prefix="hive-acid-upload-")
            spill.write(self._buf.getbuffer())
            self._buf = spill
            self._spilled = True
        return n

    def flush(self) -> None:
        pass

    def abort(self) -> None:
        """Close without uploading."""
        if not self.closed:
            self._buf.close()
            super().close()

    def close(self) -> None:
        if self.closed:
            return
        try:
            if self._spilled:
                self._buf.seek(0)
                self._fs.upload(self.path, self._buf, overwrite=True)
            else:
                self._fs.upload(self.path, self._buf.getvalue(), overwrite=True)
        finally:
            self._buf.close()
            super().close()

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        if exc_type is not None:
            self.abort()
        else:
            self.close()

    def __del__(self) -> None:  # never upload a half-written file from the garbage collector
        try:
            self.abort()
        except Exception:  # noqa: BLE001 (interpreter shutdown)
            pass


def _with_range(url: str, offset: int, length: int) -> str:
    """``url`` with its ``offset``/``length`` replaced (and ``user.name`` left to the session)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
             if k not in ("offset", "length", "user.name")]
    query += [("offset", str(offset)), ("length", str(length))]
    return urlunsplit(parts._replace(query=urlencode(query)))
