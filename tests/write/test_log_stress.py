"""The path-mode log under load (issue 25): writer processes appending, deleting and updating
while another process compacts, vacuums and checkpoints the log after every few commits, all
through a file system that sleeps a little before each call (what HDFS or an object store, or a
descheduled process, gives). Judged by: every operation that returned is committed and its rows
are visible; no write id was handed out twice; no failed write is visible; the final table is
what the successful operations give applied one after another (each writer owns its rows, so
the writers' orders are the serial order)."""
from __future__ import annotations

import logging
import multiprocessing as mp
import os
import random
import time
import traceback
from collections import Counter
from typing import Mapping, Optional

import pytest

STRESS_SECONDS = float(os.environ.get("HIVE_ACID_STRESS_SECONDS", "25"))
WRITERS = 3
SLOW_SCHEME = "slowfs"


def _install_slow_fs(max_sleep_s: float = 0.004, stall_s: float = 0.15,
                     stall_chance: float = 0.15) -> None:
    """Serve ``slowfs:///abs/path`` with the local disk, sleeping up to ``max_sleep_s`` before
    every call that touches the log or the table, and before a create-if-absent now and then
    ``stall_s`` (a slow round trip, a descheduled process: the window the races need)."""
    from spark_hive_acid.io.filesystem import LocalFileSystem
    from spark_hive_acid.io.registry import register_filesystem

    class SlowFileSystem(LocalFileSystem):
        def _nap(self, stall: bool = False) -> None:
            stall = stall and random.random() < stall_chance
            time.sleep(stall_s if stall else random.random() * max_sleep_s)

        def list_dir(self, path):
            self._nap()
            return super().list_dir(path)

        def read_bytes(self, path, length=None):
            self._nap()
            return super().read_bytes(path, length)

        def create_exclusive(self, path, data):
            self._nap(stall=True)
            ok = super().create_exclusive(path, data)
            self._nap()
            return ok

        def delete(self, path, recursive=False):
            self._nap()
            super().delete(path, recursive)

        def rename(self, src, dst):
            self._nap()
            super().rename(src, dst)

    def factory(uri: str, options: Mapping[str, str]):
        return SlowFileSystem(), uri[len(SLOW_SCHEME) + 3:]

    register_filesystem(SLOW_SCHEME, factory)


def _writer(uri: str, index: int, deadline: float, queue, seed: int) -> None:
    from concurrent_ops import Op

    from spark_hive_acid.exceptions import CommitConflictError

    _install_slow_fs()
    rng = random.Random(seed)
    mine: dict[int, tuple[int, int]] = {}  # id -> (v, p): this writer's committed rows
    next_id = index * 1_000_000
    results = []
    while time.time() < deadline:
        roll = rng.random()
        if roll < 0.6 or not mine:
            rows = [(next_id + k, rng.randrange(1000), (next_id + k) % 3)
                    for k in range(rng.randint(1, 4))]
            next_id += 4
            op = Op("append", rows=rows)
        else:
            ids = frozenset(rng.sample(sorted(mine), min(len(mine), rng.randint(1, 3))))
            op = Op("delete" if roll < 0.8 else "update", ids=ids)
        try:
            op.prepare(uri)
            op.commit()
        except CommitConflictError:
            results.append(("conflict", op.kind, op.write_id, None))
            continue
        except Exception:  # noqa: BLE001 - reported to the test, which fails on it
            results.append(("error", op.kind, op.write_id, traceback.format_exc()))
            continue
        if op.kind == "append":
            mine.update({i: (v, p) for i, v, p in op.rows})
        elif op.kind == "delete":
            for i in op.ids:
                mine.pop(i)
        else:
            mine.update({i: (mine[i][0] + 1, mine[i][1]) for i in op.ids})
        results.append(("ok", op.kind, op.write_id, None))
    queue.put((index, results, sorted((i, v, p) for i, (v, p) in mine.items())))


def _maintainer(uri: str, deadline: float, queue) -> None:
    from spark_hive_acid.catalog import PathTable
    from spark_hive_acid.compaction.cleaner import vacuum
    from spark_hive_acid.compaction.runner import compact
    from spark_hive_acid.exceptions import CommitConflictError
    from spark_hive_acid.io.registry import get_filesystem
    from spark_hive_acid.txn.logmaint import checkpoint_log

    _install_slow_fs()
    fs, path = get_filesystem(uri)
    done: Counter = Counter()
    errors = []
    i = 0
    while time.time() < deadline:
        i += 1
        try:
            checkpoint_log(fs, path, 1)
            done["checkpoint"] += 1
            if i % 40 == 0:
                compact(PathTable(uri), "minor" if i % 80 else "major")
                done["compaction"] += 1
            if i % 15 == 0:
                vacuum(fs, path, retention_hours=1.0)
                done["vacuum"] += 1
        except CommitConflictError:
            done["conflict"] += 1
        except Exception:  # noqa: BLE001 - reported to the test, which fails on it
            errors.append(traceback.format_exc())
    queue.put(("maintainer", dict(done), errors))


