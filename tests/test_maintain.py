"""``maintain`` on path-mode warehouses: Hive's Initiator rules applied to every table and
partition, the plan (``--dry-run``) changes nothing, the run compacts exactly what the plan says
and keeps every row and ROW__ID, batches, vacuum, one table's failure reported without stopping
the others, progress (a bar on a terminal, log lines otherwise), and ``kill -9`` of a running
``hiveacid maintain`` leaving every table before or after, a rerun finishing the job."""
from __future__ import annotations

import io
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import maintenance_warehouse as W
from spark_hive_acid.acid.log_records import decode, encode
from spark_hive_acid.catalog.path import PathTable
from spark_hive_acid.cli import main
from spark_hive_acid.maintenance.maintain import MaintainSettings, maintain
from spark_hive_acid.progress import Progress

ROOT = Path(__file__).resolve().parent.parent


def _refs(*paths) -> list[PathTable]:
    return [PathTable(str(p)) for p in paths]


def test_plan_then_run_applies_the_initiator_rules(tmp_path):
    a, b = tmp_path / "wh" / "a", tmp_path / "wh" / "b"
    W.needs_major(a, "1", 0)
    W.needs_minor(a, "2", 100)
    W.healthy(a, "3", 20000)
    W.healthy(b, "1", 0)
    before = {t: (W.rows(t), W.dirs(t)) for t in (a, b)}
    plan = maintain(_refs(a, b), MaintainSettings(dry_run=True))
    assert plan["dryRun"] and plan["summary"]["partitionsPlanned"] == 2
    pa_, pb = plan["tables"]
    assert [(c["kind"], c["partitions"]) for c in pa_["compactions"]] == [
        ("major", ["p=1"]), ("minor", ["p=2"])]
    assert pa_["compactions"][0]["why"] == {"p=1": "11 delta directories > 10 and no base"}
    assert pa_["compactions"][1]["why"] == {"p=2": "11 delta directories > 10"}
    assert pb["compactions"] == [] and not pb["vacuum"]
    assert {t: (W.rows(t), W.dirs(t)) for t in (a, b)} == before  # a plan changes nothing
    report = maintain(_refs(a, b), MaintainSettings(retention_hours=0, progress=False))
    assert report["ok"] and report["summary"]["partitionsCompacted"] == 2
    assert W.rows(a) == before[a][0] and W.rows(b) == before[b][0]
    d = W.dirs(a)
    # write ids: p=1 1..11, p=2 12 + its compaction 13 + 14..24, p=3 25..27: H = 27
    assert [x for x in d["p=1"] if not x.startswith("_")] == ["base_0000027"]
    assert sum(x.startswith("delta_") for x in d["p=2"]) == 1  # the minor compaction's output
    assert d["p=3"] == before[a][1]["p=3"] and W.dirs(b) == before[b][1]
    again = maintain(_refs(a, b), MaintainSettings(dry_run=True))
    assert again["summary"]["partitionsPlanned"] == 0  # nothing left: a rerun is a no-op


def test_batches_are_one_compaction_each_and_progress_shows(tmp_path, caplog):
    t = tmp_path / "t"
    for i in range(5):
        W.needs_major(t, str(i), i * 100)
    stream = io.StringIO()  # not a terminal: progress goes to the log
    with caplog.at_level(logging.INFO, logger="spark_hive_acid.progress"):
        report = maintain(_refs(t), MaintainSettings(batch=2, retention_hours=0,
                                                     progress_interval=0.0), stream=stream)
    assert report["summary"]["partitionsCompacted"] == 5
    assert [len(d["partitions"]) for d in report["tables"][0]["done"]] == [2, 2, 1]
    compactions = [h for h in PathTable(str(t)).history() if h["operation"] == "compact"]
    assert len(compactions) == 3
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("maintain:")]
    assert lines[0] == "maintain: started, 0/6 partitions (0%)"
    assert lines[-1].startswith("maintain: done, 6/6 partitions (100%) in ")
    assert sum("done" in x for x in lines) == 1  # the end is logged once
    # a line per step here (interval 0): 2 batches of 2 partitions, 1 of 1, then the vacuum
    assert lines[1:-1] == [f"maintain: {n}/6 partitions ({100 * n // 6}%)" for n in (2, 4, 5, 6)]
    assert stream.getvalue() == ""


def test_progress_bar_on_a_terminal():
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    ticks = iter(range(100))
    bar = Progress("maintain", 4, "partitions", stream=out, clock=lambda: float(next(ticks)))
    bar.advance(1, "t1")
    bar.advance(3, "t2", failed=True)
    bar.close()
    text = out.getvalue()
    # two redraws, then the line erased so the command's own output starts clean
    assert text.count("\r") == 4 and text.endswith("\r")
    assert "[######..................] 1/4 partitions (25%) t1" in text
    assert "4/4 partitions (100%, 1 failed) t2" in text


