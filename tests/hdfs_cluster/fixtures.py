"""pytest fixtures: ONE real HDFS (MiniDFSCluster) per test session, shared by reference count.

``hdfs_cluster`` (session) starts it on first use; ``hdfs`` (per test) hands it over with an empty
namespace, so every test starts from ``/`` with nothing in it. When the cluster cannot start
(no JDK, no Maven, Maven Central unreachable, a start-up error) the tests needing it are skipped
with the reason, or fail under ``CI=true`` (:mod:`service_required`).
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

import pytest

from service_required import unavailable

from .server import HdfsClusterError, MiniHdfsCluster

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunningHdfs:
    """What tests get: addresses, URIs and options for the running cluster."""

    cluster: MiniHdfsCluster

    @property
    def url(self) -> str:
        """The NameNode's HTTP (WebHDFS) address, option ``webhdfsUrl``."""
        return self.cluster.url

    @property
    def netloc(self) -> str:
        return f"127.0.0.1:{self.cluster.http_port}"

    @property
    def superuser(self) -> str:
        """The user the NameNode runs as (HDFS's superuser); the tests' default user."""
        return self.cluster.superuser

    def uri(self, path: str = "/", scheme: str = "webhdfs") -> str:
        """``webhdfs://127.0.0.1:HTTP/path``, or ``hdfs://127.0.0.1:RPC/path`` (then pass
        :meth:`options`)."""
        path = path if path.startswith("/") else "/" + path
        if scheme == "hdfs":
            return f"hdfs://127.0.0.1:{self.cluster.rpc_port}{path}"
        return f"{scheme}://{self.netloc}{path}"

    def options(self, **extra: str) -> dict[str, str]:
        """Options for ``hdfs://`` URIs: WebHDFS at this NameNode's HTTP address."""
        return {"hdfsClient": "webhdfs", "webhdfsUrl": self.url, **extra}

    def fs(self, user: Optional[str] = None):
        """A :class:`~spark_hive_acid.io.webhdfs.WebHdfsFileSystem` on this cluster."""
        from spark_hive_acid.io.webhdfs import WebHdfsFileSystem

        return WebHdfsFileSystem(self.url, user=user or self.superuser)

    def wipe(self) -> None:
        """Remove everything under ``/`` (as the superuser)."""
        fs = self.fs()
        for entry in fs.list_dir("/"):
            fs.delete(entry.path, recursive=True)


#: Closing a file through WebHDFS ends in the DataNode's DFSClient asking the NameNode to complete
#: it, retrying after 400 ms (Hadoop's default) while the block is not yet reported: a small file
#: then takes 150-400 ms to write, a path-mode append ~0.8 s. 20 ms keeps the protocol and cuts
#: the suite's time (an append ~0.3 s); docs/storage.md has both numbers.
TEST_SETTINGS = {"dfs.client.block.write.locateFollowingBlock.initial.delay.ms": "20"}

_guard = threading.Lock()
_shared: Optional[RunningHdfs] = None
_users = 0


def acquire(base_dir: Path) -> RunningHdfs:
    """Start the shared cluster on first use (data in ``base_dir``); later calls reuse it."""
    global _shared, _users
    with _guard:
        if _shared is None:
            _shared = RunningHdfs(MiniHdfsCluster(base_dir, settings=TEST_SETTINGS).start())
        _users += 1
        return _shared


def release() -> None:
    """Stop the shared cluster when its last user is done."""
    global _shared, _users
    with _guard:
        _users -= 1
        if _users <= 0 and _shared is not None:
            _shared.cluster.stop()
            _shared, _users = None, 0


_failure: Optional[str] = None  # why the cluster could not start (tried once per session)


@pytest.fixture(scope="session")
def hdfs_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningHdfs]:
    """A running MiniDFSCluster (Hadoop 3.5.0, WebHDFS on 127.0.0.1) for the whole session."""
    global _failure
    if _failure is not None:
        unavailable("HDFS MiniDFSCluster", _failure)
    try:
        running = acquire(tmp_path_factory.mktemp("minihdfs"))
    except HdfsClusterError as e:
        _failure = str(e)
        unavailable("HDFS MiniDFSCluster", _failure)
    try:
        yield running
    finally:
        release()


@pytest.fixture
def hdfs(hdfs_cluster: RunningHdfs) -> RunningHdfs:
    """The session's cluster with an empty namespace."""
    hdfs_cluster.wipe()
    return hdfs_cluster
