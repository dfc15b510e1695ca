"""WebHDFS protocol double: the REST operations of a NameNode and a DataNode, backed by a folder.

What it implements (real HTTP/1.1 with keep-alive, on 127.0.0.1 only, an ephemeral port):

* ``/webhdfs/v1/<path>?op=...&user.name=...`` with the operations ``GETFILESTATUS``, ``LISTSTATUS``,
  ``GETHOMEDIRECTORY``, ``OPEN`` (``offset``/``length``; the NameNode step answers ``307`` to a
  "DataNode" URL on the same server, flagged ``datanode=true``, as a real NameNode redirects to a
  DataNode), the two-step ``CREATE`` (``307`` from the NameNode step, then the ``PUT`` of the data
  to the DataNode URL; ``overwrite=false`` is create-if-absent, atomically), ``MKDIRS``, ``RENAME``
  (without ``renameoptions``: HDFS's old semantics, ``{"boolean": false}`` when the destination
  file exists and *moving into* an existing destination directory; with ``renameoptions=NONE``:
  HDFS's ``rename2``, ``FileAlreadyExistsException`` when the destination exists) and ``DELETE``
  (``recursive``), and ``noredirect=true`` on ``OPEN``/``CREATE``.
* Errors as WebHDFS sends them: a JSON body
  ``{"RemoteException": {"exception": ..., "javaClassName": ..., "message": ...}}`` with the
  status code Hadoop's ``ExceptionHandler`` picks (404 for ``FileNotFoundException``, 403 for
  ``AccessControlException`` and other ``IOException``\\ s, 400 for bad parameters).
* Permission denial for a configurable set of paths (:meth:`WebHdfsDouble.forbid`), injected
  failures (:meth:`WebHdfsDouble.fail_next`, e.g. a ``StandbyException``), a per-request latency
  (to imitate a cluster's round trip time) and a log of every HTTP request (to count round trips).

What it does not do: authentication (``user.name`` is recorded, never checked), blocks, leases,
replication, append, ACLs, snapshots, delegation tokens, HA (one server) and quotas.
"""
from __future__ import annotations

import json
import logging
import os
import posixpath
import shutil
import socket
import stat as stat_mod
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterable, Optional
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit

_log = logging.getLogger(__name__)

PREFIX = "/webhdfs/v1"
STAGING_DIR = ".webhdfs-double-staging"  # inside root, hidden from every operation

_JAVA_CLASS = {
    "FileNotFoundException": "java.io.FileNotFoundException",
    "AccessControlException": "org.apache.hadoop.security.AccessControlException",
    "FileAlreadyExistsException": "org.apache.hadoop.fs.FileAlreadyExistsException",
    "ParentNotDirectoryException": "org.apache.hadoop.fs.ParentNotDirectoryException",
    "PathIsNotEmptyDirectoryException": "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException",
    "IllegalArgumentException": "java.lang.IllegalArgumentException",
    "IOException": "java.io.IOException",
    "EOFException": "java.io.EOFException",
    "StandbyException": "org.apache.hadoop.ipc.StandbyException",
    "RetriableException": "org.apache.hadoop.ipc.RetriableException",
    "UnsupportedOperationException": "java.lang.UnsupportedOperationException",
    "RuntimeException": "java.lang.RuntimeException",
}

# op -> HTTP method, as WebHDFS defines them
_OP_METHOD = {
    "GETFILESTATUS": "GET", "LISTSTATUS": "GET", "GETHOMEDIRECTORY": "GET", "OPEN": "GET",
    "CREATE": "PUT", "MKDIRS": "PUT", "RENAME": "PUT", "DELETE": "DELETE",
}


