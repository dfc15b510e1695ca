"""A damaged record of the path-mode log never loses a committed write (issue 13 item 2): reads and
writes stop with an error naming the file and saying how to repair; nobody aborts anything on a
guess; records carry a checksum; the log can be repaired; a reader never sees a record half
written."""
from __future__ import annotations

import json
import threading
from pathlib import Path

import pyarrow as pa
import pytest

from spark_hive_acid import read_table, write_table
from spark_hive_acid.acid.log_records import CHECKSUM, LogLayout
from spark_hive_acid.exceptions import InvalidOptionError, TransactionLogDamagedError
from spark_hive_acid.txn import pathlog


def _table(tmp_path, writes=2):
    path = str(tmp_path / "t")
    for i in range(writes):
        write_table(pa.table({"id": [i * 10, i * 10 + 1]}), path)
    return path


def _event(path, seq):
    return Path(path) / pathlog.LOG_DIR / "events" / f"{seq:019d}.json"


def _ids(path):
    return sorted(read_table(path).column("id").to_pylist())


def test_truncated_newest_commit_record_is_an_error_not_lost_rows(tmp_path, fs):
    path = _table(tmp_path)
    newest = _event(path, 2)
    good = newest.read_bytes()
    newest.write_bytes(good[: len(good) // 2])  # truncated: the rows of write 2 must not vanish
    with pytest.raises(TransactionLogDamagedError) as e:
        read_table(path)
    assert str(newest) in str(e.value) and "repair" in str(e.value)
    with pytest.raises(TransactionLogDamagedError):  # the next writer stops too ...
        write_table(pa.table({"id": [99]}), path)
    layout = LogLayout(fs, path)
    assert layout.numbered(layout.writeids_dir) == [1, 2]
    assert layout.numbered(layout.events_dir) == [1, 2]
    newest.write_bytes(good)  # ... and aborted nothing: restoring the file brings everything back
    assert _ids(path) == [0, 1, 10, 11]
    write_table(pa.table({"id": [99]}), path)
    assert _ids(path) == [0, 1, 10, 11, 99]


def test_a_changed_digit_fails_the_checksum(tmp_path):
    path = _table(tmp_path)
    record = json.loads(_event(path, 2).read_text())
    assert CHECKSUM in record
    record["cumulative"]["aborted"] = [2]  # still valid JSON: only the checksum tells
    _event(path, 2).write_text(json.dumps(record))
    with pytest.raises(TransactionLogDamagedError, match="checksum"):
        read_table(path)


def test_records_without_a_checksum_still_read(tmp_path):
    """Tables written before records had checksums."""
    path = _table(tmp_path)
    for seq in (1, 2):
        record = json.loads(_event(path, seq).read_text())
        del record[CHECKSUM]
        _event(path, seq).write_text(json.dumps(record))
    assert _ids(path) == [0, 1, 10, 11]


def test_repair_rebuilds_an_older_record_from_the_next_one(tmp_path, fs):
    path = _table(tmp_path, writes=3)
    original = json.loads(_event(path, 2).read_text())
    _event(path, 2).write_bytes(b"{garbage")
    assert _ids(path) == [0, 1, 10, 11, 20, 21]  # the newest record alone decides the snapshot
    with pytest.raises(TransactionLogDamagedError, match=str(_event(path, 2))):
        pathlog.history(fs, path)  # history needs every record
    assert pathlog.repair_log(fs, path) == 2
    rebuilt = json.loads(_event(path, 2).read_text())
    for key in ("seq", "writeId", "state", "cumulative"):
        assert rebuilt[key] == original[key]
    assert [h["writeId"] for h in pathlog.history(fs, path)] == [3, 2, 1]
    assert pathlog.repair_log(fs, path) is None  # nothing left to repair


def test_repair_of_the_newest_record_asks_what_it_was(tmp_path, fs):
    path = _table(tmp_path)
    _event(path, 2).write_bytes(b"")
    with pytest.raises(InvalidOptionError, match=r"write_id= one of \[2\]"):
        pathlog.repair_log(fs, path)
    assert pathlog.repair_log(fs, path, write_id=2, state="committed") == 2
    assert _ids(path) == [0, 1, 10, 11]


def test_readers_never_see_a_commit_record_half_written(tmp_path, fs):
    path = _table(tmp_path, writes=1)
    errors, stop = [], threading.Event()

    def read_while_committing():
        while not stop.is_set():
            try:
                pathlog.read_snapshot(fs, path)
            except Exception as e:  # noqa: BLE001 - collected, asserted below
                errors.append(e)

    reader = threading.Thread(target=read_while_committing)
    reader.start()
    try:
        for _ in range(40):
            pathlog.commit(fs, pathlog.begin(fs, path, "append"))
    finally:
        stop.set()
        reader.join()
    assert errors == []
    assert pathlog.read_snapshot(fs, path).high_watermark == 41
