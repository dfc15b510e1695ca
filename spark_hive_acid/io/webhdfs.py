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

import logging
import posixpath
import threading
import uuid
from collections import OrderedDict
from typing import Any, BinaryIO, Callable, Optional, TypeVar
from urllib.parse import urlsplit

from ..exceptions import InvalidOptionError, PathExistsError, PathNotFoundError, StorageError
from .filesystem import FileStatus, FileSystem, binary_file
from .ranged_file import DEFAULT_MAX_CACHE, DEFAULT_READ_AHEAD, DEFAULT_TAIL_SIZE
from .webhdfs_files import Remembered, WebHdfsInputFile, WebHdfsOutputFile, vanished_message

_log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_TIMEOUT = 60.0

_NOT_FOUND = {"FileNotFoundException"}
#: OPEN of a directory: a real NameNode redirects it, then the DataNode answers
#: FileNotFoundException "Path is not a file: /dir" (not a vanished file)
_NOT_A_FILE = "Path is not a file"
_DENIED = {"AccessControlException", "SecurityException", "AuthorizationException"}
_EXISTS = {"FileAlreadyExistsException", "AlreadyBeingCreatedException"}


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
        self._recent: OrderedDict[str, Remembered] = OrderedDict()
        self._recent_lock = threading.Lock()

    # --- pickling: by constructor arguments, never the client --------------------------------
    def __getstate__(self) -> dict:
        return dict(self._args)

    def __setstate__(self, state: dict) -> None:
        WebHdfsFileSystem.__init__(self, **state)

    def __repr__(self) -> str:
        return f"WebHdfsFileSystem(url={self.url!r}, user={self.user!r}, auth={self.auth!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WebHdfsFileSystem) and other._args == self._args

    def __hash__(self) -> int:
        return hash((self.url, self.user, self.auth))

    # --- the client --------------------------------------------------------------------------
    @property
    def client(self) -> Any:
        """The ``hdfs`` package client (untyped), created on first use (thread-safe)."""
        if self._client is None:
            with self._client_lock:
                if self._client is None:
                    self._client = self._make_client()
        return self._client

    def _make_client(self) -> Any:
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
    def remember(self, path: str, info: Remembered) -> None:
        """Keep what reading ``path`` taught (the last ``remember_files`` files)."""
        if self.remember_files <= 0:
            return
        with self._recent_lock:
            self._recent[path] = info
            self._recent.move_to_end(path)
            while len(self._recent) > self.remember_files:
                self._recent.popitem(last=False)

    def recall(self, path: str) -> Optional[Remembered]:
        """What reading ``path`` taught, if it was read recently."""
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

    def call(self, action: str, path: str, fn: Callable[[Any], T]) -> T:
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
        message = _first_part(message)
        where = self.uri(path)
        if exception in _NOT_FOUND and str(message).startswith(_NOT_A_FILE):
            return StorageError(f"Cannot read {where}: it is a directory ({message})")
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
            entries = self.call("listing", path, lambda c: c._list_status(path).json())
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
            st = self.call("reading the status of", path, lambda c: c._get_file_status(path).json())
        except PathNotFoundError:
            return None
        return _to_status(path, st["FileStatus"])

    def open_input(self, path: str, size: Optional[int] = None) -> BinaryIO:
        """A seekable reader; ``size`` (from a listing) saves the ``GETFILESTATUS`` round trip.

        Reopening a file read recently through this instance reuses its size, tail and DataNode
        URL (the last ``remember_files`` files; ACID data files never change once written).
        """
        return binary_file(WebHdfsInputFile(self, _abs(path), size=size))

    def read_bytes(self, path: str, length: Optional[int] = None) -> bytes:
        """The file's first ``length`` bytes (all when None) in one ``OPEN``, without a status."""
        path = _abs(path)
        kw = {"offset": 0} if length is None else {"offset": 0, "length": length}
        try:
            return self.call("reading", path, lambda c: _content(c._open(path, **kw)))
        except PathNotFoundError as e:
            raise StorageError(vanished_message(self.uri(path))) from e

    # --- writing -----------------------------------------------------------------------------
    def mkdirs(self, path: str) -> None:
        path = _abs(path)
        try:
            ok = self.call("creating directory", path, lambda c: c._mkdirs(path).json()["boolean"])
        except PathExistsError as e:
            raise StorageError(f"Cannot create directory {self.uri(path)}: a file is in the way ({e})") from e
        if not ok:
            raise StorageError(f"Cannot create directory {self.uri(path)}")

    def open_output(self, path: str) -> BinaryIO:
        """A buffered writer; the file is uploaded (two-step ``CREATE``, overwrite) on close."""
        return binary_file(WebHdfsOutputFile(self, _abs(path)))

    def write_bytes(self, path: str, data: bytes) -> None:
        self.upload(_abs(path), data, overwrite=True)

    def _forget_under(self, path: str) -> None:
        prefix = path.rstrip("/") + "/"
        with self._recent_lock:
            for p in [p for p in self._recent if p == path or p.startswith(prefix)]:
                del self._recent[p]

    def upload(self, path: str, data: Any, *, overwrite: bool) -> None:
        """``CREATE`` ``path`` with ``data`` (bytes, a file object or an iterable of chunks)."""
        self._forget_under(path)
        _log.debug("WebHDFS CREATE %s (overwrite=%s)", path, overwrite)
        self.call("writing", path, lambda c: c.write(path, data=data, overwrite=overwrite))

    def rename(self, src: str, dst: str) -> None:
        src, dst = _abs(src), _abs(dst)
        self._forget_under(src)
        self._forget_under(dst)
        try:
            res = self.call("renaming", src,
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
            self.call("deleting", path, lambda c: c._delete(path, recursive=flag))
        except PathNotFoundError:
            pass

    def create_exclusive(self, path: str, data: bytes) -> bool:
        """Create ``path`` whole, only if absent; False if it existed.

        The data goes to a hidden temporary sibling (``CREATE``), which is then renamed to
        ``path`` with ``renameoptions=NONE`` (HDFS's ``rename2``: refused atomically when ``path``
        exists). A plain ``CREATE`` with ``overwrite=false`` is create-if-absent too, but a real
        NameNode lists the file from the moment the DataNode opens it, empty and then growing,
        until the upload ends: a concurrent reader would read a partial record.
        """
        path = _abs(path)
        parent, name = posixpath.split(path)
        tmp = posixpath.join(parent, f".{name}.{uuid.uuid4().hex}.tmp")
        self.upload(tmp, data, overwrite=False)
        self._forget_under(path)
        try:
            self.call("renaming", tmp,
                       lambda c: c._rename(tmp, destination=path, renameoptions="NONE"))
        except PathExistsError:
            self.delete(tmp)
            return False
        except BaseException:
            try:
                self.delete(tmp)
            except StorageError:
                _log.warning("Could not remove the temporary file %s", self.uri(tmp))
            raise
        return True

    def supports_atomic_rename(self) -> bool:
        return True


# --- helpers ---------------------------------------------------------------------------------
def _abs(path: str) -> str:
    return path if path.startswith("/") else "/" + path


def _to_status(path: str, s: dict) -> FileStatus:
    is_dir = s.get("type") == "DIRECTORY"
    return FileStatus(path, posixpath.basename(path.rstrip("/")) or "/", is_dir,
                      0 if is_dir else int(s.get("length", 0)))


def _first_part(message: Any) -> str:
    """A WebHDFS error message without the Java stack trace a DataNode appends to it (its
    ``CREATE``/``OPEN`` errors carry ``"...\\n\\tat org.apache.hadoop..."`` lines), cut to 500
    characters."""
    if isinstance(message, bytes):
        message = message.decode("utf-8", "replace")
    text = str(message)
    cut = text.find("\n\tat ")
    if cut >= 0:
        text = text[:cut]
    return text.strip()[:500]


def _content(res: Any) -> bytes:
    try:
        return res.content
    finally:
        res.close()


def _json_or_none(res: Any) -> Any:
    try:
        return res.json() if res.content else None
    except ValueError:
        return None
