"""pytest fixtures: ONE real Hive Metastore 2.3.10 per test session.

``tests/conftest.py`` can expose it with ``from metastore_server.fixtures import metastore``;
test modules may import it too: every importer shares the same server (reference counted), so a
fixture defined in both places still starts a single process.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

import pytest

from .server import MetastoreServer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunningMetastore:
    """What tests get: the Thrift URI, the local warehouse directory and the server."""

    uri: str
    warehouse: Path
    server: MetastoreServer

    @property
    def log_path(self) -> Path:
        return self.server.log_path

    def client(self, **kwargs: Any) -> Any:
        """A new, not yet connected :class:`spark_hive_acid.metastore.MetastoreClient`."""
        from spark_hive_acid.metastore import MetastoreClient

        return MetastoreClient(self.uri, **kwargs)

    def options(self, **extra: str) -> dict[str, str]:
        """Data source options pointing at this metastore."""
        return {"metastoreUri": self.uri, **extra}


_guard = threading.Lock()
_shared: Optional[RunningMetastore] = None
_users = 0


def acquire(base_dir: Path) -> RunningMetastore:
    """Start the shared server on first use (in ``base_dir``); later calls reuse it."""
    global _shared, _users
    with _guard:
        if _shared is None:
            server = MetastoreServer(base_dir)
            server.start()  # raises RuntimeError with the log tail if it cannot start
            _shared = RunningMetastore(server.uri, server.warehouse, server)
        _users += 1
        return _shared


def release() -> None:
    """Stop the shared server when its last user is done."""
    global _shared, _users
    with _guard:
        _users -= 1
        if _users <= 0 and _shared is not None:
            _shared.server.stop()
            _shared, _users = None, 0


@pytest.fixture(scope="session")
def metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningMetastore]:
    """A running Hive Metastore 2.3.10 (Derby in a temp dir) for the whole session."""
    running = acquire(tmp_path_factory.mktemp("hive_metastore"))
    try:
        yield running
    finally:
        release()
