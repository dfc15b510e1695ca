"""Where the Hive-written conformance corpus is, and what a test does when it is not there.

The corpus (real Hive 3 table directories, see its MANIFEST.md) is not part of the repository. Tests
find it through ``HIVE_ACID_CORPUS`` (default: ``../shared/corpus`` beside the repository root; a
relative value is taken from the current directory). When it is missing, corpus tests are skipped
with a reason naming the variable, so a bare clone passes ``make test``; under ``CI=true`` a missing
corpus fails the run instead, so CI cannot go green without it.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable, Mapping, Optional

import pytest

ENV_VAR = "HIVE_ACID_CORPUS"
DEFAULT_CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"


def corpus_dir(environ: Optional[Mapping[str, str]] = None) -> Path:
    """The corpus directory: ``$HIVE_ACID_CORPUS`` if set (and not empty), else the default."""
    value = (os.environ if environ is None else environ).get(ENV_VAR, "").strip()
    return Path(value).expanduser().absolute() if value else DEFAULT_CORPUS


def in_ci(environ: Optional[Mapping[str, str]] = None) -> bool:
    return (os.environ if environ is None else environ).get("CI", "").strip().lower() in ("true", "1")


def corpus_table(name: str, environ: Optional[Mapping[str, str]] = None) -> Path:
    """The directory of corpus table ``name``; skips the test (fails it under ``CI=true``) when the
    corpus is missing, and fails it when the corpus is there but lacks ``name``."""
    root = corpus_dir(environ)
    if not root.is_dir():
        reason = (f"Hive-written corpus not found at {root}: set {ENV_VAR} to the corpus directory "
                  f"(default ../shared/corpus beside the repository)")
        if in_ci(environ):
            pytest.fail(f"{reason}; CI=true, so a missing corpus fails the run", pytrace=False)
        pytest.skip(reason)
    table = root / name
    if not table.is_dir():
        pytest.fail(f"corpus table {name!r} is missing from {root} ({ENV_VAR}): the corpus is "
                    f"incomplete; point {ENV_VAR} at a full copy", pytrace=False)
    return table


@pytest.fixture
def corpus_copy(tmp_path: Path) -> Callable[[str], str]:
    """Copy a corpus table into a temp dir (never write into the corpus) and return its path."""

    def copy(name: str) -> str:
        dst = tmp_path / name
        shutil.copytree(corpus_table(name), dst)
        return str(dst)

    return copy
