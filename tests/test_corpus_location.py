"""Corpus tests find the Hive-written corpus through HIVE_ACID_CORPUS; without it they are skipped
(a bare clone passes `make test`), except under CI=true, where a missing corpus fails the run.

Each case runs pytest in a subprocess on two real corpus tests with the real conftest."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from corpus_location import corpus_dir

ROOT = Path(__file__).resolve().parent.parent
SELECTED = "tests/test_corpus.py::TestSingleCol::test_all_committed_is_empty"  # 2 parametrized tests


def _pytest(**env_vars: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "HIVE_ACID_CORPUS")}
    env.update(env_vars)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rsf", SELECTED],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def _summary(done: subprocess.CompletedProcess) -> str:
    return done.stdout.strip().splitlines()[-1]


def test_missing_corpus_skips_with_a_reason_naming_the_variable(tmp_path):
    missing = tmp_path / "no-corpus-here"
    done = _pytest(HIVE_ACID_CORPUS=str(missing))
    assert done.returncode == 0, done.stdout[-3000:]
    assert re.search(r"\b2 skipped\b", _summary(done)) and "passed" not in _summary(done), done.stdout[-3000:]
    skips = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert skips and all("HIVE_ACID_CORPUS" in line and str(missing) in line for line in skips), skips


@pytest.mark.parametrize("ci", ["true", "TRUE"])
def test_missing_corpus_fails_under_ci(tmp_path, ci):
    done = _pytest(HIVE_ACID_CORPUS=str(tmp_path / "no-corpus-here"), CI=ci)
    assert done.returncode == 1, done.stdout[-3000:]
    assert re.search(r"\b2 failed\b", _summary(done)), done.stdout[-3000:]
    assert "HIVE_ACID_CORPUS" in done.stdout and "CI=true" in done.stdout


def test_incomplete_corpus_fails_naming_the_table(tmp_path):
    done = _pytest(HIVE_ACID_CORPUS=str(tmp_path))  # exists, holds no table
    assert done.returncode == 1, done.stdout[-3000:]
    for table in ("single_col", "single_col_minor"):
        assert f"{table!r} is missing from" in done.stdout, done.stdout[-3000:]


def test_corpus_moved_elsewhere_is_found_through_the_variable(tmp_path, corpus_copy):
    """The two tables copied to a temp dir, far from ../shared: the tests run there and pass."""
    copies = {Path(corpus_copy(name)).parent for name in ("single_col", "single_col_minor")}
    assert copies == {tmp_path}
    done = _pytest(HIVE_ACID_CORPUS=str(tmp_path))
    assert done.returncode == 0 and re.search(r"\b2 passed\b", _summary(done)), done.stdout[-3000:]


def test_default_and_relative_locations(tmp_path, monkeypatch):
    assert corpus_dir({}) == ROOT.parent / "shared" / "corpus"
    assert corpus_dir({"HIVE_ACID_CORPUS": " "}) == ROOT.parent / "shared" / "corpus"
    monkeypatch.chdir(tmp_path)
    assert corpus_dir({"HIVE_ACID_CORPUS": "data/corpus"}) == tmp_path / "data" / "corpus"
