"""kill -9 during a conversion or a mirror run: the target is left either without the run's
snapshots or with all of them (Delta mirror runs: a prefix of whole versions, one per write id),
never with a partial write id, and a rerun completes it exactly once.

The run is a child process that says on stdout where it is (the test wraps the target's steps
to print, then pause); the test kills its process group with SIGKILL at that point."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from convert_model import History, iceberg_props, rows
from spark_hive_acid.conversion import delta_target, iceberg_target, mirror

pytest.importorskip("pyiceberg")
pytest.importorskip("deltalake")

ROOT = Path(__file__).resolve().parent.parent

CHILD = textwrap.dedent("""
    import sys, time, json
    from spark_hive_acid.conversion import mirror, delta_target, iceberg_target
    import importlib
    run_module = importlib.import_module("spark_hive_acid.conversion.run")
    from spark_hive_acid.conversion.delta import DeltaTarget
    from spark_hive_acid.conversion.iceberg import IcebergTarget
    kind, source, where, props = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])

    def say(what):
        print(what, flush=True)
        time.sleep(0.2)

    original_write = run_module.write_groups
    def write_groups(*a, **k):
        files = original_write(*a, **k)
        say(f"written {a[4]}")
        return files
    run_module.write_groups = write_groups
    for cls in (DeltaTarget, IcebergTarget):
        for name in ("apply", "finish"):
            def wrap(f, name=name):
                def inner(self, *a, **k):
                    if name == "finish":  # killed here: every step staged, none visible
                        say("finish")
                    out = f(self, *a, **k)
                    if name == "apply":  # killed here: Delta committed this version
                        say(f"apply {a[0].write_id}")
                    return out
                return inner
            setattr(cls, name, wrap(getattr(cls, name)))
    target = (iceberg_target(props, "db.t") if kind == "iceberg" else delta_target(where))
    mirror(source, target, verify=False)
    print("done", flush=True)
""")


def run_and_kill(kind: str, source: str, tmp_path: Path, kill_at: str) -> bool:
    """Run a mirror in a child; SIGKILL it when it prints a line starting with ``kill_at``.
    Returns whether it was killed (False: it finished first)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, kind, source, str(tmp_path / "delta_t"),
         __import__("json").dumps(iceberg_props(tmp_path))],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True)
    killed = False
    for line in proc.stdout:
        if line.startswith(kill_at):
            os.killpg(proc.pid, signal.SIGKILL)
            killed = True
            break
    proc.wait(timeout=120)
    if not killed:
        assert proc.returncode == 0, proc.stderr.read()
    return killed


def target_of(kind, tmp_path):
    return iceberg_target(iceberg_props(tmp_path), "db.t") if kind == "iceberg" else \
        delta_target(str(tmp_path / "delta_t"))


def check_consistent(h: History, kind: str, tmp_path: Path, before, end: int) -> None:
    t = target_of(kind, tmp_path)
    last = t.last_write_id()
    if kind == "iceberg":  # one transaction: all or nothing
        assert last == before or last == end, (last, before, end)
    else:  # whole versions, in order, none past the end
        assert last is None or (before or 0) <= last <= end if before is not None else \
            last in (None, end), (last, before, end)
    for v in t.versions():  # every version that exists is a complete write id
        assert rows(t.read(v.ref), True) == h.model_at(v.write_id), (kind, v)


@pytest.mark.parametrize("kind", ["iceberg", "delta"])
@pytest.mark.parametrize("kill_at", ["written", "apply", "finish"])
def test_kill_during_the_conversion_and_a_mirror_run(tmp_path, kind, kill_at):
    h = History(tmp_path / "hive", 21, partitioned=True, buckets=2)
    h.random_ops(6)
    end = h.current()
    assert run_and_kill(kind, h.path, tmp_path, kill_at)
    check_consistent(h, kind, tmp_path, None, end)
    if kind == "delta":  # the new table appears by one rename: nothing before it
        assert not (tmp_path / "delta_t").exists()
    result = mirror(h.path, target_of(kind, tmp_path))  # the rerun completes it
    assert result.verdict.ok and result.write_id == end

    h.random_ops(6)
    end2 = h.current()
    assert run_and_kill(kind, h.path, tmp_path, kill_at)
    check_consistent(h, kind, tmp_path, end, end2)
    result = mirror(h.path, target_of(kind, tmp_path))
    assert result.verdict.ok and result.write_id == end2
    t = target_of(kind, tmp_path)
    ids = [v.write_id for v in t.versions()]
    assert ids == sorted(set(ids))  # no write id applied twice
    for v in t.versions():
        assert rows(t.read(v.ref), True) == h.model_at(v.write_id)


def test_kill_between_two_delta_versions_leaves_a_prefix(tmp_path):
    """A Delta mirror run commits one version per write id: killed after the first of several,
    the table holds exactly that one more, and the rerun goes on after it."""
    h = History(tmp_path / "hive", 22)
    h.random_ops(3)
    first = mirror(h.path, target_of("delta", tmp_path), verify=False).write_id
    for op in ("append", "delete", "append", "update"):
        h.do(op)
    assert run_and_kill("delta", h.path, tmp_path, "apply")
    t = target_of("delta", tmp_path)
    after_kill = t.last_write_id()
    assert first < after_kill < h.current()
    result = mirror(h.path, t)
    assert [s["writeId"] for s in result.steps][0] > after_kill
    assert result.write_id == h.current() and result.verdict.ok
