"""HDFS over its REST API (WebHDFS), through the ``hdfs`` package's client.

:class:`WebHdfsFileSystem` implements the connector's :class:`~.filesystem.FileSystem` with the
WebHDFS operations ``LISTSTATUS``, ``GETFILESTATUS``, ``OPEN`` (ranged), the two-step ``CREATE``,
``MKDIRS``, ``RENAME`` (with ``renameoptions=NONE``: HDFS's ``rename2``, which fails when the
destination exists, never moving *into* an existing directory) and ``DELETE``.

Reading ORC needs random access: :class:`WebHdfsInputFile` is a seekable read-only file object
that fetches the file's tail first (ORC keeps its postscript, footer and stripe index there), then
whole ranges with read-ahead, keeping what it fetched in a bounded cache. After the first ``OPEN``
the NameNode has redirected to a DataNode; later ranges go straight to that DataNode URL (with the
new offset/length), falling back to the NameNode if the DataNode refuses. Reading a one-stripe ORC
file is thus: ``GETFILESTATUS``, ``OPEN`` (NameNode, 307), the tail from the DataNode, the stripe
from the DataNode.

Instances pickle by their constructor arguments; the HTTP client is created on first use.
"""
from __future__ import annotations

import io
import logging
import posixpath
import tempfile
import threading
from collections import OrderedDict
from typing import Any, Callable, NamedTuple, Optional, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..exceptions import InvalidOptionError, PathExistsError, PathNotFoundError, StorageError
from .filesystem import FileStatus, FileSystem

_log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_TAIL_SIZE = 256 * 1024
DEFAULT_READ_AHEAD = 16 * 1024 * 1024
DEFAULT_MAX_CACHE = 64 * 1024 * 1024
DEFAULT_TIMEOUT = 60.0
_SEQ_READ_AHEAD_START = 64 * 1024  # sequential readers (no tail read first) start small
_SPOOL_LIMIT = 32 * 1024 * 1024  # output buffered in memory up to this, then in a temp file

_NOT_FOUND = {"FileNotFoundException"}
_DENIED = {"AccessControlException", "SecurityException", "AuthorizationException"}
_EXISTS = {"FileAlreadyExistsException", "AlreadyBeingCreatedException"}


def vanished_message(uri: str, detail: str = "") -> str:
    """The message for a file that disappeared while it was being read."""
    extra = f" ({detail})" if detail else ""
    return (f"File vanished: {uri}{extra}; a compaction cleaner may have removed it after the read "
            "was planned: retry the read")


