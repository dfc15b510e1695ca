"""Compaction safety in path mode: writers during a compaction, readers that planned before it,
two compactions at once, failures and kill -9 at each phase (real kills of a forked process)."""
from __future__ import annotations

import multiprocessing as mp
import os
import random
import signal

import pytest

from compaction_ops import ModelTable
from spark_hive_acid.catalog.path import PathTable
from spark_hive_acid.compaction import runner
from spark_hive_acid.compaction.cleaner import vacuum
from spark_hive_acid.exceptions import CommitConflictError
from spark_hive_acid.catalog import open_scan
from spark_hive_acid.txn import logmaint, pathlog


def _table(tmp_path, seed=5, partitioned=False) -> ModelTable:
    t = ModelTable(str(tmp_path / "t"), random.Random(seed), partitioned=partitioned)
    for _ in range(3):
        t.append()
    t.delete()
    t.update()
    t.append()
    return t


def _visible_dirs(path):
    return sorted(n for n in os.listdir(path) if not n.startswith(("_", ".")))


@pytest.mark.parametrize("kind", ["major", "minor"])
def test_writes_committed_during_a_compaction_are_kept(tmp_path, kind):
    """An append, a delete of rows being compacted and an update commit while the compaction
    writes its files; a write id opened before it and committed after it too. All stay visible
    (ROW__IDs are kept, so the delete still applies to the compacted rows)."""
    t = _table(tmp_path)
    early = pathlog.begin(t.fs, t.path, "append")  # open during the whole compaction

    def during(units, ctx):
        t.append()
        t.delete()
        t.update()
        return runner.run_locally(units, ctx)

    m = runner.compact(PathTable(t.path), kind, run_units=during)
    assert m["highWatermark"] < early.write_id  # H is below every open write id
    assert t.values(t.ours()) == t.expected()
    pathlog.abort(t.fs, t.path, early.write_id)
    before = t.ours()
    t.compact(kind)
    assert t.ours() == before and t.values(before) == t.expected()


def test_reader_planned_before_a_compaction_reads_until_the_retention_bound(tmp_path):
    t = _table(tmp_path)
    expected = t.values(t.ours())
    scan = open_scan({"path": t.path})
    assert scan.plan.slices  # planned: holds the delta files
    t.compact("minor")
    t.compact("major")
    kept = vacuum(t.fs, t.path, retention_hours=1)
    assert kept.removed == [] and kept.kept
    rows = scan.to_arrow()
    assert sorted(zip(rows.column("id").to_pylist(), rows.column("v").to_pylist())) == \
        sorted((k[0], k[1]) for k in expected.elements())
    gone = vacuum(t.fs, t.path, retention_hours=0)
    assert sorted(gone.obsolete) == sorted(kept.kept)
    with pytest.raises(Exception, match="vanished|No such file|not found"):
        scan.to_arrow()  # past the bound: documented


def test_two_compactions_of_one_partition_one_wins(tmp_path):
    t = _table(tmp_path, partitioned=True)
    before = t.ours()
    inner = {}

    def racing(units, ctx):
        inner["m"] = runner.compact(PathTable(t.path), "major")  # commits first
        return runner.run_locally(units, ctx)

    dirs = {p: _visible_dirs(d) for d, p in t.partition_dirs()}
    with pytest.raises(CommitConflictError, match="both compacted partition"):
        runner.compact(PathTable(t.path), "minor", run_units=racing)
    assert inner["m"]["partitionsCompacted"] == len(dirs)
    for d, p in t.partition_dirs():  # the winner's base only: the loser left nothing
        new = set(_visible_dirs(d)) - set(dirs[p])
        assert new == {f"base_{inner['m']['highWatermark']:07d}"}
    assert not os.path.exists(os.path.join(t.path, "_hiveacid_staging"))
    assert t.ours() == before
    assert t.compact("minor")["partitionsCompacted"] == 0  # one base per partition: nothing to do


def test_a_failed_compaction_leaves_the_table_as_before(tmp_path):
    t = _table(tmp_path)
    before, dirs = t.ours(), _visible_dirs(t.path)

    def failing(units, ctx):
        ctx.run(units[0])
        raise RuntimeError("task failed")

    with pytest.raises(RuntimeError):
        runner.compact(PathTable(t.path), "minor", run_units=failing)
    assert _visible_dirs(t.path) == dirs and t.ours() == before
    assert not os.path.exists(os.path.join(t.path, "_hiveacid_staging"))
    assert pathlog.history(t.fs, t.path)[0]["state"] == "aborted"
    assert t.compact("minor")["partitionsCompacted"] == 1
    assert t.ours() == before


