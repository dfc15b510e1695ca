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


def test_the_docs_option_tables_are_generated_from_the_registry():
    """Issue 21: each option is declared once (kind, default, doc) and the docs' tables come from
    there: a table out of date (or a hand edit) fails here; `make docs` rewrites them."""
    import option_docs

    stale = [p.name for p in option_docs.doc_files()
             if option_docs.render(p.read_text(encoding="utf-8")) != p.read_text(encoding="utf-8")]
    assert stale == []
    listed = {n.lower() for p in option_docs.doc_files()
              for n in option_docs.documented(p.read_text(encoding="utf-8"))}
    assert sorted(o.name for o in opt.OPTIONS if o.key not in listed and o.name != "paths") == []


def test_the_renderer_sees_a_stale_table():
    import option_docs

    text = "x\n<!-- options: splitSize -->\n| stale |\n<!-- /options -->\ny\n"
    out = option_docs.render(text)
    assert "| `splitSize` | 134217728 (128 MiB) |" in out and "| stale |" not in out
    assert option_docs.documented(out) == ["splitSize"]


@pytest.mark.parametrize("name, given, expected", [
    ("splitSize", None, 134217728), ("splitSize", "7", 7), ("includeRowId", None, False),
    ("includeRowId", "TRUE", True), ("txnTimeoutSeconds", None, 3600.0),
    ("txnTimeoutSeconds", "2.5", 2.5), ("partitionOverwriteMode", "Dynamic", "dynamic"),
    ("partitionBy", "a, `b`", ["a", "b"]), ("tableProperties", "k=v", {"k": "v"}),
    ("hdfsClient", None, "auto"), ("metastoreTimeout", None, 60.0),
    ("lockWaitTimeout", None, 300.0), ("validTxns", " 5:5:: ", " 5:5:: "),
])
def test_one_typed_value_per_option_with_the_registrys_default(name, given, expected):
    options = {} if given is None else {name.upper(): given}
    assert opt.value(options, name) == expected


@pytest.mark.parametrize("name, bad, says", [
    ("splitSize", "0", "must be >= 1"), ("splitSize", "1_0", "must be an integer"),
    ("includeRowId", "maybe", "true or false"), ("txnTimeoutSeconds", "nan", "seconds"),
    ("partitionOverwriteMode", "partial", "one of: static, dynamic"),
])
def test_a_bad_value_names_the_option(name, bad, says):
    from spark_hive_acid.exceptions import InvalidOptionError

    with pytest.raises(InvalidOptionError, match=f"{name}.*{says}"):
        opt.value({name: bad}, name)


def test_path_or_table_is_checked_once_with_the_entry_points_wording(tmp_path):
    from spark_hive_acid.exceptions import InvalidOptionError

    with pytest.raises(InvalidOptionError, match="not both"):
        ReadOptions.parse({"path": str(tmp_path), "table": "db.t"})
    with pytest.raises(InvalidOptionError, match="No table given: use spark.read"):
        ReadOptions.parse({})