#: the local disk with injected stalls; the real HDFS (WebHDFS) and the S3 server, whose round
#: trips are the stalls (their writers are spawned: a forked child must not inherit a started
#: AWS SDK or HTTP pools)
TARGETS = ["local", pytest.param("hdfs", marks=pytest.mark.hdfs),
           pytest.param("s3", marks=pytest.mark.s3)]


def _target(target: str, request, tmp_path, monkeypatch) -> tuple[str, str, str]:
    """(URI the processes write, URI to check the result through, multiprocessing start method)."""
    if target == "local":
        path = str(tmp_path / "t")
        return f"{SLOW_SCHEME}://{path}", path, "fork"
    if target == "hdfs":
        hdfs = request.getfixturevalue("hdfs")
        monkeypatch.setenv("HADOOP_USER_NAME", hdfs.superuser)
        uri = f"webhdfs://{hdfs.url.split('://', 1)[1]}/stress/t"
        return uri, uri, "spawn"
    bucket = request.getfixturevalue("s3")
    for k, v in bucket.environment().items():
        monkeypatch.setenv(k, v)
    uri = bucket.uri("stress/t")
    return uri, uri, "spawn"


@pytest.mark.timeout(900)
@pytest.mark.parametrize("target", TARGETS)
def test_writers_vacuum_and_checkpoints_lose_nothing(target, request, tmp_path, monkeypatch):
    from concurrent_ops import table_rows

    from spark_hive_acid import write_table
    from spark_hive_acid.acid.logstate import load_state
    from spark_hive_acid.io.registry import get_filesystem
    from spark_hive_acid.txn import pathlog
    import pyarrow as pa

    uri, path, method = _target(target, request, tmp_path, monkeypatch)
    write_table(pa.table({"id": pa.array([-1], pa.int64()), "v": pa.array([0], pa.int64()),
                          "p": pa.array([0], pa.int32())}), path, partition_by=["p"])
    ctx = mp.get_context(method)
    queue = ctx.Queue()
    deadline = time.time() + STRESS_SECONDS
    procs = [ctx.Process(target=_writer, args=(uri, i + 1, deadline, queue, 1000 + i))
             for i in range(WRITERS)]
    procs.append(ctx.Process(target=_maintainer, args=(uri, deadline, queue)))
    for p in procs:
        p.start()
    reports = [queue.get(timeout=STRESS_SECONDS + 300) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    maintainer = next(r for r in reports if r[0] == "maintainer")
    writers = [r for r in reports if r[0] != "maintainer"]
    assert maintainer[2] == [], maintainer[2][0]
    assert maintainer[1].get("checkpoint", 0) > (20 if target == "local" else 5), maintainer[1]
    outcomes = [o for _, results, _ in writers for o in results]
    errors = [o for o in outcomes if o[0] == "error"]
    assert errors == [], errors[0][3]
    ok = [o for o in outcomes if o[0] == "ok"]
    logging.getLogger(__name__).info(
        "stress on %s: %d commits, %d conflicts, maintainer %s", target, len(ok),
        sum(o[0] == "conflict" for o in outcomes), maintainer[1])
    assert len(ok) > (30 if target == "local" else 15), \
        f"too little happened to judge: {len(ok)} commits"
    # no write id was handed out twice
    handed = [o[2] for o in outcomes]
    assert len(handed) == len(set(handed)), Counter(handed).most_common(3)
    fs, location = get_filesystem(path)
    state = load_state(fs, location)
    history: Optional[list] = pathlog.history(fs, location)
    by_id = {h["writeId"]: h["state"] for h in history}
    # every operation that returned is committed; every refused one aborted
    assert [w for _, _, w, _ in ok if state.state_of(w) != "committed"] == []
    assert [o[2] for o in outcomes if o[0] == "conflict" and by_id.get(o[2]) == "committed"] == []
    # the table is the successful operations applied in order (writers own disjoint rows)
    expected = Counter([(-1, 0, 0)] + [row for _, _, rows in writers for row in rows])
    assert table_rows(path) == expected
