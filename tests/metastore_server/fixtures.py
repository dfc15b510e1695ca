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
#: Hive 3's insert-only tables in the 2.3 metastore: java/TransactionalValidationListener.java
INSERT_ONLY_SHIM = Path(__file__).resolve().parent / "java" / "TransactionalValidationListener.java"
SHIM_BUILD_DIR = Path(__file__).resolve().parents[2] / ".build" / "metastore_shim"


def insert_only_shim() -> Optional[Path]:
    """The compiled listener that lets the metastore hold insert-only tables (None without a
    JDK: insert-only tables are then refused, as by any Hive 2.3 metastore)."""
    from hive_ref import HiveReferenceError, compile_java

    try:
        return compile_java([INSERT_ONLY_SHIM], SHIM_BUILD_DIR,
                            Path("org/apache/hadoop/hive/metastore/"
                                 "TransactionalValidationListener.class"))
    except HiveReferenceError as e:  # no javac
        log.warning("metastore without insert-only support: %s", e)
        return None


@dataclass(frozen=True)
class RunningMetastore:
    """What tests get: the Thrift URI, the local warehouse directory and the server."""

    uri: str
    warehouse: Path
    server: MetastoreServer

    @property
    def accepts_insert_only(self) -> bool:
        """Whether Hive 3's insert-only tables can be created here (see insert_only_shim)."""
        return bool(self.server.extra_classpath)

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
            shim = insert_only_shim()
            server = MetastoreServer(base_dir, extra_classpath=[shim] if shim else [])
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
