"""``hiveacid doctor`` without a JVM: every finding on a table built for it (pyorc files laid out
as the engine that writes them does, tests/maintenance_layouts.py), the counts and bytes against
the directories on disk, Hive's delta thresholds, no file opened, the three output formats, exit
statuses and bad input."""
from __future__ import annotations

import json
import os
import random
import re

import pytest

import maintenance_layouts as L
from acid_files import ROW_SCHEMA, bp, delta_name, deletes, write_acid_file
from spark_hive_acid.catalog.path import PathTable
from spark_hive_acid.cli import main
from spark_hive_acid.exceptions import InvalidOptionError
from spark_hive_acid.maintenance.doctor import DoctorSettings, doctor
from spark_hive_acid.maintenance.health import Thresholds
from spark_hive_acid.maintenance.scan import scan_table


def _report(path, **kw) -> dict:
    return doctor([PathTable(str(path))], DoctorSettings(**kw))["tables"][0]


def _findings(table_report: dict) -> set[tuple[str, str]]:
    return {(f["engine"], f["rule"]) for p in table_report["partitions"]
            for f in p.get("compatibility", [])}


@pytest.mark.parametrize("layout", sorted(L.LAYOUTS))
def test_each_layout_is_reported_with_its_rules_and_only_those(tmp_path, layout):
    _, expected = L.LAYOUTS[layout](tmp_path / "t")
    report = _report(tmp_path / "t")
    assert _findings(report) == expected
    assert report["verdict"] == "needs action"
    assert any("other engines misread or refuse" in r for r in report["reasons"])
    for p in report["partitions"]:
        for f in p["compatibility"]:
            assert f["reference"] and f["confirmed"] in ("measured", "source", "tracker",
                                                         "inferred")
            assert f["examples"], f
            assert f["fix"] in ("major compaction", "major compaction, then vacuum")


def test_examples_name_the_directories_on_disk(tmp_path):
    L.attempt_id_delete(tmp_path / "t")
    [p] = _report(tmp_path / "t")["partitions"]
    [f] = [f for f in p["compatibility"] if f["engine"] == "trino"]
    assert f["examples"] == [f"{delta_name(2, 2, 0, delete=True)}/bucket_00000_1"]
    assert "trinodb/trino#31302" in f["reference"]


def test_a_healthy_table_needs_nothing_and_no_file_is_opened(tmp_path):
    L.compacted(tmp_path / "t")
    facts = scan_table(PathTable(str(tmp_path / "t")))
    assert facts.opens == 0  # the _metadata_acid marker of a committed base is not read
    report = _report(tmp_path / "t")
    assert report["verdict"] == "healthy" and report["partitions"] == []
    assert report["scan"]["filesOpened"] == 0
    # the table-level note (StarRocks refuses full-ACID tables) does not make it "needs action"
    assert [f["engine"] for f in report["compatibility"]["table"]] == ["starrocks"]
    assert _report(tmp_path / "t", engines=("trino",))["compatibility"]["table"] == []


def test_counts_and_bytes_match_the_directories(tmp_path):
    t = tmp_path / "t"
    L.compacted(t)
    # an obsolete delta below the base and an aborted-looking one are not read
    old = L._ins(t, delta_name(2, 2, 0), 2, [(9, "z")])
    write_acid_file(t / delta_name(7, 7, 0, delete=True) / "bucket_00000", ROW_SCHEMA,
                    deletes(7, [(6, bp(0), 0)]))
    [p] = _report(t, partitions="all")["partitions"]
    on_disk = {d: sum(f.stat().st_size for f in (t / d).iterdir() if not f.name.startswith("_"))
               for d in os.listdir(t)}
    assert p["base"] == "base_0000005"
    assert p["baseBytes"] == on_disk["base_0000005"]
    assert p["deltas"] == 1 and p["deleteDeltas"] == 1 and p["activeDeltas"] == 2
    assert p["deltaBytes"] == on_disk[delta_name(6, 6, 0)] + on_disk[delta_name(7, 7, 0, delete=True)]
    assert p["obsolete"] == 1 and p["obsoleteDeltas"] == 1
    assert p["obsoleteBytes"] == old.stat().st_size + (old.parent / "_orc_acid_version").stat().st_size
    assert p["deltaBaseRatio"] == round(p["deltaBytes"] / p["baseBytes"], 6)
    assert p["smallFiles"] == 3  # every file here is below 1 MiB
    assert p["compactIfNeeded"]["decision"] == "major"  # delta/base far above 0.1


def test_hive_delta_thresholds(tmp_path):
    L.many_deltas(tmp_path / "t", 101)
    report = _report(tmp_path / "t")
    [p] = report["partitions"]
    assert p["exceeds"] == ["101 active deltas > 100"]
    assert p["compactIfNeeded"] == {"decision": "major",
                                    "reason": "101 delta directories > 10 and no base"}
    assert report["totals"]["partitionsExceeding"] == 1
    # 100 is not above the threshold; an override lowers it
    L.many_deltas(tmp_path / "u", 100)
    assert _report(tmp_path / "u")["partitions"] == []
    lowered = Thresholds().with_overrides({"activeDeltas": "99"})
    assert _report(tmp_path / "u", thresholds=lowered)["partitions"][0]["exceeds"] == [
        "100 active deltas > 99"]


