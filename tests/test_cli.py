"""The ``hiveacid`` command-line tool (issue 14 §5), no Spark: inspect / history / snapshot on
tables the library wrote and on Hive-written ones, and validate on deliberately damaged tables,
where every problem is one line naming its file, the exit code is 1 and nothing crashes."""
from __future__ import annotations

import json
import subprocess
import sys

import pyarrow as pa
import pytest
from acid_files import ROW_SCHEMA, _orc_bytes, acid_schema, bp, delta_name, deletes, inserts, \
    write_acid_file, write_orc_file

from spark_hive_acid import write_table
from spark_hive_acid.catalog import PathTable
from spark_hive_acid.cli import main


def run(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _library_table(tmp_path):
    """p=a: insert 1, insert-overwrite 2 (dynamic); p=b: insert 1; write id 3 aborted with its
    delta left behind (a writer killed before its cleanup) in p=b; write id 4 open in p=a."""
    path = str(tmp_path / "lib")
    schema = pa.schema([("id", pa.int32()), ("p", pa.string())])
    write_table(pa.table({"id": [1, 2], "p": ["a", "b"]}, schema), path, partition_by=["p"])
    write_table(pa.table({"id": [3, 4], "p": ["a", "a"]}, schema), path, mode="overwrite",
                partition_overwrite_mode="dynamic")
    aborted = PathTable(path).begin("append")
    aborted.abort("test")
    row = "struct<id:int>"
    write_acid_file(tmp_path / "lib" / "p=b" / delta_name(3, 3, 0) / "bucket_00000", row,
                    inserts(3, bp(0), [(9,)]))
    PathTable(path).begin("append")  # write id 4: open
    write_acid_file(tmp_path / "lib" / "p=a" / delta_name(4, 4, 0) / "bucket_00000", row,
                    inserts(4, bp(0), [(8,)]))
    return path


def test_inspect_says_what_each_partition_reads_and_why_it_ignores_the_rest(tmp_path, capsys):
    path = _library_table(tmp_path)
    code, out, _ = run(capsys, "inspect", path, "--json")
    assert code == 0
    report = json.loads(out)
    assert report["snapshot"] == "4:4:4:3" and report["layout"]["partitionColumns"] == ["p"]
    parts = {p["partition"]: p for p in report["partitions"]}
    a = {d["dir"]: d for d in parts["p=a"]["directories"]}
    assert a["base_0000002"]["status"] == "read" and a["base_0000002"]["rows"] == 2
    assert a["delta_0000001_0000001_0000"]["reason"].startswith("obsolete")
    assert a["delta_0000004_0000004_0000"]["reason"].startswith("open")
    b = {d["dir"]: d for d in parts["p=b"]["directories"]}
    assert b["delta_0000001_0000001_0000"]["status"] == "read"
    assert b["delta_0000003_0000003_0000"]["reason"] == "aborted"
    assert parts["p=a"]["summary"]["rows"] == 2 and parts["p=a"]["summary"]["writeIdRange"] == [2, 2]
    # an older snapshot: write id 1 only
    code, out, _ = run(capsys, "inspect", path, "--snapshot", "1:9223372036854775807::")
    assert code == 0 and "read     delta_0000001_0000001_0000" in out
    assert "not visible: written after the snapshot" in out
    code, out, _ = run(capsys, "snapshot", path)
    assert (code, out.strip()) == (0, "4:4:4:3")
    code, out, _ = run(capsys, "history", path, "--json", "--limit", "3")
    assert [(h["writeId"], h["state"]) for h in json.loads(out)] == \
        [(4, "open"), (3, "aborted"), (2, "committed")]
    code, out, _ = run(capsys, "validate", path)
    assert code == 0 and out == ""


def test_a_hive_written_table(corpus_copy, capsys):
    table = corpus_copy("nation25k")
    code, out, _ = run(capsys, "inspect", str(table), "--json")
    (part,) = json.loads(out)["partitions"]
    assert [(d["dir"], d.get("rows", d.get("events"))) for d in part["directories"]] == [
        ("base_0000002", 25000), ("delete_delta_0000003_0000003_0000", 1000),
        ("delete_delta_0000004_0000004_0000", 1000)]
    code, out, _ = run(capsys, "history", str(table))
    assert code == 0 and [line.split()[:3] for line in out.splitlines()[1:]] == [
        ["4", "committed", "delete"], ["3", "committed", "delete"],
        ["2", "committed", "insert_overwrite"]]
    code, out, err = run(capsys, "validate", str(table))
    assert (code, out) == (0, "") and "3 file(s) checked, 0 problem(s)" in err


def test_validate_reports_every_damage_one_line_each_naming_the_file(tmp_path, capsys):
    root = tmp_path / "t"
    good = [delta_name(w, w, 0) for w in (1, 2, 3, 4, 5, 6, 7)]
    for w, d in enumerate(good, start=1):
        write_acid_file(root / d / "bucket_00000", events=inserts(w, bp(0), [(w, "x"), (w, "y")]))
    damaged = {}
    # 1: truncated
    f = root / good[0] / "bucket_00000"
    f.write_bytes(f.read_bytes()[:-20])
    damaged[f] = "Cannot read ORC file"
    # 2: key index disagrees with the content
    rows = inserts(2, bp(0), [(2, "x"), (2, "y")])
    meta = {"hive.acid.key.index": b"2,536870912,0;", "hive.acid.stats": b"2,0,0"}
    f = root / good[1] / "bucket_00000"
    f.write_bytes(_orc_bytes(acid_schema(), rows, meta, {}))
    damaged[f] = "hive.acid.key.index lists"
    # 3: stats disagree
    meta = {"hive.acid.key.index": b"3,536870912,1;", "hive.acid.stats": b"5,0,0"}
    f = root / good[2] / "bucket_00000"
    f.write_bytes(_orc_bytes(acid_schema(), inserts(3, bp(0), [(3, "x"), (3, "y")]), meta, {}))
    damaged[f] = "hive.acid.stats says '5,0,0'"
    # 4: events out of order
    f = write_acid_file(root / good[3] / "bucket_00000",
                        events=list(reversed(inserts(4, bp(0), [(4, "x"), (4, "y")]))))
    damaged[f] = "events not sorted"
    # 5: bucket property of another writer
    f = write_acid_file(root / good[4] / "bucket_00000", events=inserts(5, bp(3), [(5, "x")]))
    damaged[f] = "writer 3, not 0"
    # 6: no footer metadata
    f = write_acid_file(root / good[5] / "bucket_00000", events=inserts(6, bp(0), [(6, "x")]),
                        user_metadata=False)
    damaged[f] = "no hive.acid.key.index"
    # 7: not an ACID file
    f = write_orc_file(root / good[6] / "bucket_00000", ROW_SCHEMA, [(7, "x")])
    damaged[f] = "not an ACID event file"
    # 8: a stray ACID-like directory name, 9: a delete delta that is fine
    stray = root / "delta_0000008_0000008_0000.bak"
    write_acid_file(stray / "bucket_00000", events=inserts(8, bp(0), [(8, "x")]))
    damaged[stray] = "does not parse"
    write_acid_file(root / delta_name(9, 9, 0, delete=True) / "bucket_00000",
                    events=deletes(9, [(2, bp(0), 0)]))
    code, out, err = run(capsys, "validate", str(root))
    lines = out.splitlines()
    assert code == 1 and len(lines) == len(damaged) + 1, out  # no metadata: key index and stats
    for path, problem in damaged.items():
        mine = [x for x in lines if x.startswith(f"{path}: ")]
        assert mine and problem in mine[0], mine
    assert lines == sorted(lines)  # in directory order
    assert "Traceback" not in err and "9 problem(s)" in err


def test_a_damaged_log_record_is_reported(tmp_path, capsys):
    path = str(tmp_path / "t")
    write_table(pa.table({"id": [1]}), path)
    write_table(pa.table({"id": [2]}), path)
    event = tmp_path / "t" / "_hiveacid_txnlog" / "events" / f"{1:019d}.json"
    event.write_text("{not json")
    code, out, err = run(capsys, "validate", path)
    assert code == 1 and out.count("\n") == 1 and out.startswith(f"{path}: ")
    assert str(event) in out and "Traceback" not in err
    code, out, err = run(capsys, "snapshot", path)  # the newest record still says it
    assert (code, out.strip()) == (0, "2:9223372036854775807::")
    newest = event.with_name(f"{2:019d}.json")
    newest.write_text("")
    code, out, err = run(capsys, "snapshot", path)  # cannot know the snapshot: exit 2, no crash
    assert code == 2 and "TransactionLogDamagedError" in err and str(newest) in err


def test_errors_and_the_module_entry_point(tmp_path, capsys):
    code, _, err = run(capsys, "inspect", str(tmp_path / "missing"))
    assert code == 2 and "TableNotFoundError" in err
    code, _, err = run(capsys, "snapshot", str(tmp_path), "-o", "hdfsUsr=x")
    assert code == 2 and "did you mean hdfsUser" in err
    path = str(tmp_path / "t")
    write_table(pa.table({"id": [1]}), path)
    done = subprocess.run([sys.executable, "-m", "spark_hive_acid", "snapshot", path],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "1:9223372036854775807::")
    assert "pyspark" not in subprocess.run(
        [sys.executable, "-c", "import sys, spark_hive_acid.cli; print(sorted(sys.modules))"],
        capture_output=True, text=True, timeout=120).stdout


def test_a_table_over_webhdfs_reads_as_the_same_table_on_disk(tmp_path, capsys):
    """Any URI the library reads: the WebHDFS protocol double serves tmp_path."""
    from webhdfs_double import WebHdfsDouble

    path = _library_table(tmp_path)
    with WebHdfsDouble(str(tmp_path)) as srv:
        remote = f"webhdfs://{srv.url.split('://', 1)[1]}/lib"
        outputs = []
        for table in (path, remote):
            assert main(["snapshot", table]) == 0 and main(["inspect", table, "--json"]) == 0
            snapshot, report = capsys.readouterr().out.split("\n", 1)
            assert main(["validate", table]) == 0 and capsys.readouterr().out == ""
            parts = [(p["partition"], p["directories"], p["summary"])
                     for p in json.loads(report)["partitions"]]
            outputs.append((snapshot, parts))
        assert outputs[0] == outputs[1] and outputs[0][0] == "4:4:4:3"


def test_an_insert_only_table_with_a_truncated_parquet_file(tmp_path, capsys):
    path = str(tmp_path / "mm")
    write_table(pa.table({"id": [1, 2]}), path, options={
        "tableProperties": "transactional_properties=insert_only", "fileFormat": "parquet"})
    write_table(pa.table({"id": [3]}), path)
    (damaged,) = (tmp_path / "mm" / "delta_0000002_0000002_0000").glob("0*")
    damaged.write_bytes(damaged.read_bytes()[:40])
    code, out, err = run(capsys, "validate", path)
    assert code == 1 and out.startswith(f"{damaged}: ") and out.count("\n") == 1
    assert "2 file(s) checked, 1 problem(s)" in err
    code, out, _ = run(capsys, "inspect", path, "--json")  # inspect still reports, rows unknown
    dirs = json.loads(out)["partitions"][0]["directories"]
    assert code == 0 and [d["rows"] for d in dirs] == [2, None]


def test_inspect_says_what_compact_if_needed_would_do(tmp_path, capsys):
    """Per partition, Hive's Initiator decision (the one compactIfNeeded applies): p=a has 11
    deltas and no base (major), p=b 2 deltas (nothing); the text report says each in one line."""
    path = str(tmp_path / "c")
    schema = pa.schema([("id", pa.int32()), ("p", pa.string())])
    for k in range(11):
        write_table(pa.table({"id": [k], "p": ["a"]}, schema), path, partition_by=["p"])
    for k in range(2):
        write_table(pa.table({"id": [k], "p": ["b"]}, schema), path)
    code, out, _ = run(capsys, "inspect", path, "--json")
    assert code == 0
    parts = {p["partition"]: p["compaction"] for p in json.loads(out)["partitions"]}
    assert parts["p=a"]["decision"] == "major" and parts["p=a"]["deltas"] == 11
    assert "no base" in parts["p=a"]["reason"]
    assert parts["p=b"]["decision"] is None and parts["p=b"]["deltas"] == 2
    code, out, _ = run(capsys, "inspect", path)
    assert code == 0
    assert out.count("compactIfNeeded: major (11 delta directories > 10 and no base)") == 1
    assert out.count("compactIfNeeded: nothing") == 1
