"""Converting and mirroring Hive ACID tables to Iceberg and Delta, without Spark: over random
histories (appends, INSERT OVERWRITEs, deletes, updates, merges, minor and major compactions;
partitioned, bucketed), every target version, read by the target's own library (pyiceberg,
deltalake), holds exactly the model's rows at the write id it records, and the verdict agrees."""
from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pytest

from convert_model import History, iceberg_props, rows
from spark_hive_acid.acid.logstate import read_events
from spark_hive_acid.conversion import convert, delta_target, iceberg_target, mirror
from spark_hive_acid.conversion.target import COMMIT_TIME_KEY, OPERATION_KEY, WRITE_ID_KEY
from spark_hive_acid.exceptions import InvalidOptionError, UnsupportedOperationError
from spark_hive_acid.io.filesystem import LocalFileSystem

pytest.importorskip("pyiceberg")
pytest.importorskip("deltalake")


def targets(tmp_path, name="t"):
    return {"iceberg": lambda: iceberg_target(iceberg_props(tmp_path), f"db.{name}"),
            "delta": lambda: delta_target(str(tmp_path / f"delta_{name}"))}


def check_every_version(h: History, target, partitioned: bool, since: int = 0) -> list[int]:
    """Each target version (write id >= ``since``) holds the model's rows at its write id; the
    versions are in write-id order and none is missing: returns their write ids."""
    versions = target.versions()
    ids = [v.write_id for v in versions]
    assert ids == sorted(set(ids)), ids
    for v in versions:
        if v.write_id < since:
            continue
        got = rows(target.read(v.ref), partitioned)
        assert got == h.model_at(v.write_id), (target.display, v, h.table.log)
    # every write id that changed the rows after the first version has its own version
    changed = [w for w in sorted(h.at) if w > max(ids[0], since)
               and h.at[w] != h.model_at(max(x for x in h.at if x < w))]
    assert set(changed) <= set(ids), (changed, ids, h.table.log)
    return ids


@pytest.mark.parametrize("kind", ["iceberg", "delta"])
@pytest.mark.parametrize("seed,partitioned,buckets", [(0, False, 0), (1, True, 0), (2, True, 2),
                                                      (3, False, 3)])
def test_random_histories_convert_then_mirror(tmp_path, kind, seed, partitioned, buckets):
    h = History(tmp_path / "hive", seed, partitioned=partitioned, buckets=buckets)
    h.random_ops(8)
    target = targets(tmp_path)[kind]
    result = convert(h.path, target(), samples=20)
    assert result.verdict.ok, result.verdict
    assert result.collapsed_up_to is None  # no compaction: the whole history
    ids = check_every_version(h, target(), partitioned)
    assert ids[0] == min(h.at) and ids[-1] == h.current()
    assert len(result.verdict.checks) == len(ids)  # samples=20 covers every version

    h.random_ops(6, compactions=True)
    again = mirror(h.path, target())
    assert again.previous_write_id == ids[-1] and again.write_id == target().last_write_id()
    assert again.verdict.ok, again.verdict
    check_every_version(h, target(), partitioned, since=_readable(h))
    # exactly once: a run with nothing new commits nothing
    n = len(target().versions())
    nothing = mirror(h.path, target(), verify=False)
    assert nothing.steps == [] and len(target().versions()) == n


def _readable(h: History) -> int:
    from spark_hive_acid.catalog.path import PathTable
    from spark_hive_acid.conversion.changes import first_version

    return first_version(PathTable(h.path).scan())


@pytest.mark.parametrize("kind", ["iceberg", "delta"])
def test_compacted_history_collapses_into_the_first_snapshot(tmp_path, kind):
    h = History(tmp_path / "hive", 7, partitioned=True)
    for op in ("append", "append", "delete", "update", "major", "append", "delete"):
        h.do(op)
    oldest = _readable(h)
    assert oldest > 0
    target = targets(tmp_path)[kind]
    result = convert(h.path, target())
    assert result.collapsed_up_to == oldest and result.verdict.ok
    ids = check_every_version(h, target(), True)
    assert ids[0] == oldest and ids[-1] == h.current()


@pytest.mark.parametrize("kind", ["iceberg", "delta"])
def test_mirror_after_a_major_compaction_past_the_last_write_id(tmp_path, kind):
    """The events between the last mirrored write id and the compaction are gone: the table is
    rewritten as of the compaction in one snapshot, said in the result, and the mirror goes on."""
    h = History(tmp_path / "hive", 11, partitioned=True)
    for op in ("append", "append", "delete"):
        h.do(op)
    target = targets(tmp_path)[kind]
    mirror(h.path, target(), verify=False)
    for op in ("update", "append", "delete", "major", "append"):
        h.do(op)
    result = mirror(h.path, target())
    assert result.collapsed_up_to == _readable(h) and result.verdict.ok
    assert result.steps[0]["operation"] == "resync"
    check_every_version(h, target(), True, since=_readable(h))


