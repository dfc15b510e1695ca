"""pytest fixtures for Hive 3.1.3 and 4.1.0's own code as oracles. In tests/conftest.py:

    from hive_jvm.fixtures import hive31, hive41, hive3_oracle  # noqa: F401

- ``hive31`` / ``hive41``: a started :class:`~hive_jvm.oracle.HiveOracle` of that version (mark
  the test ``hive31`` / ``hive41``);
- ``hive3_oracle``: parametrised over both (the marks come with the parameter);
- ``newer_hives``: both, as a list, for a test that checks one history against each.

Each version's JVM starts on first use (its jars are resolved from Maven Central into
``.build/m2`` and the helpers compiled on the very first run: minutes; a few seconds after that)
and stops at the end of the session; a reference count shares it between fixtures. When a JVM
cannot start, the test is skipped with the reason, or fails under ``CI=true`` (as the corpus
tests do, ``tests/corpus_location.py``).
"""
from __future__ import annotations

import threading

import pytest

from corpus_location import in_ci

from .oracle import HiveOracle
from .server import HiveJvm

__all__ = ["hive31", "hive41", "hive3_oracle", "newer_hives", "acquire", "release", "unavailable"]

_lock = threading.Lock()
_shared: dict[str, HiveOracle] = {}
_users: dict[str, int] = {}
_failed: dict[str, str] = {}


def acquire(name: str) -> HiveOracle:
    """Start (or reuse) the JVM of Hive ``name``; pair every call with :func:`release`."""
    with _lock:
        if name in _failed:
            raise RuntimeError(_failed[name])
        if name not in _shared:
            try:
                _shared[name] = HiveOracle(HiveJvm.start(name))
            except Exception as e:  # remembered: one failed start per session
                _failed[name] = f"{type(e).__name__}: {e}"
                raise
        _users[name] = _users.get(name, 0) + 1
        return _shared[name]


def release(name: str) -> None:
    with _lock:
        _users[name] -= 1
        if _users[name] <= 0:
            _shared.pop(name).jvm.close()
            del _users[name]


def unavailable(name: str, error: BaseException) -> None:
    """Skip the test with the reason, or fail it under ``CI=true``."""
    reason = f"the Hive {name[4]}.{name[5]} JVM (tests/hive_jvm) could not start: {error}"
    if in_ci():
        pytest.fail(f"{reason}; CI=true, so a missing Hive fails the run", pytrace=False)
    pytest.skip(reason)


def _session(name: str):
    try:
        oracle = acquire(name)
    except Exception as e:
        unavailable(name, e)
    try:
        yield oracle
    finally:
        release(name)


@pytest.fixture(scope="session")
def hive31():
    yield from _session("hive31")


@pytest.fixture(scope="session")
def hive41():
    yield from _session("hive41")


@pytest.fixture(scope="session", params=[pytest.param("hive31", marks=pytest.mark.hive31),
                                         pytest.param("hive41", marks=pytest.mark.hive41)])
def hive3_oracle(request):
    yield from _session(request.param)


@pytest.fixture(scope="session")
def newer_hives(hive31, hive41):
    """Hive 3.1 and 4.1 (mark the test with both ``hive31`` and ``hive41``)."""
    return [hive31, hive41]
