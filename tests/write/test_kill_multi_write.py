"""kill -9 in the middle of a transaction over two metastore tables (issue 26): a child process
runs ``transaction(metastoreUri=...)`` writing tables t and u and SIGKILLs itself after staging
t, after staging u, just before ``commit_txn`` (everything published) and just after it. Each
table is then exactly as before (the first three) or as after (the last), never one without the
other; the transaction does not stay open (its keep-alive processes abort it) and what it staged
or published is removed."""
from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

import pyarrow as pa
import pytest

import spark_hive_acid as sha

CHILD = """
import os, signal, sys
import pyarrow as pa, pyarrow.compute as pc
import spark_hive_acid as sha
from spark_hive_acid.metastore.client import MetastoreClient

uri, t, u, point = sys.argv[1:5]
def die(at):
    if point == at:
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)

commit_txn = MetastoreClient.commit_txn
def killing_commit(self, txn_id):
    die("before_commit")
    commit_txn(self, txn_id)
    die("after_commit")
MetastoreClient.commit_txn = killing_commit

def rows(ids, ds=None):
    cols = {"id": pa.array(ids, pa.int32()), "name": pa.array([f"n{i}" for i in ids])}
    if ds is not None:
        cols["ds"] = pa.array([ds] * len(ids))
    return pa.table(cols)

with sha.transaction(metastoreUri=uri, heartbeatInterval=1) as tx:
    tx.append(t, rows([5], "a"))
    tx.overwrite(t, rows([6, 7]), partition={"ds": "b"})
    die("staged_t")
    tx.delete(u, pc.field("id") < 3)
    tx.append(u, rows([100]))
    die("staged_u")
print("done")
"""
POINTS = ("staged_t", "staged_u", "before_commit", "after_commit")


def _create(metastore, tmp_path, partitioned):
    name = f"k_{uuid.uuid4().hex[:8]}"
    with metastore.client() as c:
        c.create_table("default", name, [("id", "int"), ("name", "string")],
                       partition_keys=[("ds", "string")] if partitioned else (),
                       bucket_cols=["id"], num_buckets=2, location=f"file:{tmp_path / name}")
    return f"default.{name}", tmp_path / name


def _state(metastore, table):
    t = sha.read_table("", table=table, metastoreUri=metastore.uri)
    return sorted(t.column("id").to_pylist())


def _staging(location):
    return [d for d, _, _ in os.walk(location) if os.path.basename(d) == "_hiveacid_staging"
            and os.listdir(d)]


@pytest.mark.parametrize("point", POINTS)
def test_kill_leaves_both_tables_before_or_both_after(metastore, tmp_path, point):
    t, t_loc = _create(metastore, tmp_path, partitioned=True)
    u, u_loc = _create(metastore, tmp_path, partitioned=False)
    first = pa.table({"id": pa.array([1, 2, 3, 4], pa.int32()),
                      "name": pa.array(["a", "b", "c", "d"]), "ds": ["a", "a", "b", "b"]})
    sha.write_table(first, table=t, options=metastore.options())
    sha.write_table(pa.table({"id": pa.array(range(6), pa.int32()),
                              "name": pa.array(["x"] * 6)}), table=u, options=metastore.options())
    before = (_state(metastore, t), _state(metastore, u))
    after = ([1, 2, 5, 6, 7], [3, 4, 5, 100])  # the model of the child's statements
    run = subprocess.run([sys.executable, "-c", CHILD, metastore.uri, t, u, point],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == -9, run.stderr[-3000:]
    expected = after if point == "after_commit" else before
    assert (_state(metastore, t), _state(metastore, u)) == expected
    deadline = time.monotonic() + 120  # the keep-alive processes notice the death and abort
    while (metastore.our_open_txns() or _staging(t_loc) or _staging(u_loc)) \
            and time.monotonic() < deadline:
        time.sleep(1)
    assert not metastore.our_open_txns()
    assert not _staging(t_loc) and not _staging(u_loc)
    assert (_state(metastore, t), _state(metastore, u)) == expected
    if point == "before_commit":  # what it had published in the tables is gone too
        assert not any(d.name.startswith("base_") for d in (t_loc / "ds=b").iterdir())
