"""Can Spark's Python workers import this package? Checked once per session, before a read or
write would fail in a worker.

Spark runs Python data sources (planning, tasks, commits) in worker processes whose interpreter
is ``spark.pyspark.python``, else ``PYSPARK_PYTHON``, else ``python3`` on the ``PATH``, not the
driver's. A script started as ``venv/bin/python job.py`` without activating the venv has its
workers run the system Python, which lacks the package: Spark then reports
``DATA_SOURCE_NOT_FOUND`` (the format is looked up in a worker) or a worker's
``ModuleNotFoundError``, neither saying what to set. :func:`check_worker_python` (run by
``register``, ``HiveAcidTable`` and ``register_view``) and :func:`worker_python_error` (an error
coming back from a worker) say it instead.
"""
from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from typing import Any, Optional

from ..exceptions import WorkerPythonError

log = logging.getLogger(__name__)

CONF_KEY = "spark.pyspark.python"
ENV_KEY = "PYSPARK_PYTHON"
PACKAGE = "spark_hive_acid"
#: interpreters already found able to import the package
_good: set[str] = set()


def _context(spark: Any) -> Optional[Any]:
    """The session's SparkContext; None where there is none (Spark Connect raises for it)."""
    try:
        return spark.sparkContext
    except Exception:  # noqa: BLE001 - Spark Connect: the workers are the server's business
        return None


def worker_python(spark: Any) -> tuple[str, str]:
    """``(interpreter, where it comes from)`` of the session's Python workers."""
    sc = _context(spark)
    try:
        conf = sc.getConf().get(CONF_KEY, None) if sc is not None else None
    except Exception:  # noqa: BLE001 - a context without a readable conf: as if unset
        conf = None
    if conf:
        return conf, f"the Spark conf {CONF_KEY}"
    if os.environ.get(ENV_KEY):
        return os.environ[ENV_KEY], ENV_KEY
    exe = getattr(sc, "pythonExec", None) or "python3"
    return exe, f"Spark's default ({ENV_KEY} and {CONF_KEY} unset)"


def _same_as_driver(exe: str) -> bool:
    """``exe`` is this interpreter (by path, not by the binary a venv's python links to)."""
    found = shutil.which(exe)
    return found is not None and os.path.abspath(found) == os.path.abspath(sys.executable)


def import_problem(exe: str) -> Optional[str]:
    """Why interpreter ``exe`` cannot import the package (None: it can)."""
    if exe in _good or _same_as_driver(exe):
        return None
    if shutil.which(exe) is None:
        return f"there is no interpreter {exe!r} on this machine"
    try:
        done = subprocess.run([exe, "-c", f"import {PACKAGE}"], capture_output=True, text=True,
                              timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"it could not be started ({e})"
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        return lines[-1] if lines else f"exit code {done.returncode}"
    _good.add(exe)
    return None


def advice(exe: Optional[str], source: str, problem: str) -> str:
    """What is wrong and what to set. ``exe``: the workers' interpreter (None: not known)."""
    runs = (f"run {exe} ({source})" if exe else
            f"run an interpreter ({CONF_KEY}, else {ENV_KEY}, else python3 on the PATH)")
    return (f"Spark's Python workers {runs}, which cannot import {PACKAGE}: {problem}. This "
            f"driver runs {sys.executable}. Every hiveacid read and write fails in the workers "
            f"(DATA_SOURCE_NOT_FOUND or ModuleNotFoundError). Set the workers' interpreter "
            f"before creating the SparkSession: export {ENV_KEY}={sys.executable} (or "
            f".config('{CONF_KEY}', '{sys.executable}')), or install spark-hive-acid into "
            f"{exe or 'that interpreter'}")


def check_worker_python(spark: Any) -> None:
    """Raise WorkerPythonError when the session's Python workers cannot import the package. On a
    cluster (a master that is not ``local``) the workers' interpreter may exist only there, so a
    problem found on this machine is logged as a warning instead."""
    sc = _context(spark)
    if sc is None:
        return
    exe, source = worker_python(spark)
    problem = import_problem(exe)
    if problem is None:
        return
    message = advice(exe, source, problem)
    master = str(getattr(sc, "master", "local"))
    if master.startswith("local"):
        raise WorkerPythonError(message)
    log.warning("%s (checked on the driver's machine; master %s)", message, master)


def worker_python_error(text: str) -> Optional[WorkerPythonError]:
    """The error to raise for a Spark error whose text shows a worker without the package."""
    if f"No module named '{PACKAGE}'" not in text \
            and "No module named 'pyspark_hiveacid'" not in text:
        return None
    return WorkerPythonError(advice(None, "", "ModuleNotFoundError in a worker"))
