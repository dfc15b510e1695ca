"""The other defects of the fault audit (issue 25 items 4-8): a killed compaction holds nothing
back for long, vacuum's retention counts from when a compacted directory became visible, time
travel by time across checkpoints, an empty data file is an error, and lenient inputs refused."""
from __future__ import annotations

import datetime as dt
import json
import multiprocessing as mp
import os
import random
import signal
import time
from pathlib import Path

import pyarrow as pa
import pytest

from compaction_ops import ModelTable
from spark_hive_acid import read_table, write_table
from spark_hive_acid.acid import log_records
from spark_hive_acid.acid.logstate import load_state, read_allocation
from spark_hive_acid.catalog.path import PathTable
from spark_hive_acid.cli import main as cli_main
from spark_hive_acid.compaction import runner
from spark_hive_acid.compaction.cleaner import vacuum
from spark_hive_acid.exceptions import CorruptFileError, InvalidOptionError
from spark_hive_acid.io.filesystem import LocalFileSystem
from spark_hive_acid.catalog import open_scan
from spark_hive_acid.stream.source import StreamPlanner
from spark_hive_acid.stream.versions import low_watermark
from spark_hive_acid.txn import logmaint, pathlog


def _table(tmp_path, seed=3) -> ModelTable:
    t = ModelTable(str(tmp_path / "t"), random.Random(seed))
    for _ in range(3):
        t.append()
    t.delete()
    t.append()
    return t


def _die_in_compaction(path: str, phase: str) -> None:
    """Run a minor compaction in this forked process and SIGKILL it at ``phase``."""
    from spark_hive_acid.io import filesystem

    def die(*_a, **_k):
        os.kill(os.getpid(), signal.SIGKILL)

    if phase == "units":
        def run(units, ctx):
            ctx.run(units[0])
            die()
        runner.compact(PathTable(path), "minor", run_units=run)
    real = filesystem.LocalFileSystem.rename

    def rename(self, src, dst):
        real(self, src, dst)
        if "_hiveacid_staging" in src:
            die()
    filesystem.LocalFileSystem.rename = rename
    runner.compact(PathTable(path), "minor")


def _kill_compaction(t: ModelTable, phase: str) -> int:
    p = mp.get_context("fork").Process(target=_die_in_compaction, args=(t.path, phase))
    p.start()
    p.join(120)
    assert p.exitcode == -signal.SIGKILL
    return pathlog.history(t.fs, t.path)[0]["writeId"]


def test_a_killed_compaction_is_aborted_within_a_few_heartbeats(tmp_path):
    """Item 4: not after txnTimeoutSeconds (an hour): compaction heartbeats every minute."""
    t = _table(tmp_path)
    dead = _kill_compaction(t, "units")
    state = load_state(t.fs, t.path)
    assert state.state_of(dead) == "open"
    assert low_watermark(state.snapshot()) == dead - 1  # streams and compaction held back
    started = read_allocation(t.fs, t.path, dead).started_at
    assert pathlog.abort_stale(t.fs, t.path, now=started + 90) == []  # alive for 1.5 beats
    assert pathlog.abort_stale(t.fs, t.path, now=started + 600) == [dead]  # 10 beats: dead
    snap = load_state(t.fs, t.path).snapshot()
    assert low_watermark(snap) == snap.high_watermark
    # a plain write keeps its own (user-given) timeout
    txn = pathlog.begin(t.fs, t.path, "append", timeout_s=3600)
    assert pathlog.abort_stale(t.fs, t.path, now=txn.started_at + 600) == []


def _age_log_records(path: str, write_id: int, seconds: float) -> None:
    """Make write id W's commit record and install record ``seconds`` older (a compaction that
    committed and died that long ago), keeping their checksums valid."""
    log = Path(path) / "_hiveacid_txnlog"
    for f in list((log / "events").glob("*.json")) + [log / "installs" / f"{write_id:019d}.json"]:
        body = log_records.decode(f.read_bytes())
        if body.get("writeId") == write_id:
            body["time"] = float(body["time"]) - seconds
            f.write_bytes(log_records.encode(body))


def test_vacuum_retention_counts_from_when_an_interrupted_install_finished(tmp_path):
    """Item 5: a compaction killed mid-install an hour ago is finished by vacuum; what its output
    hides became invisible only now, so a reader that planned with it keeps its files."""
    t = _table(tmp_path)
    before = t.ours()
    dead = _kill_compaction(t, "renaming")
    _age_log_records(t.path, dead, 3600)
    scan = open_scan({"path": t.path})
    assert scan.plan.slices  # planned: the install is unfinished, it reads the deltas
    result = vacuum(t.fs, t.path, retention_hours=0.05)  # finishes the install (late)
    assert logmaint.install_visible_since(t.fs, t.path)  # the output is visible now
    assert result.obsolete == [] and result.kept
    rows = scan.to_arrow()  # no "File vanished"
    assert len(rows) == sum(before.values())
    later = vacuum(t.fs, t.path, retention_hours=0.05, now=time.time() + 0.06 * 3600)
    assert sorted(later.obsolete) == sorted(result.kept)
    assert t.ours() == before


