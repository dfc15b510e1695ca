"""A writer that dies after its files are in the table, against the real metastores (2.3.10,
3.1.3, 4.1.0): the files of its aborted write id must stay invisible for good.

Hive 3.1's Initiator deletes an aborted transaction the metastore knows no write of (no
TXN_COMPONENTS), and from then on its write id counts as committed (its write-id list lists only
the write ids of open and aborted transactions it still knows). A dynamic-partition write
reports what it wrote with add_dynamic_partitions; before the fix the library called it after
moving the files into the partitions, so a writer killed in between left files whose write id
Hive 3.1 later declared committed: the rows appeared. Hive 4 records the write at lock time
(HIVE-21052). The library now registers the partitions first (txn/committer.py); this test kills
the writer (SIGKILL) right after it published, with no helper process left to clean up.
"""
from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import time
import uuid

import pyarrow as pa

from hms_rows import append
from metastore_server.fixtures import metastore  # noqa: F401
from spark_hive_acid.direct import read_table


def _write_then_die(uri: str, table: str) -> None:
    from spark_hive_acid.direct import write_table
    from spark_hive_acid.txn import committer
    from spark_hive_acid.txn.hms import HmsTransaction

    real = committer.publish

    def publish_then_die(*args, **kwargs):
        real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)  # the files are in the partitions now

    committer.publish = publish_then_die
    # no keep-alive process either: as if the whole host went down
    HmsTransaction.keep_alive = lambda self: contextlib.nullcontext()
    write_table(pa.table({"id": pa.array([100, 101], pa.int32()), "name": ["x", "y"],
                          "ds": ["new", "a"]}), table=table, options={"metastoreUri": uri})


def test_a_dynamic_partition_write_killed_after_publishing_stays_invisible(metastore, tmp_path):
    name = f"k_{uuid.uuid4().hex[:8]}"
    table = f"default.{name}"
    with metastore.client() as c:
        c.create_table("default", name, [("id", "int"), ("name", "string")],
                       partition_keys=[("ds", "string")], bucket_cols=["id"], num_buckets=1,
                       location=f"file:{tmp_path / name}")
    append(metastore.uri, table, [1, 2], "a")
    before = set(metastore.our_open_txns())
    child = mp.get_context("fork").Process(target=_write_then_die, args=(metastore.uri, table))
    child.start()
    child.join(120)
    assert child.exitcode == -signal.SIGKILL
    (dead,) = set(metastore.our_open_txns()) - before
    published = [p for p in (tmp_path / name).rglob("delta_*") if p.is_dir()]
    assert {p.parent.name for p in published} >= {"ds=new", "ds=a"}  # its files are there
    with metastore.client() as c:
        c.abort_txns([dead])  # what the house keeper does once its heartbeats stop
    time.sleep(8)  # Hive's Initiator and house keeper run every 1-2 s on the test servers
    append(metastore.uri, table, [3], "a")  # a later commit: the aborted write id is below HWM
    got = sorted(read_table("", table=table, metastoreUri=metastore.uri)
                 .column("id").to_pylist())
    assert got == [1, 2, 3]
    assert all(p.exists() for p in published)  # still there: only a compaction removes them
