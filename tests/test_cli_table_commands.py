"""The ``hiveacid`` commands that change a table (issue 26): create, add-columns, drop-partitions,
truncate; each one ACID write, its result printed as JSON; errors exit 2 naming the problem."""
from __future__ import annotations

import json

import pyarrow as pa

from spark_hive_acid import read_table, write_table
from spark_hive_acid.catalog import PathTable
from spark_hive_acid.cli import main


def run(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_create_add_columns_drop_partitions_truncate(tmp_path, capsys):
    path = str(tmp_path / "t")
    code, out, _ = run(capsys, "create", path, "id int, name varchar(3), day string",
                       "--partition-by", "day", "--bucket-by", "id", "--num-buckets", "2")
    assert code == 0 and json.loads(out)["columns"] == ["id int", "name varchar(3)"]
    assert read_table(path).schema.names == ["id", "name", "day"]
    write_table(pa.table({"id": pa.array([1, 2, 3], pa.int32()), "name": ["abcd", "b", "c"],
                          "day": ["a", "b", "c"]}), path)
    assert sorted(read_table(path).column("name").to_pylist()) == ["abc", "b", "c"]
    code, out, _ = run(capsys, "add-columns", path, "note string")
    assert code == 0 and json.loads(out)["columns"][-1] == "note string"
    code, out, _ = run(capsys, "drop-partitions", path, "day IN ('a', 'b')")
    assert code == 0 and json.loads(out)["partitions"] == ["day=a", "day=b"]
    assert read_table(path).to_pylist() == [{"id": 3, "name": "c", "note": None, "day": "c"}]
    code, out, _ = run(capsys, "truncate", path)
    assert code == 0 and json.loads(out)["writeId"] == 3
    assert read_table(path).num_rows == 0 and read_table(path, versionAsOf="1").num_rows == 3
    assert [h["operation"] for h in PathTable(path).history()] == [
        "truncate", "dropPartitions", "append"]


def test_errors_exit_2_and_change_nothing(tmp_path, capsys):
    path = str(tmp_path / "t")
    assert run(capsys, "create", path, "id int, day string", "--partition-by", "day")[0] == 0
    code, _, err = run(capsys, "create", path, "id int")
    assert code == 2 and "already holds a table" in err
    code, _, err = run(capsys, "drop-partitions", path, "id = 1")
    assert code == 2 and "'id' is not a partition column" in err
    code, _, err = run(capsys, "add-columns", path, "day int")
    assert code == 2 and "already has a column 'day'" in err
    code, _, err = run(capsys, "truncate", str(tmp_path / "missing"))
    assert code == 2 and "TableNotFoundError" in err
    code, _, err = run(capsys, "create", str(tmp_path / "u"), "id int, x nosuchtype")
    assert code == 2 and "nosuchtype" in err
    assert PathTable(path).history() == []