class RemoteError(Exception):
    """An error answered as a WebHDFS ``RemoteException`` JSON body."""

    def __init__(self, status: int, exception: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.exception = exception
        self.message = message

    def body(self) -> dict:
        return {"RemoteException": {
            "exception": self.exception,
            "javaClassName": _JAVA_CLASS.get(self.exception, "java.io.IOException"),
            "message": self.message,
        }}


def _not_found(message: str) -> RemoteError:
    return RemoteError(404, "FileNotFoundException", message)


@dataclass(frozen=True)
class RecordedRequest:
    """One HTTP request the double served."""

    method: str
    op: str
    path: str
    params: dict
    datanode: bool
    user: Optional[str]


@dataclass
class _Failure:
    op: str
    status: int
    exception: str
    message: str
    times: int
    datanode: Optional[bool]
    path: Optional[str]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "WebHdfsDouble/1.0"
    timeout = 30  # idle keep-alive connections are dropped after this many seconds
    disable_nagle_algorithm = True  # headers and body go out in separate writes

    def setup(self) -> None:
        super().setup()
        self.server.double._track(self.connection, True)  # type: ignore[attr-defined]

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.double._track(self.connection, False)  # type: ignore[attr-defined]

    def do_GET(self) -> None:  # noqa: N802 (http.server naming)
        self.server.double._handle(self, "GET")  # type: ignore[attr-defined]

    def do_PUT(self) -> None:  # noqa: N802
        self.server.double._handle(self, "PUT")  # type: ignore[attr-defined]

    def do_POST(self) -> None:  # noqa: N802
        self.server.double._handle(self, "POST")  # type: ignore[attr-defined]

    def do_DELETE(self) -> None:  # noqa: N802
        self.server.double._handle(self, "DELETE")  # type: ignore[attr-defined]

    def log_message(self, format: str, *args) -> None:  # noqa: A002 (http.server signature)
        _log.debug("webhdfs double: " + format, *args)

    # --- body and responses ----------------------------------------------------------------
    def read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while True:
                line = self.rfile.readline()
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()  # CRLF after the chunk
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def send(self, status: int, body: bytes = b"", content_type: Optional[str] = "application/octet-stream",
             headers: Optional[dict] = None) -> None:
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if body:
            self.wfile.write(body)

    def send_json(self, status: int, obj: object) -> None:
        ctype = self.server.double.json_content_type  # type: ignore[attr-defined]
        self.send(status, json.dumps(obj).encode(), ctype)


class WebHdfsDouble:
    """A WebHDFS server over ``root_dir``: ``webhdfs://127.0.0.1:PORT/a/b`` is ``root_dir/a/b``.

    Use as a context manager (or :meth:`start` / :meth:`stop`). ``redirect_open=False`` serves
    ``OPEN`` directly from the NameNode step, as HttpFS does. ``latency`` (seconds) is slept before
    each request is answered. ``json_content_type=None`` leaves the Content-Type header off JSON
    answers (only for Hadoop's shaded Java client in pyspark's jars, which cannot parse it).
    """

    def __init__(self, root_dir: str, *, redirect_open: bool = True, latency: float = 0.0,
                 owner: str = "hdfs", json_content_type: Optional[str] = "application/json") -> None:
        self.root_dir = os.path.abspath(str(root_dir))
        self.json_content_type = json_content_type
        self.redirect_open = redirect_open
        self.latency = latency
        self.owner = owner
        self._forbidden: set[str] = set()
        self._failures: list[_Failure] = []
        self._log: list[RecordedRequest] = []
        self._lock = threading.Lock()  # request log, failures, forbidden set
        self._ns_lock = threading.RLock()  # namespace changes are atomic, like the NameNode's lock
        self._conns: set[socket.socket] = set()
        self._server: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    # --- life cycle ------------------------------------------------------------------------
    def start(self) -> "WebHdfsDouble":
        os.makedirs(self.root_dir, exist_ok=True)
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        server.daemon_threads = True
        server.double = self  # type: ignore[attr-defined]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"webhdfs-double-{self.port}", daemon=True)
        self._thread.start()
        _log.info("WebHDFS double serving %s at %s", self.root_dir, self.url)
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        with self._lock:
            conns = list(self._conns)
        for c in conns:  # close idle keep-alive connections so their threads end
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        _log.info("WebHDFS double at 127.0.0.1:%s stopped", server.server_address[1])

    def __enter__(self) -> "WebHdfsDouble":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._lock:
            (self._conns.add if add else self._conns.discard)(conn)

    # --- addresses -------------------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return self._server.server_address[1]

    @property
    def netloc(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """The NameNode HTTP address, e.g. ``http://127.0.0.1:PORT`` (option ``webhdfsUrl``)."""
        return f"http://{self.netloc}"

    def uri(self, path: str = "/", scheme: str = "webhdfs") -> str:
        """``webhdfs://127.0.0.1:PORT/path`` for a path of this server."""
        return f"{scheme}://{self.netloc}/{path.lstrip('/')}"

    def local_path(self, hdfs_path: str) -> str:
        """The file under ``root_dir`` that serves ``hdfs_path``."""
        rel = posixpath.normpath("/" + hdfs_path).lstrip("/")
        return os.path.join(self.root_dir, *[p for p in rel.split("/") if p])

    # --- test controls ---------------------------------------------------------------------
    def forbid(self, *paths: str) -> None:
        """Deny every operation on these paths and below (``AccessControlException``, 403)."""
        with self._lock:
            self._forbidden.update(self._norm(p) for p in paths)

    def allow(self, *paths: str) -> None:
        with self._lock:
            self._forbidden.difference_update(self._norm(p) for p in paths)

    def fail_next(self, op: str, *, status: int = 403, exception: str = "StandbyException",
                  message: Optional[str] = None, times: int = 1, datanode: Optional[bool] = None,
                  path: Optional[str] = None) -> None:
        """Answer the next ``times`` requests of ``op`` with this RemoteException."""
        with self._lock:
            self._failures.append(_Failure(
                op.upper(), status, exception, message or f"injected {exception}", times, datanode,
                self._norm(path) if path else None))

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._log)

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self._log)

    def count(self, op: Optional[str] = None, datanode: Optional[bool] = None) -> int:
        """Requests served, optionally of one op and/or one side (NameNode/DataNode)."""
        return sum(1 for r in self.requests
                   if (op is None or r.op == op.upper()) and (datanode is None or r.datanode == datanode))

    def reset_log(self) -> None:
        with self._lock:
            self._log.clear()

    # --- request handling ------------------------------------------------------------------
    @staticmethod
    def _norm(path: str) -> str:
        return "/" + posixpath.normpath("/" + (path or "/")).lstrip("/")

    def _handle(self, h: _Handler, method: str) -> None:
        parts = urlsplit(h.path)
        params = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        op = params.get("op", "").upper()
        datanode = params.get("datanode") == "true"
        user = params.get("user.name")
        raw_path = unquote(parts.path[len(PREFIX):]) if parts.path.startswith(PREFIX) else None
        path = self._norm(raw_path) if raw_path is not None else parts.path
        with self._lock:
            self._log.append(RecordedRequest(method, op, path, params, datanode, user))
        try:
            body = h.read_body()
        except (OSError, ValueError):
            h.close_connection = True
            return
        if self.latency:
            time.sleep(self.latency)
        try:
            if raw_path is None:
                raise _not_found(f"No such resource {parts.path}: WebHDFS is under {PREFIX}")
            self._check_injected(op, datanode, path)
            expected = _OP_METHOD.get(op)
            if expected is None or expected != method:
                raise RemoteError(400, "IllegalArgumentException",
                                  f'Invalid value for webhdfs parameter "op": No enum constant '
                                  f"org.apache.hadoop.hdfs.web.resources.{method.title()}OpParam.Op.{op}")
            if STAGING_DIR in path.split("/"):
                raise RemoteError(403, "AccessControlException", f"Reserved path {path}")
            getattr(self, f"_op_{op.lower()}")(h, path, params, body, user, datanode)
        except RemoteError as e:
            h.send_json(e.status, e.body())
        except (BrokenPipeError, ConnectionResetError):
            h.close_connection = True
        except Exception as e:  # a bug in the double: answer like a server would, and log it
            _log.exception("WebHDFS double failed on %s %s", method, h.path)
            h.send_json(500, RemoteError(500, "RuntimeException", repr(e)).body())

    def _check_injected(self, op: str, datanode: bool, path: str) -> None:
        with self._lock:
            for f in self._failures:
                if f.op == op and f.times > 0 and (f.datanode is None or f.datanode == datanode) \
                        and (f.path is None or f.path == path):
                    f.times -= 1
                    raise RemoteError(f.status, f.exception, f.message)

    def _check_access(self, path: str, user: Optional[str], access: str) -> None:
        with self._lock:
            forbidden = list(self._forbidden)
        for f in forbidden:
            if path == f or path.startswith(f.rstrip("/") + "/"):
                raise RemoteError(403, "AccessControlException",
                                  f"Permission denied: user={user or 'dr.who'}, access={access}, "
                                  f'inode="{f}":{self.owner}:supergroup:drwx------')

    def _status(self, path: str, local: str, suffix: str) -> dict:
        st = os.stat(local)
        is_dir = stat_mod.S_ISDIR(st.st_mode)
        children = 0
        if is_dir:
            try:
                children = sum(1 for n in os.listdir(local) if n != STAGING_DIR)
            except OSError:
                pass
        return {
            "accessTime": 0 if is_dir else int(st.st_atime * 1000),
            "blockSize": 0 if is_dir else 134217728,
            "childrenNum": children,
            "fileId": st.st_ino,
            "group": "supergroup",
            "length": 0 if is_dir else st.st_size,
            "modificationTime": int(st.st_mtime * 1000),
            "owner": self.owner,
            "pathSuffix": suffix,
            "permission": "755" if is_dir else "644",
            "replication": 0 if is_dir else 3,
            "storagePolicy": 0,
            "type": "DIRECTORY" if is_dir else "FILE",
        }

    def _datanode_url(self, path: str, params: dict, **extra: str) -> str:
        query = {k: v for k, v in params.items() if k not in ("noredirect",)}
        query.update(extra)
        query["datanode"] = "true"
        query["namenoderpcaddress"] = self.netloc
        return f"{self.url}{PREFIX}{quote(path)}?{urlencode(query)}"

    def _redirect(self, h: _Handler, location: str, params: dict) -> None:
        if params.get("noredirect", "").lower() == "true":
            h.send_json(200, {"Location": location})
        else:
            h.send(307, headers={"Location": location})

    # --- read operations -------------------------------------------------------------------
    def _op_getfilestatus(self, h, path, params, body, user, datanode) -> None:
        self._check_access(path, user, "READ")
        try:
            h.send_json(200, {"FileStatus": self._status(path, self.local_path(path), "")})
        except FileNotFoundError:
            raise _not_found(f"File does not exist: {path}") from None

    def _op_liststatus(self, h, path, params, body, user, datanode) -> None:
        self._check_access(path, user, "READ_EXECUTE")
        local = self.local_path(path)
        try:
            if not os.path.isdir(local):
                entries = [self._status(path, local, "")]
            else:
                entries = []
                for name in sorted(os.listdir(local)):
                    if name == STAGING_DIR:
                        continue
                    try:
                        entries.append(self._status(posixpath.join(path, name),
                                                    os.path.join(local, name), name))
                    except FileNotFoundError:  # removed while listing
                        continue
        except FileNotFoundError:
            raise _not_found(f"File {path} does not exist.") from None
        h.send_json(200, {"FileStatuses": {"FileStatus": entries}})

    def _op_gethomedirectory(self, h, path, params, body, user, datanode) -> None:
        h.send_json(200, {"Path": f"/user/{user or 'dr.who'}"})

    def _op_open(self, h, path, params, body, user, datanode) -> None:
        self._check_access(path, user, "READ")
        local = self.local_path(path)
        try:
            offset = int(params.get("offset") or 0)
            length = int(params["length"]) if params.get("length") not in (None, "") else None
        except ValueError:
            raise RemoteError(400, "IllegalArgumentException", "Invalid offset/length "
                              f"{params.get('offset')}/{params.get('length')}") from None
        if offset < 0 or (length is not None and length < 0):
            raise RemoteError(400, "IllegalArgumentException", "Offset and length must be >= 0")
        if os.path.isdir(local):
            raise _not_found(f"Path is not a file: {path}")
        if not os.path.exists(local):
            raise _not_found(f"File does not exist: {path}")
        if not datanode and self.redirect_open:
            self._redirect(h, self._datanode_url(path, params), params)
            return
        try:
            with open(local, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if offset > size or (offset == size and size > 0):  # as a real DataNode
                    raise RemoteError(403, "IOException",
                                      f"Offset={offset} out of the range [0, {size}); OPEN, path={path}")
                f.seek(offset)
                data = f.read() if length is None else f.read(length)
        except FileNotFoundError:
            raise _not_found(f"File does not exist: {path}") from None
        h.send(200, data)

    # --- write operations ------------------------------------------------------------------
    def _check_parents(self, path: str, *, create: bool) -> None:
        """Raise ParentNotDirectoryException if an ancestor is a file; create missing ones."""
        parent = posixpath.dirname(path)
        parts = [p for p in parent.split("/") if p]
        cur = "/"
        for p in parts:
            cur = posixpath.join(cur, p)
            local = self.local_path(cur)
            if os.path.exists(local) and not os.path.isdir(local):
                raise RemoteError(403, "ParentNotDirectoryException", f"{cur} (is not a directory)")
        if create:
            os.makedirs(self.local_path(parent), exist_ok=True)

    def _op_create(self, h, path, params, body, user, datanode) -> None:
        self._check_access(path, user, "WRITE")
        overwrite = params.get("overwrite", "false").lower() == "true"
        if not datanode:  # NameNode step: send the client to a "DataNode"
            self._redirect(h, self._datanode_url(path, params, overwrite=str(overwrite).lower()), params)
            return
        staging = os.path.join(self.root_dir, STAGING_DIR)
        os.makedirs(staging, exist_ok=True)
        tmp = os.path.join(staging, uuid.uuid4().hex)
        with open(tmp, "wb") as f:
            f.write(body)
        local = self.local_path(path)
        try:
            with self._ns_lock:
                self._check_parents(path, create=True)
                if os.path.isdir(local):
                    raise RemoteError(403, "FileAlreadyExistsException",
                                      f"{path} already exists as a directory")
                if overwrite:
                    os.replace(tmp, local)
                else:
                    try:
                        os.link(tmp, local)  # atomic create-if-absent
                    except FileExistsError:
                        raise RemoteError(403, "FileAlreadyExistsException",
                                          f"{path} for client 127.0.0.1 already exists") from None
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
        h.send(201, headers={"Location": f"hdfs://{self.netloc}{quote(path)}"})

    def _op_mkdirs(self, h, path, params, body, user, datanode) -> None:
        self._check_access(path, user, "WRITE")
        with self._ns_lock:
            local = self.local_path(path)
            if os.path.exists(local) and not os.path.isdir(local):
                raise RemoteError(403, "FileAlreadyExistsException", f"Path is not a directory: {path}")
            self._check_parents(path, create=False)
            os.makedirs(local, exist_ok=True)
        h.send_json(200, {"boolean": True})

    def _op_rename(self, h, path, params, body, user, datanode) -> None:
        dst_param = params.get("destination")
        if not dst_param:
            raise RemoteError(400, "IllegalArgumentException",
                              "Required param destination for op: RENAME is null or empty")
        dst = self._norm(unquote(dst_param))
        self._check_access(path, user, "WRITE")
        self._check_access(dst, user, "WRITE")
        options = [o.strip().upper() for o in params.get("renameoptions", "").split(",") if o.strip()]
        with self._ns_lock:
            if options:
                self._rename2(path, dst, "OVERWRITE" in options)
                h.send(200)
            else:
                h.send_json(200, {"boolean": self._rename_old(path, dst)})

    def _rename_old(self, src: str, dst: str) -> bool:
        """``ClientProtocol.rename``: False on failure; into ``dst`` when it is a directory."""
        lsrc, ldst = self.local_path(src), self.local_path(dst)
        if src == "/" or not os.path.exists(lsrc):
            return False
        if os.path.isdir(ldst):
            dst = posixpath.join(dst, posixpath.basename(src))
            ldst = self.local_path(dst)
        if os.path.exists(ldst) or not os.path.isdir(os.path.dirname(ldst)):
            return False
        if dst == src or dst.startswith(src.rstrip("/") + "/"):
            return False
        os.rename(lsrc, ldst)
        return True

    def _rename2(self, src: str, dst: str, overwrite: bool) -> None:
        """``ClientProtocol.rename2``: raises when ``dst`` exists (unless OVERWRITE)."""
        lsrc, ldst = self.local_path(src), self.local_path(dst)
        if not os.path.exists(lsrc):
            raise _not_found(f"rename source {src} is not found.")
        if dst == src or dst.startswith(src.rstrip("/") + "/"):
            raise RemoteError(403, "IOException", f"The source {src} and destination {dst} are the same "
                              "or the destination is under the source")
        if os.path.exists(ldst):
            if not overwrite:
                raise RemoteError(403, "FileAlreadyExistsException",
                                  f"rename destination {dst} already exists.")
            if os.path.isdir(ldst) and os.listdir(ldst):
                raise RemoteError(403, "IOException", f"rename destination directory is not empty: {dst}")
            if os.path.isdir(ldst) != os.path.isdir(lsrc):
                raise RemoteError(403, "IOException",
                                  f"Source {src} and destination {dst} must both be directories or files")
        parent = os.path.dirname(ldst)
        if not os.path.exists(parent):
            raise _not_found(f"rename destination parent {posixpath.dirname(dst)} not found.")
        if not os.path.isdir(parent):
            raise RemoteError(403, "ParentNotDirectoryException",
                              f"rename destination parent {posixpath.dirname(dst)} is a file.")
        if os.path.isdir(ldst):
            os.rmdir(ldst)
        os.replace(lsrc, ldst)

    def _op_delete(self, h, path, params, body, user, datanode) -> None:
        self._check_access(path, user, "WRITE")
        recursive = params.get("recursive", "false").lower() == "true"
        local = self.local_path(path)
        with self._ns_lock:
            if path == "/" or not os.path.lexists(local):
                h.send_json(200, {"boolean": False})
                return
            if os.path.isdir(local):
                if os.listdir(local) and not recursive:
                    raise RemoteError(403, "PathIsNotEmptyDirectoryException",
                                      f"`{path} is non empty': Directory is not empty")
                shutil.rmtree(local)
            else:
                os.remove(local)
        h.send_json(200, {"boolean": True})


def make_tree(srv: WebHdfsDouble, files: dict[str, bytes], dirs: Iterable[str] = ()) -> None:
    """Create ``files`` (path -> content) and empty ``dirs`` directly under the server's root."""
    for d in dirs:
        os.makedirs(srv.local_path(d), exist_ok=True)
    for p, data in files.items():
        local = srv.local_path(p)
        os.makedirs(os.path.dirname(local), exist_ok=True)
        with open(local, "wb") as f:
            f.write(data)