def test_small_deltas_count_against_the_base(tmp_path):
    t = tmp_path / "t"
    rng = random.Random(7)  # incompressible values: the base must be > 100 x a delta
    L._ins(t, "base_0000001", 1, [(i, "%064x" % rng.getrandbits(256)) for i in range(3000)])
    for w in range(2, 6):
        L._ins(t, delta_name(w, w, 0), w, [(w, "s")])
    facts = scan_table(PathTable(str(t)))
    [p] = facts.partitions
    assert p.small_deltas == 4  # each far below 1 % of the base
    over = Thresholds().with_overrides({"smallDeltas": "3"})
    [entry] = _report(t, thresholds=over)["partitions"]
    assert entry["exceeds"] == ["4 deltas smaller than 0.01 of the base > 3"]


def test_partitioned_table_reports_each_partition_by_its_name(tmp_path):
    t = tmp_path / "t"
    L.attempt_id_delete(t / "p=1")
    L.compacted(t / "p=2")
    report = _report(t)
    assert report["partitionColumns"] == ["p"] and report["partitionCount"] == 2
    assert [p["partition"] for p in report["partitions"]] == ["p=1"]


def test_prometheus_output_is_valid_exposition(tmp_path, capsys):
    L.attempt_id_delete(tmp_path / "wh" / "a")
    L.compacted(tmp_path / "wh" / "b")
    rc = main(["doctor", "--warehouse", str(tmp_path / "wh"), "--prometheus"])
    out = capsys.readouterr().out
    assert rc == 1
    sample = re.compile(r'^[a-z_]+(\{([a-z]+="([^"\\]|\\.)*",?)+\})? -?[0-9.e+]+$')
    names = set()
    for line in out.splitlines():
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            names.add(line.split()[2])
            continue
        assert sample.match(line), line
        assert line.split("{")[0].split(" ")[0] in names  # HELP/TYPE come first
    a = str(tmp_path / "wh" / "a")
    assert f'hiveacid_table_needs_action{{table="{a}"}} 1' in out
    assert (f'hiveacid_table_engine_findings{{table="{a}",engine="trino",'
            f'rule="attempt-id-delete-files"}} 1') in out
    assert f'hiveacid_table_needs_action{{table="{tmp_path / "wh" / "b"}"}} 0' in out


def test_json_and_text_outputs_and_exit_status(tmp_path, capsys):
    L.compacted(tmp_path / "ok")
    assert main(["doctor", str(tmp_path / "ok")]) == 0
    assert "1 table(s), 1 partition(s): 0 table(s) need action" in capsys.readouterr().out
    L.nested_insert(tmp_path / "bad")
    assert main(["doctor", str(tmp_path / "bad"), str(tmp_path / "ok"), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [t["verdict"] for t in report["tables"]] == ["needs action", "healthy"]
    assert report["needsAction"] is True
    assert main(["doctor", str(tmp_path / "bad"), "--engines", "doris"]) == 0  # doris reads it
    assert main(["doctor", str(tmp_path / "bad")]) == 1
    text = capsys.readouterr().out
    assert "trino: refuses the table" in text and "trinodb/trino#8920" in text


@pytest.mark.parametrize("argv, message", [
    (["doctor"], "Nothing to look at"),
    (["doctor", "/no/such/table"], "No table at /no/such/table"),
    (["doctor", "--warehouse", "/no/such/dir"], "No warehouse directory at /no/such/dir"),
    (["doctor", "wh"], "wh holds no Hive ACID table"),  # a directory of tables
    (["doctor", "--warehouse", "wh/t"], "holds no Hive ACID table directory"),
    (["doctor", ".", "--engines", "presto"], "Unknown engine 'presto'"),
    (["doctor", ".", "--threshold", "deltas=5"], "Unknown threshold 'deltas'"),
    (["doctor", ".", "--threshold", "smallDeltaPct=2"], "must be a fraction"),
    (["doctor", ".", "--concurrency", "0"], "--concurrency must be a positive number"),
    (["maintain", ".", "--batch", "0"], "--batch must be a positive number"),
    (["doctor", ".", "-o", "webhdfsURL2=x"], "unknown option 'webhdfsURL2'"),
])
def test_bad_input_is_refused_naming_it(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    L.compacted(tmp_path)
    L.compacted(tmp_path / "wh" / "t")
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_a_table_that_cannot_be_read_is_reported_and_the_others_still_are(tmp_path):
    L.compacted(tmp_path / "wh" / "good")
    bad = tmp_path / "wh" / "bad"
    L.compacted(bad)
    (bad / "delta_0000009_0000009_0000.bak").mkdir()  # Hive refuses such a name too
    report = doctor([PathTable(str(tmp_path / "wh" / n)) for n in ("bad", "good")])
    bad_r, good_r = report["tables"]
    assert "CorruptFileError" in bad_r["error"] and bad_r["verdict"] == "needs action"
    assert good_r["verdict"] == "healthy"
    assert report["summary"]["tablesWithErrors"] == 1


def test_threshold_overrides_are_checked():
    with pytest.raises(InvalidOptionError, match="activeDeltas=-1"):
        Thresholds().with_overrides({"activeDeltas": -1})
    t = Thresholds().with_overrides({"active_deltas": 7, "smallDeltaPct": "0.5"})
    assert (t.active_deltas, t.small_delta_pct) == (7, 0.5)