def test_one_tables_failure_is_reported_and_the_others_are_compacted(tmp_path, capsys):
    good, bad = tmp_path / "wh" / "good", tmp_path / "wh" / "bad"
    W.needs_major(good, "1", 0)
    W.needs_major(bad, "1", 0)
    victim = sorted((bad / "p=1").glob("delta_*/bucket_00000"))[3]
    victim.write_bytes(victim.read_bytes()[:40])  # a damaged file: the compaction fails on it
    before = W.rows(good)
    rc = main(["maintain", "--warehouse", str(tmp_path / "wh"), "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 1
    assert f"{bad}: FAILED: CorruptFileError" in out
    assert f"{good}: 1 partition(s) compacted" in out
    assert W.rows(good) == before
    assert not any(x.startswith("base_") for x in W.dirs(bad)["p=1"])  # untouched


def _has_new_base(tables: list[Path]) -> int:
    return sum(1 for t in tables for d in t.glob("p=*/base_*"))


@pytest.mark.parametrize("kills", [2])
def test_kill_9_leaves_every_table_before_or_after_and_a_rerun_finishes(tmp_path, kills):
    wh = tmp_path / "wh"
    tables = [wh / f"t{i}" for i in range(4)]
    for n, t in enumerate(tables):
        for p in range(3):
            W.needs_major(t, str(p), n * 1000 + p * 100)
    before = {t: W.rows(t) for t in tables}
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    cmd = [sys.executable, "-m", "spark_hive_acid", "maintain", "--warehouse", str(wh),
           "--batch", "1", "--concurrency", "2", "--retention-hours", "0", "--no-progress"]
    killed_after = []
    for _ in range(kills):
        seen = _has_new_base(tables)
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while _has_new_base(tables) == seen and proc.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        killed_after.append(_has_new_base(tables))
        for t in tables:  # before or after: the same rows and ROW__IDs, whatever was killed
            assert W.rows(t) == before[t]
    assert killed_after[0] >= 1 and killed_after[-1] < 12, killed_after  # killed mid-run
    first = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stdout + first.stderr
    # a partition whose compaction was killed between its renames and the end of its install is
    # left alone (its output is hidden from readers; compacting it again would only duplicate
    # it) until the install is 5 minutes old: make it so, and run again
    _age_installs(tables, 600.0)
    second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stdout + second.stderr
    for t in tables:
        assert W.rows(t) == before[t]
        for p, names in W.dirs(t).items():
            visible = [x for x in names if not x.startswith("_")]
            assert len(visible) == 1 and visible[0].startswith("base_"), (t, p, names)
    plan = maintain(_refs(*tables), MaintainSettings(dry_run=True))
    assert plan["summary"]["partitionsPlanned"] == 0 and plan["summary"]["partitionsSkipped"] == 0


def _age_installs(tables: list[Path], seconds: float) -> None:
    for t in tables:
        for rec in (t / "_hiveacid_txnlog" / "installs").glob("*.json"):
            body = decode(rec.read_bytes())
            body["time"] -= seconds
            rec.write_bytes(encode({k: v for k, v in body.items() if k != "checksum"}))


def test_a_partition_whose_install_is_under_way_is_left_alone_then_finished(tmp_path,
                                                                             monkeypatch):
    from spark_hive_acid.compaction.runner import compact
    from spark_hive_acid.txn import committer

    t = tmp_path / "t"
    W.needs_major(t, "1", 0)
    W.needs_major(t, "2", 100)
    before = W.rows(t)

    def die(*a, **k):
        raise KeyboardInterrupt("killed between the renames and the end of the install")

    monkeypatch.setattr(committer, "end_install", die)
    with pytest.raises(KeyboardInterrupt):
        compact(PathTable(str(t)), "major", ["p=1"])
    monkeypatch.undo()
    assert any(x.startswith("base_") for x in W.dirs(t)["p=1"]) and W.rows(t) == before
    plan = maintain(_refs(t), MaintainSettings(dry_run=True))["tables"][0]
    assert [c["partitions"] for c in plan["compactions"]] == [["p=2"]]
    assert "output is being installed" in plan["skipped"]["p=1"]
    report = maintain(_refs(t), MaintainSettings(retention_hours=0, progress=False))
    assert report["ok"] and report["tables"][0]["partitionsCompacted"] == 1
    assert "p=1" in report["tables"][0]["skipped"]
    _age_installs([t], 600.0)  # 5 minutes later: the dead compaction's install is finished
    report = maintain(_refs(t), MaintainSettings(retention_hours=0, progress=False))
    assert report["ok"] and report["tables"][0]["partitionsCompacted"] == 0
    for p, names in W.dirs(t).items():
        assert [x for x in names if not x.startswith("_")] == [
            x for x in names if x.startswith("base_")] and len(names) == 1, (p, names)
    assert W.rows(t) == before


@pytest.mark.spark
def test_maintain_as_spark_jobs_and_the_table_api(spark, tmp_path):
    import spark_hive_acid
    from spark_hive_acid import HiveAcidTable

    a, b = tmp_path / "wh" / "a", tmp_path / "wh" / "b"
    W.needs_major(a, "1", 0)
    W.needs_major(b, "1", 0)
    before = {t: W.rows(t) for t in (a, b)}
    doc = HiveAcidTable.forPath(spark, str(a)).doctor()
    assert doc["compactIfNeeded"] == {"major": 1, "minor": 0}
    assert [p["partition"] for p in doc["partitions"]] == ["p=1"]  # every partition listed
    plan = spark_hive_acid.maintain(spark, warehouse=str(tmp_path / "wh"), dryRun=True)
    assert plan["summary"]["partitionsPlanned"] == 2
    report = spark_hive_acid.maintain(spark, paths=[str(a), str(b)], retentionHours=0,
                                      progress=False)
    assert report["ok"] and report["summary"]["partitionsCompacted"] == 2
    assert {t: W.rows(t) for t in (a, b)} == before
    healthy = spark_hive_acid.doctor(spark, paths=[str(a)])
    assert healthy["tables"][0]["compactIfNeeded"] == {"major": 0, "minor": 0}
