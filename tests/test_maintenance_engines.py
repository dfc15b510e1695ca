"""The engine-compatibility rules against the engines' own readers, and ``doctor --fix`` against
every reader we have.

For each layout of tests/maintenance_layouts.py:

* the ``measured`` rules of ``spark_hive_acid.maintenance.compat`` are reproduced with Hive
  2.3.10's (tests/hive_ref), 3.1.3's and 4.1.0's (tests/hive_jvm) own ``OrcInputFormat``: the
  reader named by the rule returns wrong rows or fails, as the rule says;
* ``hiveacid doctor --fix --retention-hours 0`` (a major compaction of the flagged partitions,
  then a vacuum) leaves a table our reader, Hive 2.3's, 3.1's (row by row and vectorized) and
  4.1's read identically, with the rows the layout holds, and that the doctor no longer flags;
* the held-out check of trinodb/trino#31302: a delete delta whose file is ``bucket_00000_1`` is
  applied by our reader (and by Hive 4.1's, which writes such files).
"""
from __future__ import annotations

import contextlib
import io
import json
import re

import pytest

import maintenance_layouts as L
from hive_jvm.oracle import write_ids
from spark_hive_acid.cli import main
from spark_hive_acid.direct import read_table

pytestmark = [pytest.mark.hive, pytest.mark.hive31, pytest.mark.hive41]
ALL = "9223372036854775807"


def ours(t) -> list[tuple]:
    return sorted((r["a"], r["b"]) for r in read_table(str(t)).to_pylist())


def hive2(hive_ref, t) -> list[tuple]:
    return sorted(v for _, v in hive_ref.read(t, L.COLUMNS, valid_txns=f"{ALL}:{ALL}"))


def newer(oracle, t, vectorized=False) -> list[tuple]:
    return sorted(v for _, v in oracle.read(t, L.COLUMNS, write_ids=write_ids(),
                                            vectorized=vectorized))


def test_attempt_id_delete_files_are_wrong_rows_in_hive_2_and_3_only(tmp_path, hive_ref,
                                                                       newer_hives):
    t = tmp_path / "t"
    expected, _ = L.attempt_id_delete(t)
    hive31, hive41 = newer_hives
    assert ours(t) == expected  # the held-out check: bucket_00000_1 is applied
    back = sorted(expected + [(1, "a")])  # the deleted row comes back
    assert hive2(hive_ref, t) == back
    assert newer(hive31, t) == back and newer(hive31, t, vectorized=True) == back
    assert newer(hive41, t) == expected and newer(hive41, t, vectorized=True) == expected


def test_nested_directories_break_hive_2_and_4_but_not_3(tmp_path, hive_ref, newer_hives):
    hive31, hive41 = newer_hives
    t = tmp_path / "ins"
    expected, _ = L.nested_insert(t)
    assert ours(t) == expected
    with pytest.raises(Exception, match="NullPointerException"):
        hive2(hive_ref, t)
    assert newer(hive31, t) == expected
    wrong = newer(hive41, t)
    assert wrong != expected and (1, "a") in wrong and wrong.count((2, "b")) == 2
    d = tmp_path / "del"
    expected, _ = L.nested_delete(d)
    assert ours(d) == expected == hive2(hive_ref, d) == newer(hive31, d)
    with pytest.raises(Exception, match="Duplicate key"):
        newer(hive41, d)


def test_visibility_suffix_is_refused_by_hive_2_and_3(tmp_path, hive_ref, newer_hives):
    hive31, hive41 = newer_hives
    t = tmp_path / "t"
    expected, _ = L.visibility_suffix(t)
    assert ours(t) == expected == newer(hive41, t)
    with pytest.raises(Exception, match="NumberFormatException"):
        hive2(hive_ref, t)
    with pytest.raises(Exception, match="NumberFormatException"):
        newer(hive31, t)


@pytest.mark.parametrize("layout", sorted(L.LAYOUTS))
def test_fix_makes_every_reader_agree_and_nothing_is_flagged(tmp_path, layout, hive_ref,
                                                              newer_hives):
    t = tmp_path / "t"
    expected, findings = L.LAYOUTS[layout](t)
    assert findings
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(["doctor", "--fix", "--retention-hours", "0", "--json", str(t)])
    report = json.loads(out.getvalue())
    assert rc == 0, report["tables"][0]["reasons"]
    assert report["fix"]["summary"]["partitionsCompacted"] == 1
    [table] = report["tables"]
    assert table["partitions"] == [] and table["verdict"] == "healthy"
    assert ours(t) == expected
    assert hive2(hive_ref, t) == expected
    for oracle in newer_hives:
        assert newer(oracle, t) == expected
        assert newer(oracle, t, vectorized=True) == expected
    # nothing left that an engine trips over, read or not: one base, no _vT, nothing nested
    [left] = [p for p in t.iterdir() if not p.name.startswith("_")]
    assert re.fullmatch(r"base_\d{7}", left.name)
    assert all(f.is_file() for f in left.iterdir())
