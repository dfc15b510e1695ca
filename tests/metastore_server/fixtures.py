"""pytest fixtures: ONE real Hive Metastore per version per test session.

``metastore`` is parametrised over the versions (``hive23``: 2.3.10 from the pyspark jars;
``hive31``: 3.1.3 and ``hive41``: 4.1.0 from Maven Central, with Hive's compactor threads on);
each parametrisation carries the marker of its version (``hive31`` / ``hive41``), so
``pytest -m hive41`` runs every metastore test against 4.1 only and ``-m "not hive31 and not
hive41"`` only against 2.3. ``HIVE_ACID_METASTORES=hive23,hive41`` narrows the list. pytest
groups the tests by version: one server runs at a time (Derby allows one process per database).

``tests/conftest.py`` exposes the fixture with ``from metastore_server.fixtures import
metastore``; test modules may import it too: every importer shares the same server per version
(reference counted), so a fixture defined in both places still starts a single process.

A server that cannot start fails its tests under ``CI=true`` and skips them (with the reason and
the log's tail) otherwise, like the corpus tests (tests/corpus_location.py).
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

import pytest

from corpus_location import in_ci

from .server import MetastoreServer
from .versions import selected_versions

log = logging.getLogger(__name__)
#: Hive 3's insert-only tables in the 2.3 metastore: java/TransactionalValidationListener.java
INSERT_ONLY_SHIM = Path(__file__).resolve().parent / "java" / "TransactionalValidationListener.java"
SHIM_BUILD_DIR = Path(__file__).resolve().parents[2] / ".build" / "metastore_shim"


def insert_only_shim() -> Optional[Path]:
    """The compiled listener that lets the 2.3 metastore hold insert-only tables (None without a
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
    def version(self) -> str:
        """``hive23``, ``hive31`` or ``hive41``."""
        return self.server.version

    @property
    def major(self) -> int:
        """2, 3 or 4."""
        return int(self.server.label.split(".")[0])

    @property
    def accepts_insert_only(self) -> bool:
        """Whether Hive 3's insert-only tables can be created here (2.3: see insert_only_shim)."""
        return self.version != "hive23" or bool(self.server.extra_classpath)

    @property
    def compactor_on(self) -> bool:
        """Whether Hive's own Initiator / Worker / Cleaner run in this metastore."""
        return self.server.settings.get("hive.compactor.initiator.on") == "true"

    @property
    def log_path(self) -> Path:
        return self.server.log_path

    def plain_location(self, path: Path) -> Optional[str]:
        """The location to create a NON-transactional table with: ``path``, except on Hive 4,
        whose metadata transformer turns such a table into an external one and refuses an
        external location inside its managed warehouse (here: every test's temp dir), so there
        the metastore picks the location (None)."""
        return None if self.major >= 4 else f"file:{path}"

    def our_open_txns(self, timeout: float = 120.0) -> list[int]:
        """The open transactions, once Hive's own compactor has none open: Hive 4's Worker runs
        each compaction in a transaction of its own (3.1's MapReduce compactor runs outside any,
        2.3 has none here), and no version reports the agent info that would tell them apart
        (``get_open_txns_info`` says "Unknown"). So this waits
        until no compaction is "working" (at most ``timeout`` s); "nothing left open" then means
        nothing of ours."""
        deadline = time.monotonic() + timeout
        with self.client() as c:
            while self.version == "hive41" and time.monotonic() < deadline and any(
                    x.state == "working" for x in c.compactions()):
                time.sleep(0.5)
            open_ids = c.txn_states().open_ids
            # the Worker marks its compaction done inside its transaction, just before it commits
            # it: one seen open here may be that one, so it must stay open a while to count as ours
            settle = time.monotonic() + (10.0 if self.version == "hive41" else 0.0)
            while open_ids and time.monotonic() < settle:
                time.sleep(0.5)
                open_ids = c.txn_states().open_ids
            return open_ids

    def client(self, **kwargs: Any) -> Any:
        """A new, not yet connected :class:`spark_hive_acid.metastore.MetastoreClient`."""
        from spark_hive_acid.metastore import MetastoreClient

        return MetastoreClient(self.uri, **kwargs)

    def options(self, **extra: str) -> dict[str, str]:
        """Data source options pointing at this metastore."""
        return {"metastoreUri": self.uri, **extra}


_guard = threading.Lock()
_shared: dict[str, RunningMetastore] = {}
_users: dict[str, int] = {}
_failed: dict[str, str] = {}


def new_server(base_dir: Path, version: str, warehouse_root: Optional[Path] = None,
               extra_settings: Optional[dict[str, str]] = None,
               **kwargs: Any) -> MetastoreServer:
    """A (not started) server of ``version``. ``warehouse_root``: Hive 4 refuses managed tables
    outside its warehouse, so its warehouse is the folder that holds every test's temp dir."""
    settings = dict(extra_settings or {})
    if warehouse_root is not None and version == "hive41":
        settings.setdefault("hive.metastore.warehouse.dir", warehouse_root.as_uri())
    return MetastoreServer(base_dir, version=version, extra_settings=settings, **kwargs)


def version_params(versions: Optional[tuple[str, ...]] = None) -> list[Any]:
    """pytest params of the selected versions (each with its marker), for fixtures of tests that
    start metastores of their own."""
    return _params(versions)


def acquire(base_dir: Path, version: str = "hive23",
            warehouse_root: Optional[Path] = None) -> RunningMetastore:
    """Start the shared server of ``version`` on first use (in ``base_dir``); later calls reuse
    it (``warehouse_root``: see :func:`new_server`)."""
    with _guard:
        if version in _failed:
            raise RuntimeError(_failed[version])
        if version not in _shared:
            extra = []
            if version == "hive23":
                shim = insert_only_shim()
                extra = [shim] if shim else []
            server = new_server(base_dir, version, warehouse_root, extra_classpath=extra)
            try:
                server.start()  # raises RuntimeError with the log tail if it cannot start
            except Exception as e:
                _failed[version] = f"Hive Metastore {server.label} could not start: {e}"
                raise RuntimeError(_failed[version]) from e
            warehouse = Path(server.settings["hive.metastore.warehouse.dir"].replace(
                "file://", "", 1))
            _shared[version] = RunningMetastore(server.uri, warehouse, server)
            _users[version] = 0
        _users[version] += 1
        return _shared[version]


def release(version: str = "hive23") -> None:
    """Stop the shared server of ``version`` when its last user is done."""
    with _guard:
        _users[version] = _users.get(version, 0) - 1
        if _users[version] <= 0 and version in _shared:
            _shared.pop(version).server.stop()
            _users.pop(version, None)


def _params(versions: Optional[tuple[str, ...]] = None) -> list[Any]:
    marks = {"hive31": [pytest.mark.hive31], "hive41": [pytest.mark.hive41]}
    return [pytest.param(v, marks=marks.get(v, []), id=v) for v in selected_versions()
            if versions is None or v in versions]


def start_or_skip(tmp_path_factory: pytest.TempPathFactory, version: str) -> RunningMetastore:
    """:func:`acquire`, turning a server that cannot start into a skip (a failure under CI)."""
    try:
        return acquire(tmp_path_factory.mktemp(f"hive_metastore_{version}"), version,
                       tmp_path_factory.getbasetemp())
    except Exception as e:  # noqa: BLE001 - no JDK, no Maven, no network, a start-up crash
        reason = f"{e}"
        if in_ci():
            pytest.fail(f"{reason}\nCI=true, so a metastore that cannot start fails the run",
                        pytrace=False)
        pytest.skip(reason)


@pytest.fixture(scope="session", params=_params())
def metastore(request: pytest.FixtureRequest,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningMetastore]:
    """A running Hive Metastore (Derby in a temp dir) of each selected version."""
    version = request.param
    running = start_or_skip(tmp_path_factory, version)
    try:
        yield running
    finally:
        release(version)


@pytest.fixture(scope="session", params=_params(("hive31", "hive41")))
def hive_compactor_metastore(request: pytest.FixtureRequest,
                             tmp_path_factory: pytest.TempPathFactory
                             ) -> Iterator[RunningMetastore]:
    """The Hive 3.1 / 4.1 metastores only: the ones running Hive's own compactor threads, whose
    Hive engine (metastore_server.hive_sql) the tests can also ask."""
    version = request.param
    running = start_or_skip(tmp_path_factory, version)
    try:
        yield running
    finally:
        release(version)
