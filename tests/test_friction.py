"""Issue 26 §3, friction without Spark: Spark workers without the package say what to set,
``dir(spark_hive_acid)`` shows the API, ``hiveacid --version`` / ``--help``, DML arguments of the
wrong shape, messages that name the save mode, and message typos pinned."""
from __future__ import annotations

import logging
import re
import subprocess
import sys
import venv

import pyarrow as pa
import pytest

import spark_hive_acid as sha
from spark_hive_acid import read_table, write_table
from spark_hive_acid.catalog import PathTable
from spark_hive_acid.cli import main
from spark_hive_acid.compaction.runner import compact
from spark_hive_acid.exceptions import (
    InvalidOptionError, NotEnoughHistoryError, TableNotFoundError, WorkerPythonError,
)
from spark_hive_acid.spark._compat import library_errors
from spark_hive_acid.spark.table import HiveAcidTable


# --- Spark's Python workers without the package ----------------------------------------------------
class _Conf:
    def __init__(self, python):
        self.python = python

    def get(self, key, default=None):
        return self.python if key == "spark.pyspark.python" else default


class _Context:
    def __init__(self, python, master):
        self.conf, self.master, self.pythonExec = _Conf(python), master, "python3"

    def getConf(self):  # noqa: N802 (PySpark's name)
        return self.conf


class FakeSession:
    """What the check reads of a SparkSession: the worker interpreter and the master."""

    def __init__(self, python=None, master="local[2]"):
        self.sparkContext = _Context(python, master)


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory):
    """An interpreter without spark_hive_acid: a fresh venv (what `python3` on a PATH is when a
    job's venv is not activated)."""
    root = tmp_path_factory.mktemp("bare")
    venv.EnvBuilder(with_pip=False, symlinks=True).create(root / "venv")
    return str(root / "venv" / "bin" / "python")


@pytest.fixture
def elsewhere(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # not the repository root, whose package a bare python imports


def test_register_says_which_interpreter_lacks_the_package_and_what_to_set(bare_python, elsewhere):
    with pytest.raises(WorkerPythonError) as e:
        sha.register(FakeSession(bare_python))
    msg = str(e.value)
    assert f"Spark's Python workers run {bare_python} (the Spark conf spark.pyspark.python)" in msg
    assert "No module named 'spark_hive_acid'" in msg
    assert f"export PYSPARK_PYTHON={sys.executable}" in msg
    assert f".config('spark.pyspark.python', '{sys.executable}')" in msg


def test_the_table_api_checks_the_workers_too(bare_python, elsewhere, tmp_path, monkeypatch):
    path = str(tmp_path / "t")
    write_table(pa.table({"id": [1]}), path)
    monkeypatch.setenv("PYSPARK_PYTHON", bare_python)
    with pytest.raises(WorkerPythonError, match=f"run {re.escape(bare_python)} \\(PYSPARK_PYTHON\\)"):
        HiveAcidTable.forPath(FakeSession(), path)
    with pytest.raises(WorkerPythonError, match="DATA_SOURCE_NOT_FOUND or ModuleNotFoundError"):
        sha.register_view(FakeSession(), "v", path)


def test_on_a_cluster_a_missing_local_interpreter_is_only_a_warning(caplog, elsewhere):
    with caplog.at_level(logging.WARNING, "spark_hive_acid.spark.worker_python"):
        with pytest.raises(AttributeError):  # the fake has no dataSource to register on
            sha.register(FakeSession("./environment/bin/python", master="yarn"))
    assert "there is no interpreter './environment/bin/python' on this machine" in caplog.text


def test_a_worker_import_error_comes_back_as_the_advice():
    spark_text = ("org.apache.spark.api.python.PythonException: Traceback (most recent call last):"
                  "\n  ModuleNotFoundError: No module named 'spark_hive_acid'")
    with pytest.raises(WorkerPythonError, match="export PYSPARK_PYTHON="):
        with library_errors():
            raise RuntimeError(spark_text)


# --- the package and the command ---------------------------------------------------------------
def test_dir_shows_the_lazily_imported_api():
    names = dir(sha)
    for name in ("HiveAcidTable", "read_table", "write_table", "register_view", "sql", "register"):
        assert name in names


def test_hiveacid_version_and_help_link(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"hiveacid (spark-hive-acid) {sha.__version__}"
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "Documentation: " in out
    assert "(docs/cli.md)" not in out.split("Documentation:")[0]  # no path the wheel lacks
    done = subprocess.run([sys.executable, "-m", "spark_hive_acid", "--version"],
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == f"hiveacid (spark-hive-acid) {sha.__version__}"


# --- DML arguments --------------------------------------------------------------------------------
def test_update_set_of_the_wrong_shape_is_named_before_anything_runs(tmp_path):
    path = str(tmp_path / "t")
    write_table(pa.table({"id": [1], "qty": [2]}), path)
    t = HiveAcidTable(None, PathTable(path))  # no Spark needed: refused before any job
    with pytest.raises(InvalidOptionError, match=r"update\(set=\.\.\.\) needs a dict "
                                                 r"\{column: expression\}, not list: e\.g\. "
                                                 r"update\(set=\{'qty': 'qty \+ 1'\}\)"):
        t.update("id = 1", set=["qty = qty + 1"])
    with pytest.raises(InvalidOptionError, match="needs at least one column"):
        t.update("id = 1", set={})
    with pytest.raises(InvalidOptionError, match=r"whenMatchedUpdate\(set=\.\.\.\) needs a dict"):
        t.merge(None, "t.id = s.id").whenMatchedUpdate(set="qty = 1")
    with pytest.raises(InvalidOptionError, match=r"whenNotMatchedInsert\(values=\.\.\.\): the "
                                                 "keys are column names"):
        t.merge(None, "t.id = s.id").whenNotMatchedInsert(values={1: "s.id"})


# --- messages ---------------------------------------------------------------------------------------
def test_a_missing_table_names_the_save_mode_pyspark_needs(tmp_path):
    with pytest.raises(TableNotFoundError, match=re.escape(
            "df.write.format('hiveacid').mode('append').save(path)")):
        read_table(str(tmp_path / "nothing"))


def test_not_enough_history_has_no_placeholder_write_id(tmp_path):
    path = str(tmp_path / "h")
    for i in range(3):
        write_table(pa.table({"id": [i]}), path)
    compact(PathTable(path), "major")
    with pytest.raises(NotEnoughHistoryError) as e:
        read_table(path, versionAsOf=1)
    assert "(high watermark 1) is older than the compacted base base_0000003" in str(e.value)
    assert "write id x" not in str(e.value)


def test_a_time_before_the_first_commit_names_it_once_in_utc(tmp_path):
    path = str(tmp_path / "u")
    write_table(pa.table({"id": [1]}), path)
    with pytest.raises(InvalidOptionError) as e:
        read_table(path, timestampAsOf="2000-01-01")
    msg = str(e.value)
    assert re.search(r"before the first commit recorded for .* \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d "
                     r"UTC\)$", msg), msg
    assert "UTC UTC" not in msg
