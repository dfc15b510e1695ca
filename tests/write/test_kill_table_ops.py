"""kill -9 in the middle of a static partition overwrite, dropPartitions, truncate and addColumns
(issue 26): a child process runs the operation on a file system that SIGKILLs it just before its
N-th change to the disk (create, rename, mkdir, delete, write); N goes over the operation's steps
(every one for short operations, ten of them, first and last included, for longer ones). After
every kill the table is as before the operation or as after it, never in between; run again, the
operation gets to its end."""
from __future__ import annotations

import random
import subprocess
import sys
from collections import Counter

import pyarrow as pa
import pytest

from spark_hive_acid import read_table, write_table

OPERATIONS = {
    "partition": ("write_table(pa.table({'id': pa.array([50, 51], pa.int64())}), path, "
                  "mode='overwrite', partition={'c': 1})"),
    "drop": "drop_partitions(PathTable(path), 'c >= 1')",
    "truncate": "truncate(PathTable(path))",
    "columns": "PathTable(path).add_columns([('note', 'string'), ('qty', 'int')])",
}
CHILD = """
import os, signal, sys
import pyarrow as pa
from spark_hive_acid import write_table
from spark_hive_acid.catalog import PathTable
from spark_hive_acid.io.filesystem import LocalFileSystem
from spark_hive_acid.io.registry import register_filesystem
from spark_hive_acid.tableops import drop_partitions, truncate

KILL_AT = int(sys.argv[2])
steps = [0]

class KillingFileSystem(LocalFileSystem):
    def _step(self):
        steps[0] += 1
        if steps[0] == KILL_AT:
            os.kill(os.getpid(), signal.SIGKILL)

for name in ("mkdirs", "open_output", "rename", "delete", "create_exclusive"):
    def wrap(name=name):
        base = getattr(LocalFileSystem, name)
        def method(self, *args, **kwargs):
            self._step()
            return base(self, *args, **kwargs)
        setattr(KillingFileSystem, name, method)
    wrap()

fs = KillingFileSystem()
register_filesystem("killfs", lambda uri, options: (fs, uri[len("killfs://"):]))
path = "killfs://" + sys.argv[1]
{op}
print("steps", steps[0])
"""


def _state(path: str) -> tuple:
    t = read_table(path)
    return tuple(t.schema.names), tuple(sorted(zip(t.column("id").to_pylist(),
                                                   t.column("c").to_pylist())))


def _run(path: str, kind: str, kill_at: int) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CHILD.format(op=OPERATIONS[kind]), path,
                           str(kill_at)], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("kind", sorted(OPERATIONS))
def test_a_kill_at_any_step_leaves_the_table_before_or_after(tmp_path, kind):
    def fresh(name: str) -> str:
        path = str(tmp_path / name)
        write_table(pa.table({"id": pa.array(range(6), pa.int64()),
                              "c": pa.array([i % 3 for i in range(6)], pa.int32())}), path,
                    partition_by=["c"])
        return path

    reference = fresh("reference")
    before = _state(reference)
    whole = _run(reference, kind, 0)
    assert whole.returncode == 0, whole.stderr
    after, steps = _state(reference), int(whole.stdout.split()[-1])
    assert after != before and steps >= 2
    seen = Counter()
    rng = random.Random(kind)
    picked = sorted({1, steps} | set(rng.sample(range(1, steps + 1), min(steps, 8))))
    for k, n in enumerate(picked):
        path = fresh(f"k{n}")
        killed = _run(path, kind, n)
        assert killed.returncode == -9, (n, killed.stderr[-2000:])
        state = _state(path)
        assert state in (before, after), (n, state)
        seen["before" if state == before else "after"] += 1
        if k % 3:
            continue
        again = _run(path, kind, 0)  # the operation, run again, gets to its end
        if kind == "columns" and state == after:
            assert again.returncode != 0 and "already has a column" in again.stderr
        else:
            assert again.returncode == 0, (n, again.stderr[-2000:])
        assert _state(path) == after, n
    assert seen["before"] >= 1
