"""Issue 26 §2: an option means the same in every entry point, or that entry point refuses it.

Each entry point takes the options of its scopes (``options_table.ENTRY_POINTS``); an option of
another one, which it would have ignored (a read as of the current snapshot instead of the change
feed, a time travel the CLI did not do), is refused naming the entry points that take it. The
Spark entry points are checked in ``test_entry_points_spark.py``."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from spark_hive_acid import options as opt
from spark_hive_acid import read_table, write_table
from spark_hive_acid.cli import main
from spark_hive_acid.exceptions import InvalidOptionError, UnknownOptionError
from spark_hive_acid.spark.sql_views import register_view
from spark_hive_acid.spark.table import HiveAcidTable

SCHEMA = pa.schema([("id", pa.int32()), ("day", pa.string())])


@pytest.fixture
def table(tmp_path):
    """Write id 1: ids 1, 2; write id 2: id 3; write id 3: id 4."""
    path = str(tmp_path / "t")
    write_table(pa.table({"id": [1, 2], "day": ["a", "b"]}, SCHEMA), path)
    write_table(pa.table({"id": [3], "day": ["a"]}, SCHEMA), path)
    write_table(pa.table({"id": [4], "day": ["b"]}, SCHEMA), path)
    return path


def _changes(t: pa.Table) -> list[tuple]:
    return sorted(zip(t.column("_change_type").to_pylist(), t.column("id").to_pylist(),
                      t.column("_commit_version").to_pylist()))


# --- read_table -----------------------------------------------------------------------------------
def test_read_table_returns_the_change_feed_it_is_asked_for(table):
    feed = read_table(table, readChangeFeed=True, startingVersion=2)
    assert _changes(feed) == [("insert", 3, 2), ("insert", 4, 3)]
    assert feed.column_names == ["id", "day", "_change_type", "_commit_version",
                                 "_commit_timestamp"]
    assert _changes(read_table(table, readChangeFeed="true", startingVersion="2",
                               endingVersion="2")) == [("insert", 3, 2)]
    write_table(pa.table({"id": [9], "day": ["a"]}, SCHEMA), table, mode="overwrite")
    replaced = read_table(table, readChangeFeed=True, startingVersion=4)
    assert _changes(replaced) == [("delete", 1, 4), ("delete", 2, 4), ("delete", 3, 4),
                                  ("delete", 4, 4), ("insert", 9, 4)]


@pytest.mark.parametrize("options, message", [
    ({"readChangeFeed": "yes", "startingVersion": "1"}, "readChangeFeed='yes' must be true or false"),
    ({"countRows": "1"}, "countRows='1' must be true or false"),
    ({"startingVersion": "2"}, "option startingVersion is for the change feed: add "
                               "readChangeFeed=true"),
    ({"endingVersion": "2"}, "option endingVersion is for the change feed"),
    ({"readChangeFeed": "true", "startingVersion": "1", "versionAsOf": "2"},
     "cannot also take option versionAsOf"),
    ({"partitionBy": "day"}, "read_table: option partitionBy is not one of its options "
                             r"\(partitionBy is for df.write, writeStream, write_table\)"),
    ({"maxWriteIdsPerTrigger": "3"}, "option maxWriteIdsPerTrigger .*is for readStream"),
    ({"txnTimeoutSeconds": "5"}, "option txnTimeoutSeconds .*would ignore it"),
])
def test_read_table_refuses_what_it_would_ignore(table, options, message):
    with pytest.raises(InvalidOptionError, match=message):
        read_table(table, **options)


def test_read_table_takes_python_values_and_names_the_convention(table):
    assert sorted(read_table(table, columns=["id"]).column("id").to_pylist()) == [1, 2, 3, 4]
    assert read_table(table, columns=("day", "id")).column_names == ["day", "id"]
    assert read_table(table, versionAsOf=1).num_rows == 2
    with pytest.raises(InvalidOptionError, match=r"read_table\(path, versionAsOf=\.\.\.\), not "
                                                 "version_as_of="):
        read_table(table, version_as_of=1)
    with pytest.raises(InvalidOptionError, match="give a list of column names"):
        read_table(table, columns=[1, 2])
    with pytest.raises(InvalidOptionError, match="the table path first"):
        read_table(pa.table({"id": [1]}))


def test_read_table_counts_rows_per_task_as_the_spark_source(table):
    counts = read_table(table, countRows=True)
    assert counts.column_names == ["row_count"]
    assert sum(counts.column("row_count").to_pylist()) == 4
    assert counts.num_rows == 3  # one task per delta file here (each far below splitSize)


# --- write_table ----------------------------------------------------------------------------------
def test_write_table_takes_one_partition_column_as_a_string(tmp_path):
    path = tmp_path / "p"
    write_table(pa.table({"id": [1, 2], "day": ["a", "b"]}, SCHEMA), str(path), partition_by="day")
    assert sorted(p.name for p in path.iterdir() if not p.name.startswith("_")) == \
        ["day=a", "day=b"]


def test_write_table_names_swapped_arguments_and_the_other_convention(tmp_path):
    data = pa.table({"id": [1], "day": ["a"]}, SCHEMA)
    path = tmp_path / "w"
    with pytest.raises(InvalidOptionError, match="arguments are swapped.*write_table\\(data, "):
        write_table(str(path), data)
    with pytest.raises(InvalidOptionError, match="Python argument names: partition_by=\\.\\.\\., "
                                                 "not partitionBy="):
        write_table(data, str(path), partitionBy="day")
    with pytest.raises(InvalidOptionError, match=r"options=\{'compression': \.\.\.\}"):
        write_table(data, str(path), compression="SNAPPY")
    with pytest.raises(InvalidOptionError, match="write_table: option versionAsOf is not one of"):
        write_table(data, str(path), options={"versionAsOf": "1"})
    assert not path.exists()  # nothing created by any of them


# --- HiveAcidTable and register_view (refused before Spark is touched) -------------------------
def test_table_api_and_views_refuse_options_they_would_ignore(table):
    with pytest.raises(InvalidOptionError, match="HiveAcidTable.forPath: option versionAsOf is "
                                                 "not one of its options"):
        HiveAcidTable.forPath(None, table, {"versionAsOf": "1"})  # toDF and DML would use it
    with pytest.raises(InvalidOptionError, match="forName: option partitionBy"):
        HiveAcidTable.forName(None, "db.t", {"partitionBy": "day"})
    with pytest.raises(InvalidOptionError, match="register_view: option columns"):
        register_view(None, "v", table, options={"columns": "id"})  # its INSERTs would refuse it
    with pytest.raises(UnknownOptionError, match="did you mean metastoreUri"):
        HiveAcidTable.forPath(None, table, {"metastoreURL": "thrift://x:9083"})


# --- the CLI ----------------------------------------------------------------------------------------
def run(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_inspects_the_version_it_is_given(table, capsys):
    code, out, _ = run(capsys, "snapshot", table, "-o", "versionAsOf=2")
    assert (code, out.strip()) == (0, "2:9223372036854775807::")
    code, out, _ = run(capsys, "inspect", table, "-o", "versionAsOf=1")
    assert code == 0 and "snapshot 1:9223372036854775807::" in out
    assert "ignored  delta_0000002_0000002_0000" in out and "1..1" in out
    code, _, err = run(capsys, "inspect", table, "-o", "versionAsOf=9")
    assert code == 2 and "versionAsOf=9" in err and "not committed" in err


@pytest.mark.parametrize("args, message", [
    (("history", "{t}", "-o", "versionAsOf=1"), "-o versionAsOf is for inspect and snapshot"),
    (("validate", "{t}", "-o", "timestampAsOf=2020-01-01"), "timestampAsOf is for inspect"),
    (("inspect", "{t}", "-o", "columns=id"), "option columns is not one of its options"),
    (("inspect", "{t}", "-o", "versionAsOf=1", "--snapshot", "1:9223372036854775807::"),
     "Give --snapshot or -o versionAsOf"),
])
def test_cli_refuses_options_it_would_ignore(table, capsys, args, message):
    code, out, err = run(capsys, *[a.format(t=table) for a in args])
    assert code == 2 and message in err and out == ""


def test_cli_refuses_what_is_not_a_hive_acid_table(tmp_path, capsys):
    plain = tmp_path / "plain"
    plain.mkdir()
    pq.write_table(pa.table({"a": [1]}), plain / "part-0.parquet")
    empty = tmp_path / "empty"
    empty.mkdir()
    for command in ("inspect", "validate", "history", "snapshot"):
        for d in (plain, empty):
            code, out, err = run(capsys, command, str(d))
            assert code == 2, (command, d)
            assert "NotAnAcidTableError" in err and "hiveacid looks at Hive ACID tables" in err
            assert out == ""


def test_cli_still_reads_a_converted_table_of_original_orc_files(tmp_path, capsys):
    """What spark.read reads (a table converted to ACID, only original files) the CLI shows."""
    path = tmp_path / "converted"
    path.mkdir()
    orc.write_table(pa.table({"a": pa.array([1, 2], pa.int32())}), str(path / "000000_0"))
    code, out, _ = run(capsys, "inspect", str(path))
    assert code == 0 and "original" in out


# --- the registry ------------------------------------------------------------------------------------
def test_every_entry_point_takes_the_metastore_and_storage_options():
    for entry in opt.ENTRY_POINTS:
        opt.check_entry({"metastoreUri": "thrift://h:9083", "hdfsUser": "u",
                         "fs.s3a.endpoint": "http://x"}, entry)


def test_every_option_is_taken_by_some_entry_point_and_docs_list_them():
    assert [o.name for o in opt.OPTIONS
            if not any(opt.takes(e, o) for e in opt.ENTRY_POINTS)] == []
    text = (Path(__file__).resolve().parents[1] / "docs" / "reading.md").read_text()
    assert "\n".join(opt.markdown_entry_points()) in text
