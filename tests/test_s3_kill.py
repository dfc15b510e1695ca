"""kill -9 at every phase of a write on an object store (the S3 server, marker ``s3``).

A child process runs one operation on an ``s3a://`` table (an append, a dynamic overwrite, a
DELETE, an UPDATE, a MERGE, a minor or major compaction, a checkpoint + vacuum) and SIGKILLs
itself right after its k-th storage mutation (a conditional create, a whole upload, a write, a
delete, a copy): k runs over every mutation the operation makes (counted by a run that is not
killed), so the kill lands between every two steps, including just after the commit record was
created (committed, the writer never told) and just before. After each kill:

* the table reads exactly as before the operation or exactly as after it (the model), never
  anything in between;
* once the dead writer is aborted as stale (and a dead compaction's install finished or rolled
  back), nothing of an aborted write is left: no directory named for its write id;
* the next write commits and reads right.
"""
from __future__ import annotations

import logging
import multiprocessing as mp
import os
import signal
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

pytestmark = pytest.mark.s3

INITIAL = [(i, 0, i % 3) for i in range(9)]


def _arm(kill_after: int, counter: str, match: str = "") -> None:
    """Count this process's storage mutations (in ``counter``); SIGKILL right after the
    ``kill_after``-th (0: never) of those whose path contains ``match``."""
    from spark_hive_acid.io.arrow_fs import ArrowFileSystem
    from spark_hive_acid.io.object_upload import WholeUpload as S3Upload

    calls = [0, 0]

    def hit(name: str, path: str) -> None:
        calls[0] += 1
        with open(counter, "a") as f:
            f.write(f"{calls[0]} {name} {path}\n")
        calls[1] += match in path
        if calls[1] == kill_after and match in path:
            os.kill(os.getpid(), signal.SIGKILL)

    def wrap(cls, name, base=None):
        orig = getattr(base or cls, name)

        def counted(self, *a, **k):
            if name == "close" and self.closed:
                return orig(self, *a, **k)
            out = orig(self, *a, **k)
            hit(name, str(a[0]) if a else getattr(self, "key", ""))
            return out

        setattr(cls, name, counted)

    for name in ("create_exclusive", "delete", "copy_file"):  # (mkdirs: markers, no state)
        wrap(ArrowFileSystem, name)
    wrap(ArrowFileSystem, "write_bytes")
    wrap(S3Upload, "close")  # a data file or record uploaded whole


def _child(op: str, uri: str, kill_after: int, counter: str, env: dict) -> None:
    import sys

    os.environ.update(env)  # the S3 server's address and keys

    sys.path.insert(0, str(Path(__file__).parent / "write"))
    from concurrent_ops import Op

    from spark_hive_acid.catalog import PathTable
    from spark_hive_acid.compaction.cleaner import vacuum
    from spark_hive_acid.compaction.runner import compact
    from spark_hive_acid.txn.logmaint import checkpoint_log

    _arm(kill_after, counter)
    if op in OPS:
        o = OPS[op]()
        o.prepare(uri)
        o.commit()
    elif op.startswith("compact-"):
        compact(PathTable(uri), op.split("-")[1])
    elif op == "vacuum":
        table = PathTable(uri)
        checkpoint_log(table.fs, table.path, 1)
        vacuum(table.fs, table.path, retention_hours=0, staging_grace_s=0)


def _ops():
    import sys

    sys.path.insert(0, str(Path(__file__).parent / "write"))
    from concurrent_ops import Op

    return {
        "append": lambda: Op("append", rows=[(100, 7, 0), (101, 7, 1), (102, 7, 2)]),
        "dynamic": lambda: Op("dynamic", rows=[(200, 8, 1)]),
        "delete": lambda: Op("delete", ids=frozenset({0, 1, 5})),
        "update": lambda: Op("update", ids=frozenset({2, 4})),
        "merge": lambda: Op("merge", rows=[(3, 9, 0), (300, 9, 2)]),
    }


OPS = _ops()


def _setup(uri: str) -> list:
    """A table with some history (compactions have work): the model's rows."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent / "write"))
    from concurrent_ops import Op, new_table

    new_table(uri, INITIAL)
    rows = list(INITIAL)
    for o in (Op("append", rows=[(50, 1, 0), (51, 1, 1)]), Op("delete", ids=frozenset({8})),
              Op("update", ids=frozenset({6}))):
        o.prepare(uri)
        o.commit()
        rows = o.apply(rows)
    return rows


def _zygote(conn) -> None:
    """A clean process (spawned: no S3 client started in it) that imports the library once and
    forks one child per request: a child starts in a fraction of a second."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent / "write"))
    import concurrent_ops  # noqa: F401
    import spark_hive_acid.compaction.runner  # noqa: F401
    import spark_hive_acid.direct  # noqa: F401

    while True:
        req = conn.recv()
        if req is None:
            return
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                _child(*req)
            except BaseException:  # noqa: BLE001 - reported as the exit code
                import traceback

                traceback.print_exc()
                code = 1
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        conn.send(-os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))


@pytest.fixture(scope="module")
def forker():
    ctx = mp.get_context("spawn")
    mine, theirs = ctx.Pipe()
    p = ctx.Process(target=_zygote, args=(theirs,))
    p.start()
    yield mine
    mine.send(None)
    p.join(30)
    if p.is_alive():
        p.kill()