def test_the_done_record_of_a_late_install_is_kept(tmp_path):
    t = _table(tmp_path)
    dead = _kill_compaction(t, "renaming")
    assert logmaint.finish_interrupted_installs(t.fs, t.path, older_than_s=0) == [dead]
    logmaint.prune_installs(t.fs, t.path, older_than_s=0)
    assert logmaint.install_visible_since(t.fs, t.path)  # still known when it became visible


def test_time_travel_by_time_across_checkpoints(tmp_path):
    """Item 6: timestampAsOf inside the folded range (a KeyError before)."""
    path = str(tmp_path / "t")
    for i in range(6):
        write_table(pa.table({"id": [i]}), path)
        time.sleep(0.02)
    pathlog.abort(LocalFileSystem(), path, pathlog.begin(LocalFileSystem(), path, "x").write_id)
    write_table(pa.table({"id": [6]}), path)
    logmaint.checkpoint_log(LocalFileSystem(), path)
    times = {h["writeId"]: h["finishedAt"] for h in pathlog.history(LocalFileSystem(), path)}
    for w in (1, 3, 5):
        between = (times[w] + times[w + 1]) / 2
        stamp = dt.datetime.fromtimestamp(between, dt.timezone.utc).isoformat()
        got = sorted(read_table(path, timestampAsOf=stamp).column("id").to_pylist())
        assert got == list(range(w)), (w, stamp)
    stamp = dt.datetime.fromtimestamp(times[8] + 1, dt.timezone.utc).isoformat()
    assert sorted(read_table(path, timestampAsOf=stamp).column("id").to_pylist()) == \
        list(range(7))


def test_an_empty_data_file_fails_the_read_and_validate_reports_it(tmp_path, capsys):
    """Item 7: bucket_00000 truncated to 0 bytes lost rows silently, and validate said 0
    problems."""
    path = str(tmp_path / "t")
    for i in range(4):
        write_table(pa.table({"id": list(range(i * 30, i * 30 + 30))}), path)
    victim = next(Path(path).glob("delta_0000002_*/bucket_00000"))
    victim.write_bytes(b"")
    with pytest.raises(CorruptFileError, match="empty") as e:
        read_table(path)
    assert str(victim) in str(e.value)
    assert cli_main(["validate", path]) == 1
    out = capsys.readouterr().out
    assert str(victim) in out and "0 bytes" in out


def test_validate_reports_damaged_log_records_and_markers(tmp_path, capsys):
    """Item 7: a deleted _orc_acid_version, a garbage allocation record, a torn install record."""
    path = str(tmp_path / "t")
    for i in range(3):
        write_table(pa.table({"id": [i]}), path)
    assert cli_main(["validate", path]) == 0
    capsys.readouterr()
    marker = next(Path(path).glob("delta_0000002_*")) / "_orc_acid_version"
    marker.unlink()
    log = Path(path) / "_hiveacid_txnlog"
    (log / "writeids" / f"{1:019d}.json").write_bytes(b"\x00garbage")
    (log / "installs").mkdir(exist_ok=True)
    (log / "installs" / f"{7:019d}.json").write_bytes(b'{"writeId": 7, "pai')
    assert cli_main(["validate", path]) == 1
    out = capsys.readouterr().out
    assert str(marker.parent) in out and "_orc_acid_version" in out
    assert f"{1:019d}.json" in out and "allocation record" in out
    assert f"{7:019d}.json" in out and "install record" in out
    assert len(out.strip().splitlines()) == 3


@pytest.mark.parametrize("option", ["versionAsOf", "timestampAsOf"])
def test_blank_time_travel_is_refused(tmp_path, option):
    """Item 8: an empty value read the current snapshot."""
    path = str(tmp_path / "t")
    write_table(pa.table({"id": [1]}), path)
    with pytest.raises(InvalidOptionError, match=f"{option} is empty"):
        read_table(path, **{option: ""})


def test_ending_version_of_a_stream_is_refused(tmp_path):
    """Item 8: endingVersion on a (change-feed) stream was ignored."""
    path = str(tmp_path / "t")
    write_table(pa.table({"id": [1]}), path)
    for change_feed in (True, False):
        with pytest.raises(InvalidOptionError, match="availableNow"):
            StreamPlanner({"path": path, "endingVersion": "1"}, change_feed=change_feed)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), True, "1h", -1])
def test_vacuum_refuses_a_retention_that_is_not_hours(tmp_path, bad):
    path = str(tmp_path / "t")
    write_table(pa.table({"id": [1]}), path)
    with pytest.raises(InvalidOptionError, match="retentionHours"):
        vacuum(LocalFileSystem(), path, retention_hours=bad)


@pytest.mark.parametrize("bad", ["no", "false", 0, None])
def test_vacuum_refuses_a_dry_run_that_is_not_a_bool(tmp_path, bad):
    path = str(tmp_path / "t")
    write_table(pa.table({"id": [1]}), path)
    with pytest.raises(InvalidOptionError, match="dryRun"):
        vacuum(LocalFileSystem(), path, dry_run=bad)
    assert json.dumps(vacuum(LocalFileSystem(), path, dry_run=True).to_json())