def _compact_and_die(path: str, phase: str) -> None:
    """Run a minor compaction in this (forked) process and SIGKILL it at ``phase``."""
    from spark_hive_acid.io import filesystem
    from spark_hive_acid.txn import committer

    def die(*_a, **_k):
        os.kill(os.getpid(), signal.SIGKILL)

    if phase == "units":
        def run(units, ctx):
            ctx.run(units[0])
            die()
        runner.compact(PathTable(path, {"txnTimeoutSeconds": "1"}), "minor", run_units=run)
    if phase == "committed":
        committer.begin_install = die
    if phase == "renaming":
        real = filesystem.LocalFileSystem.rename

        def rename(self, src, dst):
            real(self, src, dst)
            if "_hiveacid_staging" in src:
                die()
        filesystem.LocalFileSystem.rename = rename
    runner.compact(PathTable(path, {"txnTimeoutSeconds": "1"}), "minor")


@pytest.mark.parametrize("phase", ["units", "committed", "renaming"])
def test_kill9_of_a_compaction_leaves_the_table_as_before(tmp_path, phase):
    """Killed while its files are written, after its commit, and between the two renames of a
    minor compaction (delete_delta_a_b in place, delta_a_b not yet): readers see the table exactly
    as before; the next write and compaction proceed; the interrupted install is finished by the
    next vacuum once it is stale, and then reads are still the same rows and ROW__IDs."""
    t = _table(tmp_path)
    before, dirs = t.ours(), _visible_dirs(t.path)
    p = mp.get_context("fork").Process(target=_compact_and_die, args=(t.path, phase))
    p.start()
    p.join(120)
    assert p.exitcode == -signal.SIGKILL
    dead = pathlog.history(t.fs, t.path)[0]["writeId"]
    assert t.ours() == before
    if phase == "renaming":
        assert len(_visible_dirs(t.path)) == len(dirs) + 1  # half installed, hidden
        # a compaction of the same range now: its delete_delta_a_b exists (hidden), so it
        # installs nothing rather than half of something
        assert t.compact("minor")["partitionsCompacted"] == 1
        assert len(_visible_dirs(t.path)) == len(dirs) + 1 and t.ours() == before
    t.append()  # the next write proceeds
    before = t.ours()
    assert t.values(before) == t.expected()
    pathlog.abort_stale(t.fs, t.path, timeout_s=0)
    assert logmaint.finish_interrupted_installs(t.fs, t.path, older_than_s=0) == (
        [dead] if phase == "renaming" else [])
    assert t.ours() == before
    vacuum(t.fs, t.path, retention_hours=0, staging_grace_s=0)
    assert not os.path.exists(os.path.join(t.path, "_hiveacid_staging"))
    t.compact("major")
    assert t.ours() == before


def test_one_big_file_is_read_by_every_core(tmp_path):
    """A compacted partition is one file: when the table has fewer bytes than splitSize per core,
    the planner cuts big files at stripe boundaries so that each core gets a task of similar
    size (read.plan.balance_slices), and the rows and ROW__IDs are the same."""
    import numpy as np
    import pyarrow as pa

    from spark_hive_acid.acid.layout import TableLayout, save_layout
    from spark_hive_acid.io.filesystem import LocalFileSystem
    from spark_hive_acid.read.reader import TaskReader
    from spark_hive_acid.write.acid_file import AcidFileWriter

    fs, path = LocalFileSystem(), str(tmp_path / "t")
    fs.mkdirs(path)
    save_layout(fs, path, TableLayout(columns=[("id", "bigint"), ("v", "string")]))
    row_type = pa.struct([("id", pa.int64()), ("v", pa.string())])
    w = AcidFileWriter(fs, f"{path}/base_0000001/bucket_00000", row_type, stripe_size=64 << 10)
    rng = np.random.default_rng(1)
    for k in range(12):
        ids = np.arange(k * 20_000, (k + 1) * 20_000)
        w.write_inserts(pa.record_batch([pa.array(ids), pa.array(rng.integers(0, 1 << 62, len(ids)).astype(str))],
                                        names=["id", "v"]), 1, 536870912)
    w.close()
    whole = open_scan({"path": path}).to_arrow(["row__id", "id", "v"])
    scan = open_scan({"path": path})
    tasks = scan.tasks(min_tasks=4)
    assert len(tasks) == 4
    sizes = sorted(t.size for t in tasks)
    assert sizes[-1] < 1.5 * sizes[0]
    schema = pa.schema([pa.field(c.name, c.type) for c in scan.all_columns(True)])
    reader = TaskReader(scan.fs, scan.read_spec(schema))
    got = pa.Table.from_batches([b for t in tasks for b in reader.read(t)], schema=schema)
    assert got.sort_by("id").equals(whole.select(schema.names).sort_by("id"))


def test_an_unfinished_install_whose_staging_is_gone_is_rolled_back(tmp_path):
    t = _table(tmp_path)
    before, dirs = t.ours(), _visible_dirs(t.path)
    p = mp.get_context("fork").Process(target=_compact_and_die, args=(t.path, "renaming"))
    p.start()
    p.join(120)
    assert p.exitcode == -signal.SIGKILL
    staging = os.path.join(t.path, "_hiveacid_staging")
    for name in os.listdir(staging):
        import shutil
        shutil.rmtree(os.path.join(staging, name))
    assert len(logmaint.finish_interrupted_installs(t.fs, t.path, older_than_s=0)) == 1
    assert _visible_dirs(t.path) == dirs and t.ours() == before
