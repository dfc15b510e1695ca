"""Tables built for each finding of ``hiveacid doctor`` (docs/maintenance.md), with the rows they
hold. Files are written with pyorc (``acid_files``), never with the library's writer, laid out as
the engine or Hive version that produces them does; no transaction log (as Hive writes tables),
so the snapshot is everything present. Columns: ``a int, b string``.

Each builder returns the rows a correct reader returns (values only, as a sorted list) and the
``(engine, rule)`` findings the doctor must report for it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from acid_files import (
    ROW_SCHEMA,
    base_name,
    bp,
    bucket_name,
    delta_name,
    deletes,
    inserts,
    write_acid_file,
    write_flush_length,
    write_metadata_acid,
    write_orc_file,
)

COLUMNS = [("a", "int"), ("b", "string")]
Built = tuple[list[tuple], set[tuple[str, str]]]


def _ins(t: Path, d: str, w: int, rows: list[tuple], *, version: bool = True,
         name: str = "bucket_00000") -> Path:
    return write_acid_file(t / d / name, ROW_SCHEMA, inserts(w, bp(0), rows),
                           acid_version_file=version)


def attempt_id_delete(t: Path) -> Built:
    """trinodb/trino#31302: Hive (CDP, Hive 4 direct insert) names a delete delta's file
    ``bucket_00000_1``."""
    _ins(t, delta_name(1, 1, 0), 1, [(1, "a"), (2, "b"), (3, "c")])
    write_acid_file(t / delta_name(2, 2, 0, delete=True) / "bucket_00000_1", ROW_SCHEMA,
                    deletes(2, [(1, bp(0), 0)]))
    return [(2, "b"), (3, "c")], {("trino", "attempt-id-delete-files"),
                                  ("hive2", "attempt-id-delete-files"),
                                  ("hive3.1", "attempt-id-delete-files")}


def nested_insert(t: Path) -> Built:
    """trinodb/trino#8920: a minor compaction run twice leaves ``delta_x_y/delta_x_y``."""
    rows = [(1, "a"), (2, "b")]
    _ins(t, delta_name(1, 2), 2, rows)
    _ins(t / delta_name(1, 2), delta_name(1, 2), 2, rows)  # the nested copy
    write_acid_file(t / delta_name(3, 3, 0, delete=True) / bucket_name(0), ROW_SCHEMA,
                    deletes(3, [(2, bp(0), 0)]))
    return [(2, "b")], {("trino", "nested-acid-directory"), ("hive2", "nested-acid-directory"),
                        ("hive4.1", "nested-acid-directory"), ("impala", "nested-acid-directory")}


def nested_delete(t: Path) -> Built:
    _ins(t, delta_name(1, 1, 0), 1, [(1, "a"), (2, "b")])
    dd = t / delta_name(2, 3, delete=True)
    write_acid_file(dd / bucket_name(0), ROW_SCHEMA, deletes(3, [(1, bp(0), 0)]))
    write_acid_file(dd / delta_name(2, 3, delete=True) / bucket_name(0), ROW_SCHEMA,
                    deletes(3, [(1, bp(0), 0)]))
    _ins(t, delta_name(2, 3), 2, [(5, "e")])  # the minor compaction's insert side
    return [(2, "b"), (5, "e")], {("trino", "nested-acid-directory"),
                                  ("hive4.1", "nested-acid-directory")}


def streaming(t: Path) -> Built:
    """Hive Streaming: one delta for a batch of write ids 1..3, with its flush-length side file
    (the logical length is the whole file: the last batch committed)."""
    events = (inserts(1, bp(0), [(1, "a")]) + inserts(2, bp(0), [(2, "b")], first_row_id=0)
              + inserts(3, bp(0), [(3, "c")], first_row_id=0))
    f = write_acid_file(t / delta_name(1, 3) / bucket_name(0), ROW_SCHEMA, events)
    write_flush_length(f, [f.stat().st_size])
    return [(1, "a"), (2, "b"), (3, "c")], {("impala", "streaming-side-file"),
                                            ("trino", "streaming-ingest-delta")}


def original_files(t: Path) -> Built:
    """A table converted to ACID (``ALTER TABLE ... SET TBLPROPERTIES ('transactional'=
    'true')``): its original files stay until a major compaction."""
    write_orc_file(t / "000000_0", "struct<a:int,b:string>", [(1, "a"), (2, "b")])
    _ins(t, delta_name(1, 1, 0), 1, [(3, "c")])
    return [(1, "a"), (2, "b"), (3, "c")], {("doris", "original-files")}


def hive2_files(t: Path) -> Built:
    """Hive 2 (ACID v1) directories: no ``_orc_acid_version``."""
    _ins(t, base_name(1), 1, [(1, "a"), (2, "b")], version=False)
    _ins(t, delta_name(2, 2, 0), 2, [(3, "c")], version=False)
    return [(1, "a"), (2, "b"), (3, "c")], {("trino", "acid-v1-directory"),
                                            ("impala", "acid-v1-directory")}


def visibility_suffix(t: Path) -> Built:
    """Hive 4's compactor output, ``base_N_vT`` (HIVE-20823)."""
    _ins(t, base_name(2, 9), 1, [(1, "a"), (2, "b")])
    _ins(t, delta_name(3, 3, 0), 3, [(3, "c")])
    return [(1, "a"), (2, "b"), (3, "c")], {("hive2", "visibility-suffix"),
                                            ("hive3.1", "visibility-suffix")}


def many_deltas(t: Path, n: int = 101) -> Built:
    """More deltas than Hive's metric threshold (100, HIVE-24974)."""
    for w in range(1, n + 1):
        _ins(t, delta_name(w, w, 0), w, [(w, f"v{w}")])
    return [(w, f"v{w}") for w in range(1, n + 1)], set()


def compacted(t: Path) -> Built:
    """What a healthy, compacted partition looks like: a compacted base and one delta."""
    _ins(t, base_name(5), 5, [(1, "a")])
    write_metadata_acid(t / base_name(5))
    _ins(t, delta_name(6, 6, 0), 6, [(2, "b")])
    return [(1, "a"), (2, "b")], set()


LAYOUTS: dict[str, Callable[[Path], Built]] = {
    "attempt_id_delete": attempt_id_delete, "nested_insert": nested_insert,
    "nested_delete": nested_delete, "streaming": streaming, "original_files": original_files,
    "hive2_files": hive2_files, "visibility_suffix": visibility_suffix,
}
