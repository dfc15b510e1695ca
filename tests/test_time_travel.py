"""Time travel (issue 14 §3) without Spark: versionAsOf and timestampAsOf against a model of a
random history (the rows after each commit, kept in Python), the errors of impossible requests,
the history of a Hive-written table told by its directories, a snapshot string that reads back."""
from __future__ import annotations

import random
import time

import pyarrow as pa
import pytest
from acid_files import base_name, bp, delta_name, deletes, inserts, write_acid_file, \
    write_metadata_acid

from spark_hive_acid import read_table, write_table
from spark_hive_acid.catalog import PathTable
from spark_hive_acid.catalog.detail import is_acid_table_dir, table_detail
from spark_hive_acid.exceptions import InvalidOptionError, InvalidSnapshotError
from spark_hive_acid.read.time_travel import check_table_name, parse_timestamp
from spark_hive_acid.acid.snapshot import parse_write_ids


def _ids(path, **kw):
    return sorted(read_table(path, **kw).column("id").to_pylist())


def test_versions_and_times_of_a_random_history(tmp_path):
    rng = random.Random(14)
    path = str(tmp_path / "t")
    model: list[int] = []
    after: dict[int, list[int]] = {}  # write id -> rows right after its commit
    times: list[tuple[float, list[int]]] = []
    next_id = 0
    for _ in range(7):
        rows = list(range(next_id, next_id + rng.randint(1, 4)))
        next_id += len(rows)
        overwrite = bool(model) and rng.random() < 0.3
        if rng.random() < 0.2 and model:  # an aborted write leaves no trace in any snapshot
            txn = PathTable(path).begin("append")
            txn.abort("test")
            after[txn.write_id] = None
        m = write_table(pa.table({"id": pa.array(rows, pa.int32())}), path,
                        mode="overwrite" if overwrite else "append")
        model = rows if overwrite else model + rows
        after[m["writeId"]] = sorted(model)
        time.sleep(0.02)
        times.append((time.time(), sorted(model)))
        time.sleep(0.02)
    for w, rows in after.items():
        if rows is None:
            with pytest.raises(InvalidOptionError, match=f"write id {w} of .* was aborted"):
                read_table(path, versionAsOf=w)
        else:
            assert _ids(path, versionAsOf=w) == rows, w
    for t, rows in times:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1e6):06d}Z"
        assert _ids(path, timestampAsOf=stamp) == rows
    assert _ids(path) == sorted(model)


def test_impossible_requests_are_clear_errors(tmp_path):
    path = str(tmp_path / "t")
    write_table(pa.table({"id": pa.array([1], pa.int32())}), path)
    with pytest.raises(InvalidOptionError, match="write id 5 .* is not committed .*newest write id is 1"):
        read_table(path, versionAsOf=5)
    with pytest.raises(InvalidOptionError, match="before the first commit recorded"):
        read_table(path, timestampAsOf="2001-01-01")
    with pytest.raises(InvalidOptionError, match="not a timestamp"):
        read_table(path, timestampAsOf="yesterday")
    with pytest.raises(InvalidOptionError, match="not both"):
        read_table(path, versionAsOf=1, timestampAsOf="2030-01-01")
    with pytest.raises(InvalidOptionError, match="not both"):
        read_table(path, versionAsOf=1, validWriteIds="1:9223372036854775807::")


def test_timestamps_parse_with_and_without_offsets():
    assert parse_timestamp("1970-01-02") == 86400
    assert parse_timestamp("1970-01-01 01:00:00") == 3600
    assert parse_timestamp("1970-01-01T02:00:00+01:00") == 3600
    assert parse_timestamp("1970-01-01T01:00:00Z") == 3600


