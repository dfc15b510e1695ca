"""One WebHDFS service for a test, either the protocol double or the real MiniDFSCluster.

Storage tests that are about behaviour (reads, writes, DML, compaction, vacuum, the streaming sink,
concurrent commits) take the ``webhdfs_target`` fixture and run twice: against
``tests/webhdfs_double`` (``[double]``) and against a real NameNode + DataNode (``[hdfs]``, marker
``hdfs``). Tests that inject faults or latency use the double alone (``WebHdfsDouble``).

Both kinds offer the same small API (:class:`WebHdfsTarget`); set-up goes through WebHDFS itself
on the real cluster and through the backing folder on the double. :class:`RequestLog` counts the
HTTP requests a client sends (a ``requests`` response hook), so round-trip claims are checked the
same way against both.
"""
from __future__ import annotations

import contextlib
import os
import posixpath
import shutil
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Optional
from urllib.parse import parse_qs, urlsplit

import pytest

from spark_hive_acid.io.webhdfs import WebHdfsFileSystem

KINDS = ["double", pytest.param("hdfs", marks=pytest.mark.hdfs)]


@dataclass
class WebHdfsTarget:
    """A WebHDFS service: ``kind`` is ``"double"`` or ``"hdfs"`` (the real MiniDFSCluster)."""

    kind: str
    url: str
    user: str
    rpc_port: Optional[int] = None  # the real NameNode's RPC port (hdfs:// URIs)
    double: Any = None  # the WebHdfsDouble, for the double
    _admin: Optional[WebHdfsFileSystem] = field(default=None, repr=False)

    @property
    def real(self) -> bool:
        return self.kind == "hdfs"

    @property
    def netloc(self) -> str:
        return urlsplit(self.url).netloc

    def uri(self, path: str = "/", scheme: str = "webhdfs") -> str:
        """``webhdfs://host:port/path``; ``hdfs://…`` too (then pass :meth:`options`)."""
        path = path if path.startswith("/") else "/" + path
        if scheme == "hdfs":
            port = self.rpc_port if self.rpc_port else urlsplit(self.url).port
            return f"hdfs://127.0.0.1:{port}{path}"
        return f"{scheme}://{self.netloc}{path}"

    def options(self, **extra: str) -> dict[str, str]:
        """Options that make ``hdfs://`` URIs use this service's WebHDFS address."""
        return {"hdfsClient": "webhdfs", "webhdfsUrl": self.url, **extra}

    def fs(self, user: Optional[str] = None) -> WebHdfsFileSystem:
        """A new file system (its own HTTP session) on this service, as ``user``."""
        return WebHdfsFileSystem(self.url, user=user or self.user)

    @property
    def admin(self) -> WebHdfsFileSystem:
        """The file system the tests set things up with (the superuser)."""
        if self._admin is None:
            self._admin = self.fs()
        return self._admin

    # --- set-up and inspection (through the backing folder on the double) -----------------
    def make_tree(self, files: dict[str, bytes], dirs: Iterable[str] = ()) -> None:
        if self.double is not None:
            from webhdfs_double.server import make_tree

            make_tree(self.double, files, dirs)
            return
        for d in dirs:
            self.admin.mkdirs(d)
        for p, data in files.items():
            self.admin.write_bytes(p, data)

    def read(self, path: str) -> bytes:
        if self.double is not None:
            with open(self.double.local_path(path), "rb") as f:
                return f.read()
        return self.admin.read_bytes(path)

    def exists(self, path: str) -> bool:
        if self.double is not None:
            return os.path.lexists(self.double.local_path(path))
        return self.admin.exists(path)

    def remove(self, path: str) -> None:
        """Delete a file behind the tested client's back (what a cleaner elsewhere does)."""
        if self.double is not None:
            os.remove(self.double.local_path(path))
        else:
            self.fs().delete(path)

    def upload(self, local_dir: str, path: str) -> str:
        """Copy the folder ``local_dir`` to ``path`` (a table copied onto the cluster); returns
        its ``webhdfs://`` URI."""
        if self.double is not None:
            shutil.copytree(local_dir, self.double.local_path(path))
            return self.uri(path)
        for root, dirs, files in os.walk(local_dir):
            rel = os.path.relpath(root, local_dir)
            here = path if rel == "." else posixpath.join(path, *rel.split(os.sep))
            self.admin.mkdirs(here)
            for name in files:
                with open(os.path.join(root, name), "rb") as f:
                    self.admin.write_bytes(posixpath.join(here, name), f.read())
        return self.uri(path)

    def download(self, path: str, local_dir: str) -> str:
        """Copy the tree at ``path`` into the new folder ``local_dir`` (to read it from local
        disk); returns ``local_dir``."""
        if self.double is not None:
            shutil.copytree(self.double.local_path(path), local_dir)
            return local_dir
        os.makedirs(local_dir)
        for entry in self.admin.list_dir(path):
            target = os.path.join(local_dir, entry.name)
            if entry.is_dir:
                self.download(entry.path, target)
            else:
                with open(target, "wb") as f:
                    f.write(self.admin.read_bytes(entry.path))
        return local_dir

    def names(self, path: str) -> list[str]:
        """The names in a directory, in the order the service lists them."""
        if self.double is not None:
            return sorted(n for n in os.listdir(self.double.local_path(path))
                          if not n.startswith(".webhdfs-double"))
        return [s.name for s in self.admin.list_dir(path)]


