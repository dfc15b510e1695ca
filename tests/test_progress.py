"""Issue 26 §3, progress: long operations report how far they got, through one mechanism
(``spark_hive_acid.progress``): log lines (partitions / files / batches done of total), and on a
terminal a bar that is erased when the operation ends. Spark-run work (compaction units, DML tasks)
is in ``test_progress_spark.py``."""
from __future__ import annotations

import io
import logging
import subprocess
import sys

import pyarrow as pa
import pytest

from spark_hive_acid import write_table
from spark_hive_acid.catalog import PathTable
from spark_hive_acid.compaction.runner import compact
from spark_hive_acid.progress import Progress

PROGRESS = "spark_hive_acid.progress"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_terminal_gets_a_bar_that_is_erased_at_the_end(monkeypatch):
    monkeypatch.delenv("HIVEACID_PROGRESS", raising=False)
    out, clock = Terminal(), Clock()
    with Progress("compaction of /t", 4, "files", stream=out, clock=clock) as p:
        for _ in range(3):
            clock.now += 1
            p.advance()
        line = "compaction of /t [" + "#" * 18 + "......] 3/4 files (75%)"
        assert out.getvalue().endswith("\r" + line + "    ")
    assert out.getvalue().endswith("\r" + " " * (len(line) + 8) + "\r")


def test_no_bar_off_a_terminal_or_when_turned_off(monkeypatch):
    plain = io.StringIO()
    with Progress("x", 2, "files", stream=plain) as p:
        p.advance(2)
    assert plain.getvalue() == ""
    monkeypatch.setenv("HIVEACID_PROGRESS", "0")
    term = Terminal()
    with Progress("x", 2, "files", stream=term) as p:
        p.advance(2)
    assert term.getvalue() == ""


def test_log_lines_say_what_is_done_of_the_total(caplog):
    clock = Clock()
    with caplog.at_level(logging.INFO, PROGRESS):
        with Progress("validate /t", 10, "partitions", stream=io.StringIO(), clock=clock,
                      log_every_s=5) as p:
            for _ in range(10):
                clock.now += 1
                p.advance()
    lines = [r.getMessage() for r in caplog.records if r.name == PROGRESS]
    assert lines == ["validate /t: started, 0/10 partitions (0%)",
                     "validate /t: 5/10 partitions (50%)",
                     "validate /t: 10/10 partitions (100%)",
                     "validate /t: done, 10/10 partitions (100%) in 10.0 s"]


def test_an_unknown_or_growing_total_and_a_failure(caplog):
    with caplog.at_level(logging.INFO, PROGRESS):
        with pytest.raises(ValueError):
            with Progress("write_table into /t", None, "batches", stream=io.StringIO()) as p:
                p.advance(3)
                raise ValueError("boom")
        with Progress("job", None, "tasks", stream=io.StringIO()) as p:
            p.update(2, 4)
            p.update(5, 8)
    lines = [r.getMessage() for r in caplog.records if r.name == PROGRESS]
    assert lines[1].startswith("write_table into /t: failed, 3 batches in ")
    assert lines[3].startswith("job: done, 5/8 tasks (62%) in ")


# --- the operations that report through it ---------------------------------------------------------
def _finished(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == PROGRESS and ": done, " in r.getMessage()]


def test_write_table_reports_its_batches(tmp_path, caplog):
    batches = pa.table({"id": list(range(30))}).to_batches(max_chunksize=10)
    with caplog.at_level(logging.INFO, PROGRESS):
        write_table(pa.Table.from_batches(batches), str(tmp_path / "t"))
        write_table(iter(batches), str(tmp_path / "t"))  # an iterable: no total known
    done = _finished(caplog)
    assert done[0].startswith(f"write_table into {tmp_path / 't'}: done, 3/3 batches (100%)")
    assert done[1].startswith(f"write_table into {tmp_path / 't'}: done, 3 batches in ")


def test_compaction_in_this_process_reports_its_output_files(tmp_path, caplog):
    path = str(tmp_path / "c")
    for day in ("a", "b", "c"):
        write_table(pa.table({"id": [1], "day": [day]}), path, partition_by="day")
        write_table(pa.table({"id": [2], "day": [day]}), path)
    with caplog.at_level(logging.INFO, PROGRESS):
        metrics = compact(PathTable(path), "major")
    assert metrics["filesAfter"] == 3
    assert _finished(caplog)[0].startswith("compaction: 3 output file(s): done, 3/3 files (100%)")


def test_the_cli_reports_partitions_on_stderr(tmp_path):
    path = str(tmp_path / "v")
    write_table(pa.table({"id": [1, 2], "day": ["a", "b"]}), path, partition_by="day")
    done = subprocess.run([sys.executable, "-m", "spark_hive_acid", "validate", "-v", path],
                          capture_output=True, timeout=120,  # bytes: text mode would eat the \r
                          env={"HIVEACID_PROGRESS": "1", "PATH": "/usr/bin:/bin"})
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert f"validate {path}: done, 2/2 partitions (100%)" in err
    assert f"\rvalidate {path} [{'#' * 12}{'.' * 12}] 1/2 partitions (50%)" in err
