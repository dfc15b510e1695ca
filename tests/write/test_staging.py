"""The staging directory of a write id: a task still running when its job is aborted removes what
it staged afterwards, and no empty ``_hiveacid_staging`` is left behind by a write."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from spark_hive_acid import read_table, write_table
from spark_hive_acid.acid.layout import STAGING_DIR, staging_dir
from spark_hive_acid.exceptions import TransactionAbortedError
from spark_hive_acid.txn import pathlog
from spark_hive_acid.write.staging import keep_or_discard, open_staging
from spark_hive_acid.write.task_writer import InsertTarget, TableSpec, stage_batches
from spark_hive_acid.write.schema import map_columns
from spark_hive_acid.acid.layout import load_layout


def _rows(n: int) -> pa.Table:
    return pa.table({"id": pa.array(np.arange(n)), "v": pa.array([f"v{i}" for i in range(n)])})


def _stage_one_task(fs, path, write_id, name):
    layout = load_layout(fs, path)
    spec = TableSpec.of(path, layout)
    data = _rows(10)
    task_dir = fs.join(staging_dir(fs, path, write_id), name)
    staged = stage_batches(fs, spec, InsertTarget(write_id), map_columns(layout, data.schema),
                           data.to_batches(), task_dir, 0)
    assert staged and all(fs.exists(f.path) for f in staged)
    return task_dir


def _write_with_one_task_staged(tmp_path, fs):
    """A table of 3 rows and an open append whose first task has staged its files."""
    path = str(tmp_path / "t")
    write_table(_rows(3), path)
    txn = pathlog.begin(fs, path, "append")
    open_staging(fs, path, txn.write_id)
    return path, txn, _stage_one_task(fs, path, txn.write_id, "task-0")


def test_a_task_finishing_after_the_abort_removes_its_files(tmp_path, fs):
    path, txn, early = _write_with_one_task_staged(tmp_path, fs)
    keep_or_discard(fs, path, txn.write_id, early)  # the job is live: its files stay
    assert fs.exists(early)
    txn.abort("Spark job failed")  # the driver aborts while another task still runs ...
    assert not (tmp_path / "t" / STAGING_DIR).exists()
    late = _stage_one_task(fs, path, txn.write_id, "task-1")  # ... which then stages its files
    with pytest.raises(TransactionAbortedError, match="ended while this task was staging"):
        keep_or_discard(fs, path, txn.write_id, late)
    assert not (tmp_path / "t" / STAGING_DIR).exists()
    assert read_table(path).num_rows == 3


def test_another_writers_staging_is_left_alone(tmp_path, fs):
    path, busy, task_dir = _write_with_one_task_staged(tmp_path, fs)
    write_table(_rows(5), path, mode="append")  # commits and removes only its own staging
    assert fs.exists(task_dir)
    keep_or_discard(fs, path, busy.write_id, task_dir)
    assert fs.exists(task_dir)
    busy.abort("done")
    assert not (tmp_path / "t" / STAGING_DIR).exists()
    assert read_table(path).num_rows == 8


def test_compaction_leaves_no_staging_behind(tmp_path):
    from spark_hive_acid.catalog.path import PathTable
    from spark_hive_acid.compaction.runner import compact

    path = str(tmp_path / "t")
    for k in range(3):
        write_table(_rows(4 + k), path)
    compact(PathTable(path), "minor")
    compact(PathTable(path), "major")
    assert not (tmp_path / "t" / STAGING_DIR).exists()
    assert read_table(path).num_rows == 4 + 5 + 6
