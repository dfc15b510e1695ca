"""Several operations in one path-mode transaction (issue 26): statements of one table share one
write id (statement ids 0, 1, 2...) and commit by one log record; a second path-mode table is
refused (no single record commits two logs); a failure leaves the table as it was."""
from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import spark_hive_acid as sha
from spark_hive_acid.catalog import PathTable
from spark_hive_acid.exceptions import InvalidOptionError, UnsupportedOperationError


def _rows(ids, c=None):
    cols = {"id": pa.array(ids, pa.int64())}
    if c is not None:
        cols["c"] = pa.array([c] * len(ids) if isinstance(c, int) else c, pa.int32())
    return pa.table(cols)


def _state(path):
    t = sha.read_table(path)
    return sorted(zip(t.column("id").to_pylist(), t.column("c").to_pylist()))


@pytest.fixture
def table(tmp_path):
    path = str(tmp_path / "t")
    sha.write_table(_rows(list(range(6)), [i % 3 for i in range(6)]), path, partition_by=["c"])
    return path


def test_statements_of_one_table_share_one_write_id_and_one_commit(table):
    model = set(_state(table))
    events_before = len(PathTable(table).commit_records() or [])
    with sha.transaction() as tx:
        assert tx.delete(table, pc.field("id") < 2) == 2
        model -= {(0, 0), (1, 1)}
        assert tx.append(table, _rows([10, 11], [0, 1])) == 2
        model |= {(10, 0), (11, 1)}
        assert tx.overwrite(table, _rows([20]), partition={"c": 2}) == 1
        model = {r for r in model if r[1] != 2} | {(20, 2)}
        assert tx.append(table, _rows([12], 1)) == 1
        model |= {(12, 1)}
        assert len(sha.read_table(table)) == 6  # nothing visible yet
    assert _state(table) == sorted(model)
    records = PathTable(table).commit_records() or []
    assert len(records) == events_before + 1  # one commit record for the four statements
    w = max(r.write_id for r in records)
    dirs = sorted(d for p in ("c=0", "c=1", "c=2") for d in os.listdir(os.path.join(table, p))
                  if f"_{w:07d}" in d)
    assert dirs == [f"base_{w:07d}", f"delete_delta_{w:07d}_{w:07d}_0000",
                    f"delete_delta_{w:07d}_{w:07d}_0000", f"delta_{w:07d}_{w:07d}_0001",
                    f"delta_{w:07d}_{w:07d}_0001", f"delta_{w:07d}_{w:07d}_0003"]


def test_a_second_path_table_is_refused(table, tmp_path):
    other = str(tmp_path / "u")
    sha.write_table(_rows([1], 0), other, partition_by=["c"])
    before = (_state(table), _state(other))
    with pytest.raises(UnsupportedOperationError, match="metastoreUri"):
        with sha.transaction() as tx:
            tx.append(table, _rows([7], 0))
            tx.append(other, _rows([8], 0))
    assert (_state(table), _state(other)) == before
    assert not os.path.exists(os.path.join(table, "_hiveacid_staging")) or \
        not os.listdir(os.path.join(table, "_hiveacid_staging"))


def test_a_failure_leaves_the_table_as_it_was(table):
    before = _state(table)
    with pytest.raises(ZeroDivisionError):
        with sha.transaction() as tx:
            tx.append(table, _rows([7], 0))
            1 / 0
    assert _state(table) == before
    assert PathTable(table).history()[0]["state"] == "aborted"


def test_refusals(table):
    before = _state(table)
    with pytest.raises(UnsupportedOperationError, match="already written"):
        with sha.transaction() as tx:
            tx.append(table, _rows([7], 0))
            tx.delete(table, pc.field("id") == 7)
    with pytest.raises(UnsupportedOperationError, match="overwrite"):
        with sha.transaction() as tx:
            tx.append(table, _rows([8], 1))
            tx.overwrite(table, _rows([9]), partition={"c": 1})
    with pytest.raises(InvalidOptionError, match="metastoreUri"):
        with sha.transaction() as tx:
            tx.append("db.t", _rows([1], 0))
    with pytest.raises(InvalidOptionError, match="pyarrow.compute"):
        with sha.transaction() as tx:
            tx.delete(table, "id < 3")
    assert _state(table) == before


def _named(path):
    t = sha.read_table(path)
    return sorted(zip(t.column("id").to_pylist(), t.column("c").to_pylist(),
                      t.column("name").to_pylist()))


def test_an_update_is_a_delete_then_an_insert_of_the_same_write_id(tmp_path):
    path = str(tmp_path / "u")
    ids = list(range(8))
    sha.write_table(pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids],
                              "c": pa.array([i % 2 for i in ids], pa.int32())}), path,
                    partition_by=["c"])
    model = {(i, i % 2, f"n{i}") for i in ids}
    with sha.transaction() as tx:
        n = tx.update(path, pc.field("id") >= 5,
                      {"name": pc.binary_join_element_wise(pc.field("name"), "!", ""),
                       "id": pc.field("id") * 10})
        assert n == 3
        model = {(i * 10, c, s + "!") if i >= 5 else (i, c, s) for i, c, s in model}
        assert tx.append(path, pa.table({"id": pa.array([99], pa.int64()), "name": ["x"],
                                         "c": pa.array([1], pa.int32())})) == 1
        model.add((99, 1, "x"))
    assert _named(path) == sorted(model)
    w = max(r.write_id for r in PathTable(path).commit_records() or [])
    names = sorted(d for p in ("c=0", "c=1") for d in os.listdir(os.path.join(path, p))
                   if f"_{w:07d}" in d)
    # Hive 4's split update: the deletes as statement 0, the new rows as statement 1; the append
    # is statement 2
    assert names == [f"delete_delta_{w:07d}_{w:07d}_0000", f"delete_delta_{w:07d}_{w:07d}_0000",
                     f"delta_{w:07d}_{w:07d}_0001", f"delta_{w:07d}_{w:07d}_0001",
                     f"delta_{w:07d}_{w:07d}_0002"]


def test_updates_that_cannot_be_done_are_refused_and_nothing_changes(table):
    before = _state(table)
    for what, call, error, message in [
            ("partition column", lambda tx: tx.update(table, pc.field("id") == 1, {"c": 5}),
             UnsupportedOperationError, "partition or bucketing column"),
            ("unknown column", lambda tx: tx.update(table, pc.field("id") == 1, {"nope": 1}),
             InvalidOptionError, "no column 'nope'"),
            ("SQL condition", lambda tx: tx.update(table, "id = 1", {"id": 2}),
             InvalidOptionError, "pyarrow.compute expression"),
            ("after a write", lambda tx: (tx.append(table, _rows([7], 0)),
                                          tx.update(table, pc.field("id") == 1, {"id": 2})),
             UnsupportedOperationError, "already written in this transaction")]:
        with pytest.raises(error, match=message):
            with sha.transaction() as tx:
                call(tx)
        assert _state(table) == before, what