class WebHdfsFileSystem(FileSystem):
    """HDFS through WebHDFS (``webhdfs://``, ``swebhdfs://`` and ``hdfs://`` paths).

    ``url`` is the NameNode HTTP address (``http://nn:9870``; several separated by ``;`` for HA);
    ``user`` the simple-auth user (``user.name``), or the proxy (``doas``) user under Kerberos;
    ``auth`` is ``simple`` or ``kerberos``; ``display_prefix`` (e.g. ``hdfs://nameservice``) is put
    before paths in messages. Paths are absolute HDFS paths (``/warehouse/t/delta_1_1``).
    """

    scheme = "webhdfs"

    def __init__(self, url: str, user: Optional[str] = None, *, auth: str = "simple",
                 display_prefix: str = "", timeout: float = DEFAULT_TIMEOUT,
                 read_ahead: int = DEFAULT_READ_AHEAD, tail_size: int = DEFAULT_TAIL_SIZE,
                 max_cache: int = DEFAULT_MAX_CACHE, max_connections: int = 32,
                 reuse_datanode_url: bool = True, remember_files: int = 32,
                 scheme: str = "webhdfs") -> None:
        if auth not in ("simple", "kerberos"):
            raise InvalidOptionError(f"Unknown WebHDFS authentication '{auth}': use simple or kerberos")
        self._args: dict[str, Any] = dict(
            url=url, user=user, auth=auth, display_prefix=display_prefix, timeout=timeout,
            read_ahead=read_ahead, tail_size=tail_size, max_cache=max_cache,
            max_connections=max_connections, reuse_datanode_url=reuse_datanode_url,
            remember_files=remember_files, scheme=scheme)
        self.url = url
        self.user = user
        self.auth = auth
        self.timeout = timeout
        self.read_ahead = read_ahead
        self.tail_size = tail_size
        self.max_cache = max_cache
        self.max_connections = max_connections
        self.reuse_datanode_url = reuse_datanode_url
        self.remember_files = remember_files
        self.scheme = scheme
        self.display_prefix = display_prefix or "webhdfs://" + urlsplit(url.split(";")[0]).netloc
        self._client: Any = None
        self._client_lock = threading.Lock()
        # path -> what reading it taught us (size, tail, DataNode URL): data files are write-once
        self._recent: OrderedDict[str, _Remembered] = OrderedDict()
        self._recent_lock = threading.Lock()

    # --- pickling: by constructor arguments, never the client --------------------------------
    def __getstate__(self) -> dict:
        return dict(self._args)

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state)  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"WebHdfsFileSystem(url={self.url!r}, user={self.user!r}, auth={self.auth!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WebHdfsFileSystem) and other._args == self._args

    def __hash__(self) -> int:
        return hash((self.url, self.user, self.auth))

    # --- the client --------------------------------------------------------------------------
    @property
    def client(self):
        """The ``hdfs`` package client, created on first use (thread-safe)."""
        if self._client is None:
            with self._client_lock:
                if self._client is None:
                    self._client = self._make_client()
        return self._client

    def _make_client(self):
        import requests
        from requests.adapters import HTTPAdapter

        session = requests.Session()
        adapter = HTTPAdapter(pool_connections=4, pool_maxsize=self.max_connections)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        timeout = (min(10.0, self.timeout), self.timeout)
        if self.auth == "kerberos":
            try:
                from hdfs.ext.kerberos import KerberosClient
            except ImportError as e:
                raise InvalidOptionError(
                    "webhdfsAuth=kerberos needs the requests-kerberos package "
                    f"(pip install 'hdfs[kerberos]'): {e}") from e
            _log.info("WebHDFS client (Kerberos) for %s", self.url)
            return KerberosClient(self.url, max_concurrency=self.max_connections, proxy=self.user,
                                  timeout=timeout, session=session)
        from hdfs import InsecureClient

        _log.info("WebHDFS client for %s as user %s", self.url, self.user)
        return InsecureClient(self.url, user=self.user, timeout=timeout, session=session)

    # --- files recently read ------------------------------------------------------------------
    def _remember(self, path: str, info: "_Remembered") -> None:
        if self.remember_files <= 0:
            return
        with self._recent_lock:
            self._recent[path] = info
            self._recent.move_to_end(path)
            while len(self._recent) > self.remember_files:
                self._recent.popitem(last=False)

    def _recall(self, path: str) -> Optional["_Remembered"]:
        with self._recent_lock:
            info = self._recent.get(path)
            if info is not None:
                self._recent.move_to_end(path)
            return info

    def forget(self, path: Optional[str] = None) -> None:
        """Drop what was remembered about ``path`` (every file when None)."""
        with self._recent_lock:
            if path is None:
                self._recent.clear()
            else:
                self._recent.pop(_abs(path), None)

    # --- error translation -------------------------------------------------------------------
    def uri(self, path: str) -> str:
        """``path`` as a URI for messages (``hdfs://nameservice/warehouse/t``)."""
        return self.display_prefix.rstrip("/") + _abs(path)

    def _unreachable(self, e: Exception) -> StorageError:
        return StorageError(
            f"Cannot reach the WebHDFS service at {self.url} (NameNode HTTP address for "
            f"{self.display_prefix}): {e}. Check that the NameNode is up and that option webhdfsUrl "
            "names its HTTP address, e.g. http://namenode:9870")

    def _call(self, action: str, path: str, fn: Callable[[Any], T]) -> T:
        """Run ``fn(client)``, translating transport and WebHDFS errors to StorageError."""
        import requests
        from hdfs.util import HdfsError

        try:
            return fn(self.client)
        except HdfsError as e:
            raise self._translate(e.exception, e.message, action, path) from e
        except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as e:
            raise self._unreachable(e) from e
        except requests.exceptions.RequestException as e:
            raise StorageError(f"WebHDFS {action} {self.uri(path)} failed: {e}") from e

    def _translate(self, exception: Optional[str], message: Any, action: str, path: str) -> StorageError:
        if isinstance(message, bytes):
            message = message.decode("utf-8", "replace")[:500]
        where = self.uri(path)
        if exception in _NOT_FOUND:
            return PathNotFoundError(f"{where} does not exist ({message})")
        if exception in _DENIED:
            return StorageError(f"Permission denied {action} {where}: {message}")
        if exception in _EXISTS:
            return PathExistsError(f"{where} already exists ({message})")
        if exception == "StandbyException":
            return StorageError(f"No active NameNode at {self.url} for {action} {where}: {message}")
        if exception is None and "Authentication failure" in str(message):
            return StorageError(f"WebHDFS at {self.url} refused authentication for {action} {where}: "
                                f"{message} (check Kerberos ticket or option hdfsUser)")
        return StorageError(f"WebHDFS {action} {where} failed: {exception or 'error'}: {message}")

    # --- reading -----------------------------------------------------------------------------
    def list_dir(self, path: str) -> list[FileStatus]:
        path = _abs(path)
        try:
            entries = self._call("listing", path, lambda c: c._list_status(path).json())
        except PathNotFoundError as e:
            raise PathNotFoundError(f"Directory not found: {self.uri(path)}") from e
        statuses = entries["FileStatuses"]["FileStatus"]
        if len(statuses) == 1 and not statuses[0].get("pathSuffix") \
                and statuses[0].get("type") != "DIRECTORY":
            raise StorageError(f"Not a directory: {self.uri(path)}")
        return [_to_status(posixpath.join(path, s["pathSuffix"]), s) for s in statuses]

    def status(self, path: str) -> Optional[FileStatus]:
        path = _abs(path)
        try:
            st = self._call("reading the status of", path, lambda c: c._get_file_status(path).json())
        except PathNotFoundError:
            return None
        return _to_status(path, st["FileStatus"])

    def open_input(self, path: str, size: Optional[int] = None) -> "WebHdfsInputFile":
        """A seekable reader; ``size`` (from a listing) saves the ``GETFILESTATUS`` round trip.

        Reopening a file read recently through this instance reuses its size, tail and DataNode
        URL (the last ``remember_files`` files; ACID data files never change once written).
        """
        return WebHdfsInputFile(self, _abs(path), size=size)

    def read_bytes(self, path: str, length: Optional[int] = None) -> bytes:
        """The file's first ``length`` bytes (all when None) in one ``OPEN``, without a status."""
        path = _abs(path)
        kw = {"offset": 0} if length is None else {"offset": 0, "length": length}
        try:
            return self._call("reading", path, lambda c: _content(c._open(path, **kw)))
        except PathNotFoundError as e:
            raise StorageError(vanished_message(self.uri(path))) from e

    # --- writing -----------------------------------------------------------------------------
    def mkdirs(self, path: str) -> None:
        path = _abs(path)
        try:
            ok = self._call("creating directory", path, lambda c: c._mkdirs(path).json()["boolean"])
        except PathExistsError as e:
            raise StorageError(f"Cannot create directory {self.uri(path)}: a file is in the way ({e})") from e
        if not ok:
            raise StorageError(f"Cannot create directory {self.uri(path)}")

    def open_output(self, path: str) -> "WebHdfsOutputFile":
        """A buffered writer; the file is uploaded (two-step ``CREATE``, overwrite) on close."""
        return WebHdfsOutputFile(self, _abs(path))

    def write_bytes(self, path: str, data: bytes) -> None:
        self._upload(_abs(path), data, overwrite=True)

    def _forget_under(self, path: str) -> None:
        prefix = path.rstrip("/") + "/"
        with self._recent_lock:
            for p in [p for p in self._recent if p == path or p.startswith(prefix)]:
                del self._recent[p]

    def _upload(self, path: str, data: Any, *, overwrite: bool) -> None:
        self._forget_under(path)
        _log.debug("WebHDFS CREATE %s (overwrite=%s)", path, overwrite)
        self._call("writing", path, lambda c: c.write(path, data=data, overwrite=overwrite))

    def rename(self, src: str, dst: str) -> None:
        src, dst = _abs(src), _abs(dst)
        self._forget_under(src)
        self._forget_under(dst)
        try:
            res = self._call("renaming", src,
                             lambda c: c._rename(src, destination=dst, renameoptions="NONE"))
        except PathExistsError as e:
            raise StorageError(f"Cannot rename {self.uri(src)} to {self.uri(dst)}: destination exists") from e
        except PathNotFoundError as e:
            raise StorageError(f"Cannot rename {self.uri(src)} to {self.uri(dst)}: the source or the "
                               f"destination's parent directory does not exist ({e})") from e
        body = _json_or_none(res)
        if isinstance(body, dict) and body.get("boolean") is False:  # a server ignoring renameoptions
            raise StorageError(f"Cannot rename {self.uri(src)} to {self.uri(dst)}: refused by the NameNode "
                               "(destination exists or source missing)")

    def delete(self, path: str, recursive: bool = False) -> None:
        path = _abs(path)
        self._forget_under(path)
        flag = "true" if recursive else "false"
        try:
            self._call("deleting", path, lambda c: c._delete(path, recursive=flag))
        except PathNotFoundError:
            pass

    def create_exclusive(self, path: str, data: bytes) -> bool:
        """``CREATE`` with ``overwrite=false``: atomic on the NameNode; False if ``path`` existed."""
        try:
            self._upload(_abs(path), data, overwrite=False)
        except PathExistsError:
            return False
        return True

    def supports_atomic_rename(self) -> bool:
        return True


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


# --- helpers ---------------------------------------------------------------------------------
class _Remembered(NamedTuple):
    """What reading a file taught: its size, its tail bytes and the DataNode URL serving it."""

    size: int
    tail_start: int
    tail: Optional[bytes]
    location: Optional[str]


def _abs(path: str) -> str:
    return path if path.startswith("/") else "/" + path


def _to_status(path: str, s: dict) -> FileStatus:
    is_dir = s.get("type") == "DIRECTORY"
    return FileStatus(path, posixpath.basename(path.rstrip("/")) or "/", is_dir,
                      0 if is_dir else int(s.get("length", 0)))


def _content(res) -> bytes:
    try:
        return res.content
    finally:
        res.close()


def _json_or_none(res) -> Any:
    try:
        return res.json() if res.content else None
    except ValueError:
        return None


def _with_range(url: str, offset: int, length: int) -> str:
    """``url`` with its ``offset``/``length`` replaced (and ``user.name`` left to the session)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
             if k not in ("offset", "length", "user.name")]
    query += [("offset", str(offset)), ("length", str(length))]
    return urlunsplit(parts._replace(query=urlencode(query)))
