"""A seekable read-only file over a store where every read is a round trip (WebHDFS, S3, GCS, ADLS).

pyarrow's ORC reader asks for the file size, reads the last 16 KiB (postscript, footer), then every
stream of a stripe in pieces, jumping between columns; each of those would be a request.
:class:`RangedInputFile` turns them into few, larger ones:

* the first read near the end fetches the last ``tail_size`` bytes in one request, or the whole
  file when it is at most twice that;
* a miss elsewhere after the tail was read (a footer-first reader) fetches from there up to
  ``read_ahead`` bytes, clipped at the next range already held: a one-stripe file is then the
  tail plus one request;
* a reader that starts at the beginning (magic-byte sniffing, side files) starts with 64 KiB and
  doubles on each sequential miss;
* fetched ranges are kept up to ``max_cache`` bytes, least recently used out first.

A back-end subclasses it with :meth:`RangedInputFile._load_size` and
:meth:`RangedInputFile._fetch_range`; ``requests_made`` counts the requests it sent.
"""
from __future__ import annotations

import io
import threading
from typing import TYPE_CHECKING, Optional

from ..exceptions import StorageError

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

SEQ_READ_AHEAD_START = 64 * 1024  # sequential readers (no tail read first) start small
DEFAULT_TAIL_SIZE = 256 * 1024
DEFAULT_READ_AHEAD = 16 * 1024 * 1024
DEFAULT_MAX_CACHE = 64 * 1024 * 1024


class RangedInputFile(io.RawIOBase):
    """A seekable, read-only view of one remote file, fetching ranges with few round trips."""

    def __init__(self, path: str, size: Optional[int] = None, *,
                 tail_size: int = DEFAULT_TAIL_SIZE, read_ahead: int = DEFAULT_READ_AHEAD,
                 max_cache: int = DEFAULT_MAX_CACHE) -> None:
        super().__init__()
        self.path = path
        self._size = size
        self.tail_size = tail_size
        self.read_ahead = read_ahead
        self.max_cache = max_cache
        self._pos = 0
        self._cache: list[tuple[int, bytes]] = []  # (start, data), least recently used first
        self._cached_bytes = 0
        self._tail_fetched = False
        self._seq_read_ahead = SEQ_READ_AHEAD_START
        self._lock = threading.RLock()
        self.requests_made = 0

    # --- what a back-end provides -------------------------------------------------------------
    def _load_size(self) -> int:
        """The file's length (one status request)."""
        raise NotImplementedError

    def _fetch_range(self, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes at ``offset`` (fewer is fine, none means the file shrank)."""
        raise NotImplementedError

    # --- io protocol -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.path

    @property
    def size(self) -> int:
        """The file length (loaded once unless given at construction)."""
        if self._size is None:
            self._size = self._load_size()
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

    def readinto(self, b: WriteableBuffer) -> int:
        view = memoryview(b).cast("B")
        data = self.read(len(view))
        view[:len(data)] = data
        return len(data)

    def close(self) -> None:
        self._cache = []
        self._cached_bytes = 0
        super().close()

    def _check_open(self) -> None:
        if self.closed:
            raise ValueError(f"I/O operation on closed file {self.path}")

    def _tail_start(self) -> int:
        size, tail = self.size, self.tail_size
        return 0 if size <= 2 * tail else size - tail

    def _tail_bytes(self) -> Optional[bytes]:
        """The cached bytes from the tail's start to the end, if held."""
        tail_start = self._tail_start()
        for start, data in self._cache:
            if start <= tail_start and start + len(data) >= self.size:
                return data[tail_start - start:]
        return None

    def _preload_tail(self, tail_start: int, tail: bytes) -> None:
        """Hold ``tail`` (remembered from an earlier read of the same file)."""
        self._insert(tail_start, tail)
        self._tail_fetched = True

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
            ahead = self.read_ahead
        else:  # a reader from the start: grow the read-ahead with each sequential miss
            ahead = self._seq_read_ahead
            self._seq_read_ahead = min(self._seq_read_ahead * 2, self.read_ahead)
        return p, min(nxt, max(end, p + ahead))

    def _insert(self, start: int, data: bytes) -> None:
        self._cache.append((start, data))
        self._cached_bytes += len(data)
        while self._cached_bytes > self.max_cache and len(self._cache) > 1:
            _, old = self._cache.pop(0)
            self._cached_bytes -= len(old)

    def _fetch(self, offset: int, length: int) -> bytes:
        """Bytes ``[offset, offset+length)``, in as many requests as the store needs."""
        chunks: list[bytes] = []
        got = 0
        while got < length:
            data = self._fetch_range(offset + got, length - got)
            if not data:
                raise StorageError(
                    f"{self.name} is shorter than expected: got {offset + got} of {self.size} bytes "
                    "(it was replaced or truncated while being read; a compaction cleaner may have "
                    "removed it: retry the read)")
            chunks.append(data)
            got += len(data)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