def _run_child(forker, op: str, uri: str, kill_after: int, tmp: Path) -> tuple[int, list[str]]:
    """(exit code, the mutations made: "k name path" lines) of one child."""
    counter = tmp / f"count-{op}-{kill_after}"
    env = {k: v for k, v in os.environ.items() if k.startswith("AWS_")}
    forker.send((op, uri, kill_after, str(counter), env))
    if not forker.poll(300):
        raise TimeoutError(f"{op} did not end within 300 s")
    code = forker.recv()
    made = counter.read_text().splitlines() if counter.exists() else []
    return code, made


def _phase(line: str) -> str:
    """What a mutation is part of: its call and the kind of name it touched."""
    _, name, path = line.split(" ", 2)
    for part in ("writeids", "events", "checkpoints", "intents", "heartbeats", "installs",
                 "_hiveacid_staging", "_hiveacid_claim"):
        if part in path:
            return f"{name}:{part}"
    return f"{name if name != 'close' else 'write_bytes'}:table"  # files of the table itself


def _points(mutations: list[str]) -> list[int]:
    """Kill points: after the last mutation of every phase (a run of mutations of one kind), so
    the kill falls between every two steps, and after the first file placed in the table (a
    write half in place); every mutation with HIVE_ACID_KILL_POINTS=all."""
    n = len(mutations)
    if os.environ.get("HIVE_ACID_KILL_POINTS") == "all":
        return list(range(1, n + 1))
    phases = [_phase(m) for m in mutations]
    out = {n}
    for i in range(n - 1):
        if phases[i] != phases[i + 1]:
            out.add(i + 1)
    table_files = [i + 1 for i, p in enumerate(phases) if p.endswith(":table")]
    out.update(table_files[:1])
    # after the commit record only its clean-up follows (removing staging, intents, the
    # heartbeat): one kill just after the record, one at the end, stand for those
    commits = [i + 1 for i, p in enumerate(phases) if p == "create_exclusive:events"]
    if commits:
        out = {k for k in out if k <= commits[-1] + 1 or k == n}
    return sorted(out)


def _copy_prefix(s3, src: str, dst: str) -> None:
    """A table copied inside the bucket (server-side): each kill starts from the same table."""
    c = s3.client()
    for page in c.get_paginator("list_objects_v2").paginate(Bucket=s3.name, Prefix=src):
        for o in page.get("Contents", []):
            c.copy_object(Bucket=s3.name, Key=dst + o["Key"][len(src):],
                          CopySource={"Bucket": s3.name, "Key": o["Key"]})


def _rows(uri: str) -> Counter:
    import sys

    sys.path.insert(0, str(Path(__file__).parent / "write"))
    from concurrent_ops import table_rows

    return table_rows(uri)


def _leftovers(s3, prefix: str, write_id: int) -> list[str]:
    keys = [o["Key"] for page in s3.client().get_paginator("list_objects_v2").paginate(
        Bucket=s3.name, Prefix=prefix) for o in page.get("Contents", [])]
    marks = (f"_{write_id:07d}_{write_id:07d}", f"base_{write_id:07d}/")
    return [k for k in keys if any(m in k for m in marks) and "_hiveacid_txnlog" not in k]


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("op", [*OPS, "compact-minor", "compact-major", "vacuum"])
def test_kill_at_every_phase_leaves_before_or_after(s3, forker, tmp_path, monkeypatch, op):
    from concurrent_ops import Op  # noqa: F401  (tests/write on sys.path from _setup)

    from spark_hive_acid.catalog import PathTable
    from spark_hive_acid.txn import pathlog
    from spark_hive_acid.txn.logmaint import finish_interrupted_installs

    for k, v in s3.environment().items():
        monkeypatch.setenv(k, v)
    before = _setup(s3.uri("template/t"))
    model = OPS[op]().apply(before) if op in OPS else before
    _copy_prefix(s3, "template/", "probe/")
    code, mutations = _run_child(forker, op, s3.uri("probe/t"), 0, tmp_path)  # the operation's steps
    assert code == 0 and mutations
    points = _points(mutations)
    logging.getLogger(__name__).info("%s: %d mutations, kill points %s:\n%s", op,
                                     len(mutations), points, "\n".join(mutations))
    killed = 0
    for k in points:
        uri = s3.uri(f"k{k}/t")
        _copy_prefix(s3, "template/", f"k{k}/")
        code, made = _run_child(forker, op, uri, k, tmp_path)
        if code == -signal.SIGKILL:
            killed += 1
        got = _rows(uri)
        where = f"{op} killed after mutation {len(made)} of {len(mutations)} ({made[-1:]})"
        assert got in (Counter(before), Counter(model)), f"{where}: {sorted(got.elements())}"
        table = PathTable(uri)
        state = pathlog.load_state(table.fs, table.path)
        open_ids = state.open_ids
        table.abort_stale(0.0)
        finish_interrupted_installs(table.fs, table.path, older_than_s=0.0)
        assert _rows(uri) == got, f"{where}: the table changed when the dead writer was aborted"
        state = pathlog.load_state(table.fs, table.path)
        for w in open_ids:
            if state.state_of(w) == "aborted":
                assert _leftovers(s3, f"k{k}/t/", w) == [], f"{where}: write id {w} left files"
        nxt = OPS["append"]()
        nxt.prepare(uri)
        nxt.commit()
        assert _rows(uri) == Counter(nxt.apply(list(got.elements()))), where
    assert killed >= len(points) - 1  # every point but perhaps the last killed it
