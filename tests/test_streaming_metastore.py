"""The streaming source and the change feed on a table named in a real Hive Metastore (2.3.10:
write ids are transaction ids), driven without Spark: offsets follow the metastore's snapshot, a
transaction still open holds the stream back, the feed has no commit timestamps (the metastore
keeps none)."""
from __future__ import annotations

import uuid

import pyarrow as pa

from spark_hive_acid.direct import write_table
from spark_hive_acid.read.changes import read_changes
from spark_hive_acid.stream.changefeed import batch_change_feed
from spark_hive_acid.txn.hms import write_transaction
from test_stream_source import all_rows, drive_planner


def test_metastore_source_and_feed(metastore, tmp_path):
    name = f"src_{uuid.uuid4().hex[:8]}"
    with metastore.client() as c:
        # Hive 2.3: a transaction open anywhere holds back every table's version, and earlier
        # tests of this session leave some open (test_metastore_read's "still open" one): end them
        left_open = c.get_open_txns_info().open_ids
        if left_open:
            c.abort_txns(left_open)
        c.create_table("default", name, [("a", "int"), ("b", "string")], bucket_cols=["a"],
                       num_buckets=2, location=f"file:{tmp_path / name}")
    opts = {"table": f"default.{name}", "metastoreUri": metastore.uri}

    def append(ids):
        data = pa.table({"a": pa.array(ids, pa.int32()), "b": pa.array([f"v{i}" for i in ids])})
        return write_table(data, table=f"default.{name}", options={"metastoreUri": metastore.uri})

    first = append([1, 2])["writeId"]
    batches, offset = drive_planner(opts)
    assert all_rows(batches) == [1, 2]
    held = write_transaction(opts, "default", name, "insert").begin()  # open, writes later
    try:
        append([3])
        batches, offset = drive_planner(opts, offset)
        assert batches == []  # the open transaction may still commit rows below the new ones
    finally:
        held.commit()
    batches, offset = drive_planner(opts, offset)
    assert all_rows(batches) == [3]
    fs, pairs = batch_change_feed({**opts, "readChangeFeed": "true",
                                   "startingVersion": str(first)})
    rows = sorted((r["a"], r["_change_type"], r["_commit_timestamp"])
                  for spec, t in pairs for b in read_changes(fs, spec, t) for r in b.to_pylist())
    assert rows == [(1, "insert", None), (2, "insert", None), (3, "insert", None)]
