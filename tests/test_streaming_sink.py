"""The streaming sink: every input row lands exactly once, even when the driver is killed (kill -9
of its whole process group) before, during or after a micro-batch's commit and the query is
restarted from its checkpoint; Hive 2.3's reader reads the result."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spark_hive_acid.acid.logstate import read_events, read_snapshot
from spark_hive_acid.io.registry import get_filesystem
from spark_hive_acid.direct import read_table

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "stream_kill" / "driver.py"
FILES, ROWS_PER_FILE = 5, 7


def _input(tmp_path: Path) -> Path:
    d = tmp_path / "input"
    d.mkdir()
    for f in range(FILES):
        rows = [{"id": f * ROWS_PER_FILE + i, "part": f"p{(f * ROWS_PER_FILE + i) % 2}"}
                for i in range(ROWS_PER_FILE)]
        (d / f"f{f}.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return d


def _run(args: list[str], tmp_path: Path, pause: str | None = None, timeout: float = 240):
    """Run the driver; with ``pause`` (point:batch) wait until it pauses there, then kill -9 its
    whole process group (driver JVM, Python workers)."""
    env = dict(os.environ)
    marker = tmp_path / "paused"
    if marker.exists():
        marker.unlink()
    if pause:
        env["HIVEACID_TEST_PAUSE"] = pause
        env["HIVEACID_TEST_PAUSED"] = str(marker)
        env["PYTHONPATH"] = os.pathsep.join([str(HERE / "stream_kill"),
                                             env.get("PYTHONPATH", "")])
    env["PYSPARK_PYTHON"] = sys.executable
    log = open(tmp_path / f"driver-{pause or 'final'}.log", "w")
    proc = subprocess.Popen([sys.executable, str(DRIVER), *args], env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if pause and marker.exists():
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                return
            if proc.poll() is not None:
                break
            time.sleep(0.2)
        else:
            raise AssertionError(f"driver did not {'pause' if pause else 'finish'} in time")
        assert not pause, f"driver ended without pausing at {pause}: see {log.name}"
        assert proc.returncode == 0, Path(log.name).read_text()[-3000:]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


@pytest.mark.hive
def test_kill_before_during_and_after_a_commit_then_restart(tmp_path, hive_ref):  # noqa: F811
    src, table, ckpt = _input(tmp_path), tmp_path / "t", tmp_path / "ckpt"
    args = [str(src), str(ckpt), "--path", str(table), "--partition-by", "part"]
    for pause in ("before:1", "during:2", "after:3"):
        _run(args, tmp_path, pause)
    _run(args, tmp_path)
    got = read_table(str(table)).sort_by("id").column("id").to_pylist()
    assert got == list(range(FILES * ROWS_PER_FILE))  # every row exactly once
    fs, path = get_filesystem(str(table), {})
    batches = [int(e.properties["streamBatchId"]) for e in read_events(fs, path)
               if e.state == "committed"]
    assert batches == list(range(FILES))  # one write id per batch, batch 3 committed once
    # the attempts killed before and during their commit were aborted by their replays (not
    # left open until they went stale, holding back every reader's low watermark)
    from spark_hive_acid.acid.logstate import load_state
    assert load_state(fs, path).open_ids == []
    snap = read_snapshot(fs, path)
    from hive_ref import valid_txns

    hive = []
    for part in ("part=p0", "part=p1"):
        hive += hive_ref.read(table / part, [("id", "bigint")], bucket_count=None,
                              valid_txns=valid_txns(snap.high_watermark, snap.exceptions))
    assert sorted(v[0] for _, v in hive) == list(range(FILES * ROWS_PER_FILE))


@pytest.mark.hive
@pytest.mark.skipif(not os.environ.get("HIVE_ACID_SLOW_TESTS"),
                    reason="kills and restarts a second Spark driver four times (~100 s); set "
                           "HIVE_ACID_SLOW_TESTS=1 (make test does)")
def test_metastore_table_kill_during_and_after_a_commit_then_restart(
        tmp_path, metastore, hive_ref):  # noqa: F811
    """Metastore mode (Hive 2.3 has no key/value commit; 2.3, 3.1 and 4.1): the batch's claim
    and the metastore's state of the claiming transaction tell a replay whether the batch is in;
    the progress marker lies beside the files, which Hive's reader ignores."""
    import uuid

    name = f"s_{uuid.uuid4().hex[:8]}"
    loc = tmp_path / name
    with metastore.client() as c:  # partitioned and bucketed
        c.create_table("default", name, [("id", "bigint")], partition_keys=[("part", "string")],
                       bucket_cols=["id"], num_buckets=2, location=f"file:{loc}")
    src, ckpt = _input(tmp_path), tmp_path / "ckpt"
    args = [str(src), str(ckpt), "--table", f"default.{name}", "--metastore", metastore.uri]
    # before:3: killed before its commit registered any partition (its tasks claimed the batch):
    # Hive 3.1's Initiator forgets the aborted transaction, its write id then counts as committed
    # and only the claim and the commit markers tell the replay the batch is not in
    for pause in ("during:1", "after:2", "before:3"):
        _run(args, tmp_path, pause)
        if pause.startswith("before"):
            time.sleep(6)  # the helper aborts; Hive 3.1's Initiator (every 2 s) forgets it
    _run(args, tmp_path)
    got = read_table("", table=f"default.{name}", metastoreUri=metastore.uri)
    assert sorted(got.column("id").to_pylist()) == list(range(FILES * ROWS_PER_FILE))
    with metastore.client() as c:  # the table's write ids (Hive 2: its txn list)
        txns = c.read_snapshot("default", name)[0]
    committed: dict[int, set] = {}  # batch -> the committed write ids whose markers name it
    for p in loc.glob("part=*/delta_*/_hiveacid_commit.json"):
        marker = json.loads(p.read_text())
        if txns.is_valid(marker["writeId"]):
            committed.setdefault(int(marker["properties"]["streamBatchId"]), set()).add(
                marker["writeId"])
    assert sorted(committed) == list(range(FILES))
    assert all(len(w) == 1 for w in committed.values())
    from hive_ref import valid_txns

    hive = [v[0] for part in ("part=p0", "part=p1") for _, v in hive_ref.read(
        loc / part, [("id", "bigint")], bucket_count=2,
        valid_txns=valid_txns(txns.high_watermark, txns.exceptions))]
    assert sorted(hive) == list(range(FILES * ROWS_PER_FILE))
    with metastore.client() as c:  # the stream registered the partitions it wrote
        assert sorted(p.name for p in c.list_partitions("default", name)) == \
            ["part=p0", "part=p1"]