@pytest.mark.parametrize("kind", ["iceberg", "delta"])
def test_each_version_records_write_id_commit_time_and_operation(tmp_path, kind):
    h = History(tmp_path / "hive", 5)
    for op in ("append", "append", "delete", "update", "overwrite"):
        h.do(op)
    convert(h.path, targets(tmp_path)[kind](), verify=False)
    log = {e.write_id: e for e in read_events(LocalFileSystem(), h.path) if e.committed}
    if kind == "iceberg":
        table = targets(tmp_path)[kind]().table()
        props = [s.summary.additional_properties for s in table.snapshots()]
    else:
        import deltalake

        props = sorted((e for e in deltalake.DeltaTable(str(tmp_path / "delta_t")).history()),
                       key=lambda e: e["version"])
    assert [int(p[WRITE_ID_KEY]) for p in props] == sorted(log)
    for p in props:
        ev = log[int(p[WRITE_ID_KEY])]
        assert p[OPERATION_KEY] == ev.operation
        assert p[COMMIT_TIME_KEY].startswith(
            __import__("datetime").datetime.fromtimestamp(ev.time, tz=__import__(
                "datetime").timezone.utc).isoformat()[:19])


def test_iceberg_time_travel_by_snapshot_and_delta_by_version(tmp_path):
    """The mapping is in the target: Iceberg snapshot summaries, Delta versions."""
    h = History(tmp_path / "hive", 3)
    for op in ("append", "append", "delete", "append"):
        h.do(op)
    convert(h.path, targets(tmp_path)["iceberg"](), verify=False)
    table = targets(tmp_path)["iceberg"]().table()
    for snap in table.snapshots():
        w = int(snap.summary.additional_properties[WRITE_ID_KEY])
        assert rows(table.scan(snapshot_id=snap.snapshot_id).to_arrow(), False) == h.model_at(w)
    convert(h.path, targets(tmp_path)["delta"](), verify=False)
    import deltalake

    for w in sorted(h.at):
        dt = deltalake.DeltaTable(str(tmp_path / "delta_t"), version=w - 1)  # one per write id
        assert rows(pa.table(dt.to_pyarrow_table()), False) == h.at[w]


def test_without_history_one_snapshot(tmp_path):
    h = History(tmp_path / "hive", 4, partitioned=True)
    h.random_ops(6)
    for kind, target in targets(tmp_path).items():
        result = convert(h.path, target(), history=False)
        assert result.verdict.ok
        versions = target().versions()
        assert [v.write_id for v in versions] == [h.current()]
        assert result.collapsed_up_to == h.current()


def test_a_target_that_exists_or_mirrors_another_table_is_refused(tmp_path):
    a = History(tmp_path / "a", 1)
    a.do("append")
    b = History(tmp_path / "b", 2)
    b.do("append")
    for kind, target in targets(tmp_path).items():
        convert(a.path, target(), verify=False)
        with pytest.raises(InvalidOptionError, match="exists already"):
            convert(a.path, target())
        with pytest.raises(InvalidOptionError, match="mirrors"):
            mirror(b.path, target())


def test_a_mirror_refuses_an_iceberg_table_written_since(tmp_path):
    h = History(tmp_path / "hive", 1)
    h.do("append")
    target = targets(tmp_path)["iceberg"]
    convert(h.path, target(), verify=False)
    table = target().table()
    table.append(table.scan().to_arrow().slice(0, 1))
    h.do("append")
    with pytest.raises(UnsupportedOperationError, match="not made by the converter"):
        mirror(h.path, target())


def test_the_verdict_finds_a_changed_row(tmp_path):
    h = History(tmp_path / "hive", 9, partitioned=True)
    for op in ("append", "append"):
        h.do(op)
    target = targets(tmp_path)["delta"]
    assert convert(h.path, target()).verdict.ok
    import deltalake

    dt = deltalake.DeltaTable(str(tmp_path / "delta_t"))
    victim = pa.table(dt.to_pyarrow_table()).slice(0, 1).to_pylist()[0]
    dt.update(predicate=f"id = {victim['id']}", updates={"v": "'tampered'"})
    from spark_hive_acid.catalog.path import PathTable
    from spark_hive_acid.conversion.verdict import verdict

    found = verdict(PathTable(h.path), target(), samples=0)
    assert not found.ok
    assert found.checks[-1].differing_partitions == [str({"p": victim["p"]})]
    assert found.checks[-1].hive_rows == found.checks[-1].target_rows  # same count, other rows
    with pytest.raises(UnsupportedOperationError, match="not made by the converter"):
        mirror(h.path, target())


def test_the_command_line(tmp_path, capsys):
    from spark_hive_acid.cli import main

    h = History(tmp_path / "hive", 6, partitioned=True)
    for op in ("append", "delete", "append"):
        h.do(op)
    props = iceberg_props(tmp_path)
    catalog = [a for k, v in props.items() for a in ("--catalog", f"{k}={v}")]
    assert main(["convert", h.path, "--iceberg-table", "db.cli", *catalog]) == 0
    out = capsys.readouterr().out
    assert "write id None -> 3, 3 commit(s)" in out and "equal" in out
    assert main(["convert", h.path, "--delta", str(tmp_path / "d"), "--json"]) == 0
    assert __import__("json").loads(capsys.readouterr().out)["verdict"]["ok"]
    h.do("update")
    assert main(["mirror", h.path, "--delta", str(tmp_path / "d")]) == 0
    assert "write id 3 -> 4, 1 commit(s)" in capsys.readouterr().out
    assert main(["convert", h.path, "--delta", str(tmp_path / "d")]) == 2  # exists
    assert "exists already" in capsys.readouterr().err
    assert main(["convert", h.path]) == 2
    assert "give the target" in capsys.readouterr().err
    rows_now = rows(iceberg_target(props, "db.cli").read(
        iceberg_target(props, "db.cli").versions()[-1].ref), True)
    assert rows_now == h.model_at(3)