def _hive_table(root):
    """A Hive-written table (no log): insert 1, insert 2, delete 3 (of row 1), update 4,
    an insert overwrite base_5, a compacted delta 6..7 and a compactor's base_7_v9."""
    write_acid_file(root / delta_name(1, 1, 0) / "bucket_00000", events=inserts(1, bp(0), [(1, "a")]))
    write_acid_file(root / delta_name(2, 2, 0) / "bucket_00000", events=inserts(2, bp(0), [(2, "b")]))
    write_acid_file(root / delta_name(3, 3, 0, delete=True) / "bucket_00000", events=deletes(3, [(1, bp(0), 0)]))
    write_acid_file(root / delta_name(4, 4, 0, delete=True) / "bucket_00000", events=deletes(4, [(2, bp(0), 0)]))
    write_acid_file(root / delta_name(4, 4, 1) / "bucket_00000",
                    events=inserts(4, bp(0, 1), [(20, "b")]))
    write_acid_file(root / base_name(5) / "bucket_00000", events=inserts(5, bp(0), [(50, "x")]))
    write_acid_file(root / delta_name(6, 7) / "bucket_00000",
                    events=inserts(6, bp(0), [(60, "y")]) + inserts(7, bp(0), [(70, "z")]))
    write_acid_file(root / base_name(7, 9) / "bucket_00000",
                    events=inserts(5, bp(0), [(50, "x")]) + inserts(6, bp(0), [(60, "y")])
                    + inserts(7, bp(0), [(70, "z")]))
    write_metadata_acid(root / base_name(7, 9))


def test_history_of_a_hive_written_table_comes_from_its_directories(tmp_path):
    root = tmp_path / "hive"
    _hive_table(root)
    got = [(h["writeId"], h["state"], h["operation"]) for h in PathTable(str(root)).history()]
    assert got == [(7, "committed", "compaction"), (7, "committed", "compaction"),
                   (5, "committed", "insert_overwrite"), (4, "committed", "update/merge"),
                   (3, "committed", "delete"), (2, "committed", "insert"),
                   (1, "committed", "insert")]


def test_version_of_a_hive_written_table_and_no_times_without_a_log(tmp_path):
    root = tmp_path / "hive"
    for w in (1, 2, 3):
        write_acid_file(root / delta_name(w, w, 0) / "bucket_00000",
                        events=inserts(w, bp(0), [(w, "r")]))
    assert sorted(read_table(str(root), versionAsOf=2).column("a").to_pylist()) == [1, 2]
    with pytest.raises(InvalidOptionError, match="no recorded commit times .*use versionAsOf"):
        read_table(str(root), timestampAsOf="2030-01-01")


def test_snapshot_string_reads_back_and_a_foreign_table_name_is_refused(tmp_path):
    path = str(tmp_path / "t")
    write_table(pa.table({"id": pa.array([1], pa.int32())}), path)
    txn = PathTable(path).begin("append")  # open: not in the snapshot
    write_table(pa.table({"id": pa.array([3], pa.int32())}), path)
    snap = PathTable(path).snapshot().to_string()
    assert snap == "3:2:2:"
    txn.abort("test")
    assert _ids(path, validWriteIds=snap) == [1, 3]
    check_table_name(parse_write_ids("default.t:3:2:2:"), "t", "t")  # default db implied
    with pytest.raises(InvalidSnapshotError, match="names table 'db.other'"):
        check_table_name(parse_write_ids("db.other:3:2:2:"), "db.t", "db.t")


def test_detail_and_is_hive_acid_table(tmp_path):
    path = str(tmp_path / "t")
    write_table(pa.table({"id": pa.array([1, 2], pa.int32()), "p": ["x", "y"]}), path,
                partition_by=["p"])
    PathTable(path).begin("append").abort("test")
    d = table_detail(PathTable(path))
    assert (d["partitionColumns"], d["numPartitions"], d["numFiles"], d["currentWriteId"],
            d["abortedWriteIds"], d["columns"]) == (["p"], 2, 2, 2, [2], ["id"])
    files = list((tmp_path / "t").glob("p=*/delta_*/bucket_*"))
    assert d["sizeInBytes"] == sum(f.stat().st_size for f in files) > 0
    assert is_acid_table_dir(path) and not is_acid_table_dir(str(tmp_path))
    assert not is_acid_table_dir(str(tmp_path / "missing"))
