"""pytest fixture for the Hive 2.3 reference. In tests/conftest.py:

    from hive_ref.fixtures import hive_ref  # noqa: F401

Tests then take a ``hive_ref`` argument (a started :class:`hive_ref.HiveReference`) and should be
marked ``@pytest.mark.hive``. The JVM starts on first use (about 5 s, plus about 5 s for the
one-time javac build) and stops at the end of the session. Without java/javac on the machine the
tests that use the fixture are skipped.

The JVM is shared through a reference count, so importing the fixture in several places (e.g. in
conftest.py and in a test module) still starts only one JVM per session.
"""

from __future__ import annotations

import os
import shutil
import threading

import pytest

from hive_ref import HiveReference

_lock = threading.Lock()
_shared = None
_users = 0


def _have_jdk() -> bool:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and os.path.exists(os.path.join(java_home, "bin", "javac")):
        return True
    return shutil.which("javac") is not None and shutil.which("java") is not None


def acquire() -> HiveReference:
    """Start (or reuse) the shared reference; pair every call with :func:`release`."""
    global _shared, _users
    with _lock:
        if _shared is None:
            _shared = HiveReference.start()
        _users += 1
        return _shared


def release() -> None:
    global _shared, _users
    with _lock:
        _users -= 1
        if _users <= 0 and _shared is not None:
            _shared.close()
            _shared = None
            _users = 0


@pytest.fixture(scope="session")
def hive_ref():
    if not _have_jdk():
        pytest.skip("Hive reference needs a JDK (java and javac)")
    ref = acquire()
    try:
        yield ref
    finally:
        release()