@dataclass(frozen=True)
class SentRequest:
    """One HTTP request a client sent and the status it got."""

    method: str
    op: str
    datanode: bool
    status: int
    params: dict


class RequestLog:
    """Every HTTP request a :class:`WebHdfsFileSystem` sends, recorded by a response hook (each
    response of a redirect chain counts: the NameNode's 307 and the DataNode's answer)."""

    def __init__(self, fs: WebHdfsFileSystem) -> None:
        self.sent: list[SentRequest] = []
        nn = urlsplit(fs.url.split(";")[0]).netloc
        session = fs.client._session

        def hook(res: Any, *args: Any, **kwargs: Any) -> None:
            parts = urlsplit(res.request.url)
            params = {k: v[-1] for k, v in parse_qs(parts.query).items()}
            # a DataNode: another address (real), or the double's datanode=true URL
            datanode = parts.netloc != nn or params.get("datanode") == "true" \
                or "namenoderpcaddress" in params
            self.sent.append(SentRequest(res.request.method, params.get("op", "").upper(),
                                         datanode, res.status_code, params))

        session.hooks.setdefault("response", []).append(hook)

    def ops(self) -> list[tuple[str, bool]]:
        return [(r.op, r.datanode) for r in self.sent]

    def count(self, op: Optional[str] = None) -> int:
        return sum(1 for r in self.sent if op is None or r.op == op)

    def reset(self) -> None:
        self.sent.clear()

    def __iter__(self) -> Iterator[SentRequest]:
        return iter(self.sent)

    def __len__(self) -> int:
        return len(self.sent)


@contextlib.contextmanager
def webhdfs_target_of(kind: str, request: pytest.FixtureRequest,
                      tmp_path) -> Iterator[WebHdfsTarget]:
    """``"double"``: a new WebHDFS double; ``"hdfs"``: the real MiniDFSCluster (emptied)."""
    if kind == "double":
        from webhdfs_double import WebHdfsDouble

        with WebHdfsDouble(str(tmp_path / "webhdfs_root")) as srv:
            yield WebHdfsTarget("double", srv.url, "alice", double=srv)
        return
    hdfs = request.getfixturevalue("hdfs")
    yield WebHdfsTarget("hdfs", hdfs.url, hdfs.superuser, rpc_port=hdfs.cluster.rpc_port)


@pytest.fixture(params=KINDS)
def webhdfs_target(request: pytest.FixtureRequest, tmp_path) -> Iterator[WebHdfsTarget]:
    """The WebHDFS double, then the real MiniDFSCluster (emptied), as a :class:`WebHdfsTarget`."""
    with webhdfs_target_of(request.param, request, tmp_path) as target:
        yield target
