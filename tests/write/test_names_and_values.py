"""Writes that used to succeed and leave rows invisible, renamed, swapped or unreadable (issue 13
items 1, 8, 9, 11): each now round-trips or is refused before anything is written."""
from __future__ import annotations

import datetime as dt
import os
import shutil

import pyarrow as pa
import pytest

from spark_hive_acid import read_table, write_table
from spark_hive_acid.acid.layout import LAYOUT_FILE
from spark_hive_acid.exceptions import InvalidOptionError, SchemaMismatchError
from spark_hive_acid.txn import pathlog


def _rows(path):
    return sorted(tuple(r.values()) for r in read_table(path).to_pylist())


def _nothing_written(path):
    return not os.path.exists(path) or not any(
        n.startswith(("base_", "delta_")) for _, ds, _ in os.walk(path) for n in ds)


# --- item 1: partition column names -----------------------------------------------------------------
@pytest.mark.parametrize("name", ["_p", ".p"])
def test_hidden_partition_names_are_refused_before_writing(tmp_path, name):
    path = str(tmp_path / "t")
    with pytest.raises(InvalidOptionError, match=f"Partition column '{name}'.*hidden"):
        write_table(pa.table({"id": [1], name: [1]}), path, partition_by=[name])
    assert _nothing_written(path)


@pytest.mark.parametrize("name", ["a/b", "a=b", "k:1", "x%y"])
def test_partition_names_with_path_characters_round_trip(tmp_path, name):
    path = str(tmp_path / "t")
    write_table(pa.table({"id": [1, 2], name: ["v=1/w", "z"]}), path, partition_by=[name])
    assert read_table(path).schema.names == ["id", name]
    assert _rows(path) == [(1, "v=1/w"), (2, "z")]
    leaves = sorted(os.listdir(path))
    escaped = name.replace("%", "%25").replace("/", "%2F").replace("=", "%3D").replace(":", "%3A")
    assert f"{escaped}=v%3D1%2Fw" in leaves and f"{escaped}=z" in leaves


# --- item 9: values and names that could not be read back ----------------------------------------
def test_timestamp_partition_values_round_trip(tmp_path):
    path = str(tmp_path / "t")
    values = [dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc),
              dt.datetime(1999, 12, 31, 23, 59, 59, 120000, tzinfo=dt.timezone.utc)]
    write_table(pa.table({"id": [1, 2], "ts": pa.array(values, pa.timestamp("us", tz="UTC"))}),
                path, partition_by=["ts"])
    assert sorted(n for n in os.listdir(path) if n.startswith("ts=")) == ["ts=1999-12-31 23%3A59%3A59.12",
                                            "ts=2024-01-02 03%3A04%3A05"]  # Hive's text
    assert _rows(path) == [(1, dt.datetime(2024, 1, 2, 3, 4, 5)),
                           (2, dt.datetime(1999, 12, 31, 23, 59, 59, 120000))]


@pytest.mark.parametrize("name", ["row__id", "ROW__ID", "__hiveacid_x"])
def test_reserved_column_names_are_refused(tmp_path, name):
    path = str(tmp_path / "t")
    with pytest.raises(InvalidOptionError, match="reserved"):
        write_table(pa.table({"id": [1], name: [2]}), path)
    assert _nothing_written(path)


def test_acid_field_names_are_fine_as_data_columns(tmp_path):
    """operation, originalTransaction, bucket, rowId, currentTransaction and row live inside the
    ``row`` struct of an ACID file: no clash."""
    path = str(tmp_path / "t")
    cols = ["operation", "originalTransaction", "bucket", "rowId", "currentTransaction", "row"]
    write_table(pa.table({c: [i] for i, c in enumerate(cols)}), path)
    assert read_table(path).to_pylist() == [{c: i for i, c in enumerate(cols)}]
    assert read_table(path, includeRowId="true").column("row__id")[0].as_py()["rowId"] == 0


def test_a_partition_value_too_long_for_a_directory_name(tmp_path):
    path = str(tmp_path / "t")
    with pytest.raises(InvalidOptionError, match="partition column 'p' is too long"):
        write_table(pa.table({"id": [1], "p": ["x" * 300]}), path, partition_by=["p"])
    assert _nothing_written(path)


# --- item 11: lenient options ----------------------------------------------------------------------
@pytest.mark.parametrize("bad", ["-5", "nan", "inf", "0", "1_0", "٣"])
def test_txn_timeout_must_be_a_positive_finite_number(tmp_path, bad):
    path = str(tmp_path / "t")
    with pytest.raises(InvalidOptionError, match="txnTimeoutSeconds"):
        write_table(pa.table({"id": [1]}), path, options={"txnTimeoutSeconds": bad})
    assert _nothing_written(path)


# --- item 8: appending to a table without our layout file (as Hive leaves it) -------------------------
def _hive_style_table(tmp_path):
    """A table whose files are what Hive writes, with no layout file and no log."""
    path = str(tmp_path / "t")
    write_table(pa.table({"a": pa.array([1, 2], pa.int32()), "b": ["x", "y"], "p": [0, 1]}), path,
                partition_by=["p"])
    os.remove(os.path.join(path, LAYOUT_FILE))
    shutil.rmtree(os.path.join(path, pathlog.LOG_DIR))
    return path


def test_append_to_a_hive_table_matches_columns_by_name(tmp_path):
    path = _hive_style_table(tmp_path)
    write_table(pa.table({"p": [1], "b": ["z"], "a": pa.array([3], pa.int32())}), path)  # (b, a)
    assert _rows(path) == [(1, "x", 0), (2, "y", 1), (3, "z", 1)]
    assert read_table(path).schema.names == ["a", "b", "p"]


@pytest.mark.parametrize("data, problem", [
    (pa.table({"c": pa.array([3], pa.int32()), "b": ["z"], "p": [1]}), "missing column.*a"),
    (pa.table({"a": ["3"], "b": ["z"], "p": [1]}), "incompatible"),
])
def test_append_to_a_hive_table_refuses_what_does_not_match(tmp_path, data, problem):
    path = _hive_style_table(tmp_path)
    with pytest.raises(SchemaMismatchError, match=problem):
        write_table(data, path)
    assert _rows(path) == [(1, "x", 0), (2, "y", 1)]
