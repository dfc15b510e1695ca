"""Typos are caught (issue 14 §2): every entry point checks option names against the one registry
(spark_hive_acid/options.py), case-insensitively, and names the closest known option; keys Spark
itself passes are accepted; a write type mismatch says the fix in Spark terms."""
from __future__ import annotations

import pyarrow as pa
import pytest

from spark_hive_acid import options as opt
from spark_hive_acid import read_table, write_table
from spark_hive_acid.exceptions import SchemaMismatchError, UnknownOptionError
from spark_hive_acid.read.options import ReadOptions
from spark_hive_acid.spark.table import HiveAcidTable
from spark_hive_acid.write.options import WriteOptions


@pytest.fixture
def table(tmp_path):
    path = str(tmp_path / "t")
    write_table(pa.table({"id": pa.array([1, 2], pa.int32()), "s": ["a", "b"]}), path)
    write_table(pa.table({"id": pa.array([3], pa.int32()), "s": ["c"]}), path)
    return path


@pytest.mark.parametrize("typo, meant", [("validWriteId", "validWriteIds"),
                                         ("includeRowIds", "includeRowId"),
                                         ("VERSIONASOFF", "versionAsOf"),
                                         ("splitsize_", "splitSize")])
def test_read_table_refuses_a_typo_and_names_the_option_meant(table, typo, meant):
    with pytest.raises(UnknownOptionError, match=f"unknown option '{typo}'; did you mean {meant}\\?"):
        read_table(table, **{typo: "1"})


def test_a_name_close_to_nothing_lists_the_options_of_that_entry_point(table):
    with pytest.raises(UnknownOptionError) as e:
        read_table(table, zzzzzz="1")
    assert "did you mean" not in str(e.value)
    assert "validWriteIds" in str(e.value) and "partitionBy" not in str(e.value)  # reads only


def test_known_names_in_any_case_and_the_keys_spark_passes_are_accepted(table):
    assert read_table(table, VALIDWRITEIDS="1:9223372036854775807::").num_rows == 2
    # load(path) gives path; CREATE TABLE gives provider/owner/location (refused elsewhere)
    parsed = ReadOptions.parse({"path": table, "owner": "root", "location": "file:" + table,
                                "provider": "hiveacid", "Includerowid": "true"})
    assert parsed.include_row_id
    WriteOptions.parse({"path": table, "PartitionOverwriteMode": "dynamic", "owner": "x"})
    # what Spark hands a writeStream sink besides the user's options
    WriteOptions.parse({"path": table, "checkpointlocation": "/ckpt", "queryname": "q"})


def test_write_table_refuses_a_typo_before_creating_anything(tmp_path):
    path = tmp_path / "new"
    with pytest.raises(UnknownOptionError, match="'partitionedBy'; did you mean partitionBy"):
        write_table(pa.table({"id": [1]}), str(path), options={"partitionedBy": "id"})
    assert not path.exists()
    with pytest.raises(UnknownOptionError, match="did you mean partitionBy"):
        WriteOptions.parse({"path": str(path), "partitionedBy": "id"})


def test_table_api_refuses_a_typo(table):
    with pytest.raises(UnknownOptionError, match="HiveAcidTable.forPath: unknown option "
                                                 "'metastoreURL'; did you mean metastoreUri"):
        HiveAcidTable.forPath(None, table, {"metastoreURL": "thrift://x:9083"})
    with pytest.raises(UnknownOptionError, match="forName: .*did you mean metastoreTimeout"):
        HiveAcidTable.forName(None, "db.t", {"metastoreTimeouts": "3"})


def test_every_registered_option_is_accepted_by_the_check():
    opt.check_known({o.name: "x" for o in opt.OPTIONS}, "test")
    opt.check_known({o.name.upper(): "x" for o in opt.OPTIONS}, "test")


def test_a_type_mismatch_on_write_says_the_spark_cast(table):
    with pytest.raises(SchemaMismatchError) as e:
        write_table(pa.table({"id": pa.array([4], pa.int64()), "s": ["d"]}), table)
    msg = str(e.value)
    assert "id is bigint in the data but int in the table" in msg
    assert "F.col('id').cast('int')" in msg and "int64 cannot be stored" not in msg
    assert sorted(read_table(table).column("id").to_pylist()) == [1, 2, 3]  # nothing written
