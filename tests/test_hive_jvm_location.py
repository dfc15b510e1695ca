"""A test that needs Hive 3.1 / 4.1 (tests/hive_jvm) and whose JVM cannot start is skipped with the
reason, except under CI=true, where it fails. Each case runs pytest in a subprocess on real Hive
3.1 / 4.1 tests with the real conftest, with no Java on the PATH and a JAVA_HOME that does not
exist (the jars' classpath and compiled helpers cached under .build are not enough without Java)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SELECTED = "tests/test_hive3_facts.py::test_bucketing_version_of_a_table_without_the_property_is_1"


@pytest.fixture(scope="module", autouse=True)
def hive_jars_cached() -> None:
    """The situation these tests are about: Hive's jars already fetched into .build (a fresh
    clone's first run fetches them here, while Java and Maven are still on the PATH), then Java
    gone. Without the jars the reason would be the missing Maven instead (the subprocess's PATH
    holds only the venv)."""
    import hive_jvm

    for name in hive_jvm.VERSIONS:
        hive_jvm.classpath(name)


def _pytest(**env_vars: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env.update(env_vars, JAVA_HOME="/nonexistent/jdk", PATH=str(Path(sys.executable).parent))
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rsf", SELECTED],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def _summary(done: subprocess.CompletedProcess) -> str:
    return done.stdout.strip().splitlines()[-1]


def test_no_java_skips_with_the_reason():
    done = _pytest()
    assert done.returncode == 0, done.stdout[-3000:]
    assert re.search(r"\b2 skipped\b", _summary(done)), done.stdout[-3000:]
    skips = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(skips) == 2 and all("could not start" in s and "not found" in s for s in skips), skips


@pytest.mark.parametrize("ci", ["true", "1"])
def test_no_java_fails_under_ci(ci):
    done = _pytest(CI=ci)
    assert done.returncode == 1, done.stdout[-3000:]
    # the fixture fails, so pytest reports each test as an error (exit status 1, never a pass)
    assert re.search(r"\b2 errors?\b", _summary(done)), done.stdout[-3000:]
    assert "skipped" not in _summary(done) and "passed" not in _summary(done)
    assert "CI=true, so a missing Hive fails the run" in done.stdout
