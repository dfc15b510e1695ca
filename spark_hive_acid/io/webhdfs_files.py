"""The file objects of the WebHDFS back-end: a seekable ranged reader and a buffered writer."""
from __future__ import annotations

import io
import logging
import tempfile
import threading
from typing import TYPE_CHECKING, Any, NamedTuple, Optional
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..exceptions import PathNotFoundError, StorageError

if TYPE_CHECKING:
    from .webhdfs import WebHdfsFileSystem

_log = logging.getLogger(__name__)

_SEQ_READ_AHEAD_START = 64 * 1024  # sequential readers (no tail read first) start small
_SPOOL_LIMIT = 32 * 1024 * 1024  # output buffered in memory up to this, then in a temp file


def vanished_message(uri: str, detail: str = "") -> str:
    """The message for a file that disappeared while it was being read."""
    extra = f" ({detail})" if detail else ""
    return (f"File vanished: {uri}{extra}; a compaction cleaner may have removed it after the read "
            "was planned: retry the read")


class _Remembered(NamedTuple):
    """What reading a file taught: its size, its tail bytes and the DataNode URL serving it."""

    size: int
    tail_start: int
    tail: Optional[bytes]
    location: Optional[str]


class WebHdfsInputFile(io.RawIOBase):
    """A seekable, read-only view of one WebHDFS file, fetching ranges with few round trips.

    The first read near the end fetches the last ``tail_size`` bytes (the whole file when it is at
    most twice that); a miss elsewhere fetches from there up to ``read_ahead`` bytes (clipped at
    the next cached range), or, for readers that start at the beginning, a range that doubles with
    each sequential miss. Fetched ranges are kept, least recently used first out, up to
    ``max_cache`` bytes. ``requests_made`` counts the HTTP requests this object sent.
    """

    def __init__(self, fs: WebHdfsFileSystem, path: str, size: Optional[int] = None) -> None:
        super().__init__()
        self._fs = fs
        self.path = path
        self._size = size
        self._pos = 0
        self._cache: list[tuple[int, bytes]] = []  # (start, data), least recently used first
        self._cached_bytes = 0
        self._tail_fetched = False
        self._seq_read_ahead = _SEQ_READ_AHEAD_START
        self._location: Optional[str] = None  # DataNode URL of the last redirected OPEN
        self._lock = threading.RLock()
        self.requests_made = 0
        self._gone = False  # the file vanished: remember nothing about it
        known = fs._recall(path)
        if known is not None and (size is None or size == known.size):
            self._size = known.size
            self._location = known.location
            if known.tail is not None:
                self._insert(known.tail_start, known.tail)
                self._tail_fetched = True

    # --- io protocol -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._fs.uri(self.path)

    @property
    def size(self) -> int:
        """The file length (one ``GETFILESTATUS`` unless given at construction)."""
        if self._size is None:
            try:
                st = self._fs._call("reading the status of", self.path,
                                    lambda c: c._get_file_status(self.path).json()["FileStatus"])
            except PathNotFoundError as e:
                self._gone = True
                self._fs.forget(self.path)
                raise StorageError(vanished_message(self.name)) from e
            finally:
                self.requests_made += 1
            if st.get("type") == "DIRECTORY":
                raise StorageError(f"Cannot read {self.name}: it is a directory")
            self._size = int(st["length"])
        return self._size

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def tell(self) -> int:
        self._check_open()
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self._check_open()
        if whence == io.SEEK_SET:
            pos = offset
        elif whence == io.SEEK_CUR:
            pos = self._pos + offset
        elif whence == io.SEEK_END:
            pos = self.size + offset
        else:
            raise ValueError(f"invalid whence ({whence})")
        if pos < 0:
            raise ValueError(f"negative seek position {pos}")
        self._pos = pos
        return pos

    def read(self, size: Optional[int] = -1) -> bytes:
        self._check_open()
        with self._lock:
            data = self._read_at(self._pos, size)
            self._pos += len(data)
            return data

    def readall(self) -> bytes:
        return self.read(-1)

    def readinto(self, b) -> int:  # type: ignore[override]
        view = memoryview(b).cast("B")
        data = self.read(len(view))
        view[:len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed and self._size is not None and not self._gone:
            self._fs._remember(self.path, self._what_we_learned())
        self._cache = []
        self._cached_bytes = 0
        super().close()

    def _what_we_learned(self) -> "_Remembered":
        tail_start = self._tail_start()
        tail = None
        for start, data in self._cache:
            if start <= tail_start and start + len(data) >= self._size:  # type: ignore[operator]
                tail = data[tail_start - start:]
                break
        return _Remembered(self._size, tail_start, tail, self._location)  # type: ignore[arg-type]

    def _tail_start(self) -> int:
        size, tail = self.size, self._fs.tail_size
        return 0 if size <= 2 * tail else size - tail

    def _check_open(self) -> None:
        if self.closed:
            raise ValueError(f"I/O operation on closed file {self.path}")

    # --- ranges ------------------------------------------------------------------------------
    def _read_at(self, pos: int, n: Optional[int]) -> bytes:
        size = self.size
        end = size if n is None or n < 0 else min(size, pos + n)
        if end <= pos:
            return b""
        out: list[bytes] = []
        p = pos
        while p < end:
            hit = self._lookup(p)
            if hit is not None:
                start, data = hit
                stop = min(end, start + len(data))
                out.append(data[p - start:stop - start])
                p = stop
                continue
            fstart, fstop = self._plan(p, end)
            self._insert(fstart, self._fetch(fstart, fstop - fstart))
        return out[0] if len(out) == 1 else b"".join(out)

    def _lookup(self, p: int) -> Optional[tuple[int, bytes]]:
        for i, (start, data) in enumerate(self._cache):
            if start <= p < start + len(data):
                if i != len(self._cache) - 1:  # most recently used last
                    self._cache.append(self._cache.pop(i))
                return start, data
        return None

    def _plan(self, p: int, end: int) -> tuple[int, int]:
        """The range to fetch for a miss at ``p`` of a read ending at ``end``."""
        size = self.size
        tail_start = self._tail_start()
        if p >= tail_start and not self._tail_fetched:
            self._tail_fetched = True
            return tail_start, size
        nxt = min((s for s, _ in self._cache if s > p), default=size)
        if nxt < end:  # a cached range follows inside the read: fill the gap only
            return p, nxt
        if self._tail_fetched:  # footer-first reader (ORC, Parquet): ranges with read-ahead
            ahead = self._fs.read_ahead
        else:  # a reader from the start: grow the read-ahead with each sequential miss
            ahead = self._seq_read_ahead
            self._seq_read_ahead = min(self._seq_read_ahead * 2, self._fs.read_ahead)
        return p, min(nxt, max(end, p + ahead))

    def _insert(self, start: int, data: bytes) -> None:
        self._cache.append((start, data))
        self._cached_bytes += len(data)
        while self._cached_bytes > self._fs.max_cache and len(self._cache) > 1:
            _, old = self._cache.pop(0)
            self._cached_bytes -= len(old)

    def _fetch(self, offset: int, length: int) -> bytes:
        """Bytes ``[offset, offset+length)``: from the known DataNode, else via the NameNode."""
        chunks: list[bytes] = []
        got = 0
        while got < length:
            data = self._fetch_once(offset + got, length - got)
            if not data:
                raise StorageError(
                    f"{self.name} is shorter than expected: got {offset + got} of {self.size} bytes "
                    "(it was replaced or truncated while being read; a compaction cleaner may have "
                    "removed it: retry the read)")
            chunks.append(data)
            got += len(data)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

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
            res = fs._call("reading", self.path,
                           lambda c: c._open(self.path, offset=offset, length=length))
            self.requests_made += 1 + len(res.history)
            data = fs._call("reading", self.path, lambda c: res.content)
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

    def __init__(self, fs: WebHdfsFileSystem, path: str) -> None:
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

    def write(self, b) -> int:  # type: ignore[override]
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
                self._fs._upload(self.path, self._buf, overwrite=True)
            else:
                self._fs._upload(self.path, self._buf.getvalue(), overwrite=True)
        finally:
            self._buf.close()
            super().close()

    def __exit__(self, exc_type, exc, tb) -> None:
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
