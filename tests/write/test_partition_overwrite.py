"""Static partition overwrite (``replaceWhere``, ``partitionSpec``, ``write_table(partition=)``),
``truncate`` and ``dropPartitions`` without Spark (issue 26): a random history of them, mixed with
appends and whole-table and dynamic overwrites, against a model of the rows; every version again by
time travel at the end, and the change feed of every step turning one version into the next."""
from __future__ import annotations

import os
import random
from collections import Counter

import pyarrow as pa
import pytest

from spark_hive_acid import read_table, write_table
from spark_hive_acid.catalog import PathTable
from spark_hive_acid.exceptions import InvalidOptionError, SchemaMismatchError
from spark_hive_acid.read.changes import read_changes
from spark_hive_acid.stream.changefeed import batch_change_feed
from spark_hive_acid.tableops import drop_partitions, truncate

Row = tuple  # (id, v, c, d)
PARTS = [(c, d) for c in (1, 2, 3) for d in ("x", "y")]


def _arrow(rows: list[Row], with_c: bool = True, with_d: bool = True) -> pa.Table:
    cols = {"id": pa.array([r[0] for r in rows], pa.int64()),
            "v": pa.array([r[1] for r in rows], pa.string())}
    if with_c:
        cols["c"] = pa.array([r[2] for r in rows], pa.int32())
    if with_d:
        cols["d"] = pa.array([r[3] for r in rows], pa.string())
    return pa.table(cols)


def _rows(path: str, **opts: str) -> Counter:
    t = read_table(path, **opts)
    return Counter(zip(*(t.column(n).to_pylist() for n in ("id", "v", "c", "d"))))


class _History:
    def __init__(self, path: str, rng: random.Random):
        self.path, self.rng = path, rng
        self.model: list[Row] = []
        self.next_id = 0
        self.log: list[str] = []

    def new_rows(self, parts: list[tuple[int, str]], most: int = 4) -> list[Row]:
        out = []
        for _ in range(self.rng.randint(0, most)):
            c, d = self.rng.choice(parts)
            out.append((self.next_id, f"v{self.rng.randrange(100)}", c, d))
            self.next_id += 1
        return out

    def step(self) -> str:
        rng, path = self.rng, self.path
        kind = rng.choice(["append", "append", "spec", "partial", "where", "dynamic", "static",
                           "drop", "truncate"])
        if kind == "append":
            rows = self.new_rows(PARTS) or self.new_rows(PARTS, 1) or [(self.next_id, "a", 1, "x")]
            self.next_id += 1
            write_table(_arrow(rows), path)
            self.model += rows
        elif kind == "spec":  # Hive's PARTITION (c=.., d=..): the data leaves both columns out
            c, d = rng.choice(PARTS + [(9, "new")])
            rows = self.new_rows([(c, d)])
            write_table(_arrow(rows, False, False), path, mode="overwrite",
                        partition={"c": c, "d": d})
            self.model = [r for r in self.model if (r[2], r[3]) != (c, d)] + rows
        elif kind == "partial":  # PARTITION (c=..): every d of that c
            c = rng.choice([1, 2, 3])
            rows = self.new_rows([(c, "x"), (c, "y"), (c, "z")])
            write_table(_arrow(rows, with_c=False), path, mode="overwrite",
                        options={"partitionSpec": f"c={c}"})
            self.model = [r for r in self.model if r[2] != c] + rows
        elif kind == "where":
            lo = rng.choice([1, 2, 3])
            region = [(c, d) for c, d in PARTS if c >= lo and d == "y"]
            rows = self.new_rows(region)
            write_table(_arrow(rows), path, mode="overwrite",
                        options={"replaceWhere": f"c >= {lo} AND d = 'y'"})
            self.model = [r for r in self.model if not (r[2] >= lo and r[3] == "y")] + rows
        elif kind == "dynamic":
            rows = self.new_rows(PARTS)
            write_table(_arrow(rows), path, mode="overwrite", partition_overwrite_mode="dynamic")
            touched = {(r[2], r[3]) for r in rows}
            self.model = [r for r in self.model if (r[2], r[3]) not in touched] + rows
        elif kind == "static":
            rows = self.new_rows(PARTS)
            write_table(_arrow(rows), path, mode="overwrite")
            self.model = rows
        elif kind == "drop":
            c = rng.choice([1, 2, 3])
            condition = rng.choice([f"c = {c}", {"c": c, "d": "x"}, f"c <> {c}"])
            drop_partitions(PathTable(path), condition)
            if isinstance(condition, dict):
                self.model = [r for r in self.model if (r[2], r[3]) != (c, "x")]
            elif "<>" in condition:
                self.model = [r for r in self.model if r[2] == c]
            else:
                self.model = [r for r in self.model if r[2] != c]
        else:
            truncate(PathTable(path))
            self.model = []
        self.log.append(kind)
        return kind


def _feed(path: str, low: int, high: int) -> list[dict]:
    fs, pairs = batch_change_feed({"path": path, "readChangeFeed": "true",
                                   "startingVersion": str(low + 1), "endingVersion": str(high)})
    return [r for spec, t in pairs for batch in read_changes(fs, spec, t) for r in batch.to_pylist()]


def test_random_histories_of_partition_replacements(tmp_path):
    seen: set[str] = set()
    for seed in range(3):
        rng = random.Random(seed)
        path = str(tmp_path / f"t{seed}")
        history = _History(path, rng)
        rows = history.new_rows(PARTS, 6) + [(999, "seed", 1, "x")]
        write_table(_arrow(rows), path, partition_by=["c", "d"])
        history.model = rows
        versions = [(1, Counter(rows))]
        for _ in range(14):
            history.step()
            version = max(h["writeId"] for h in PathTable(path).history())
            assert _rows(path) == Counter(history.model), history.log
            versions.append((version, Counter(history.model)))
        for version, expected in versions:  # time travel: every version again
            assert _rows(path, versionAsOf=str(version)) == expected, (version, history.log)
        for (a, at_a), (b, at_b) in zip(versions, versions[1:]):  # the change feed of each step
            rows = Counter(at_a)
            for ch in _feed(path, a, b):
                key = (ch["id"], ch["v"], ch["c"], ch["d"])
                rows[key] += 1 if ch["_change_type"] in ("insert", "update_postimage") else -1
            assert +rows == at_b and not -rows, (a, b, history.log)
        seen |= set(history.log)
    assert seen == {"append", "spec", "partial", "where", "dynamic", "static", "drop", "truncate"}


def test_a_static_partition_overwrite_of_no_rows_empties_the_partition(tmp_path):
    """What a dynamic overwrite of no rows cannot do: Hive's INSERT OVERWRITE ... PARTITION (c=1)
    with a SELECT that returns nothing leaves partition c=1 empty (Hive 4.1; its layout is
    checked in tests/test_semantics_hive.py)."""
    path = str(tmp_path / "t")
    write_table(_arrow([(1, "a", 1, "x"), (2, "b", 2, "x")]), path, partition_by=["c", "d"])
    empty = _arrow([], with_c=False, with_d=False)
    write_table(_arrow([]), path, mode="overwrite", partition_overwrite_mode="dynamic")
    assert _rows(path) == Counter([(1, "a", 1, "x"), (2, "b", 2, "x")])  # changed nothing
    m = write_table(empty, path, mode="overwrite", partition={"c": 1, "d": "x"})
    assert _rows(path) == Counter([(2, "b", 2, "x")])
    assert sorted(os.listdir(tmp_path / "t" / "c=1" / "d=x")) == [
        "base_0000003", "delta_0000001_0000001_0000"]
    assert m["numInsertedRows"] == 0 and m["writeId"] == 3
    # a partition that does not exist yet is created, empty, as Hive 4.1 does
    write_table(empty, path, mode="overwrite", partition={"c": 5, "d": "new"})
    assert os.listdir(tmp_path / "t" / "c=5" / "d=new") == ["base_0000004"]
    assert _rows(path, versionAsOf="2") == Counter([(1, "a", 1, "x"), (2, "b", 2, "x")])
    ops = [h["operation"] for h in PathTable(path).history()]
    assert ops == ["overwrite", "overwrite", "overwrite", "create"]


def test_truncate_and_drop_partitions_keep_history(tmp_path):
    path = str(tmp_path / "t")
    write_table(_arrow([(1, "a", 1, "x"), (2, "b", 2, "y"), (3, "c", 3, "x")]), path,
                partition_by=["c", "d"])
    m = drop_partitions(PathTable(path), "c >= 2 AND d = 'y'")
    assert m["partitions"] == ["c=2/d=y"] and m["writeId"] == 2
    assert _rows(path) == Counter([(1, "a", 1, "x"), (3, "c", 3, "x")])
    m = truncate(PathTable(path))
    assert sorted(m["partitions"]) == ["c=1/d=x", "c=2/d=y", "c=3/d=x"]
    assert _rows(path) == Counter()
    assert read_table(path).schema.names == ["id", "v", "c", "d"]
    assert _rows(path, versionAsOf="2") == Counter([(1, "a", 1, "x"), (3, "c", 3, "x")])
    assert [h["operation"] for h in PathTable(path).history()] == [
        "truncate", "dropPartitions", "create"]
    deleted = Counter((c["id"], c["_commit_version"]) for c in _feed(path, 1, 3)
                      if c["_change_type"] == "delete")
    assert deleted == Counter({(2, 2): 1, (1, 3): 1, (3, 3): 1})
    # an unpartitioned table truncates its root
    flat = str(tmp_path / "flat")
    write_table(pa.table({"id": [1, 2]}), flat)
    truncate(PathTable(flat))
    assert read_table(flat).num_rows == 0 and read_table(flat, versionAsOf="1").num_rows == 2
    with pytest.raises(InvalidOptionError, match="not partitioned"):
        drop_partitions(PathTable(flat), "id = 1")


def test_an_empty_partitioned_table_keeps_its_partition_columns(tmp_path):
    path = str(tmp_path / "t")
    write_table(_arrow([]), path, partition_by=["c", "d"])
    t = read_table(path)
    assert t.schema.names == ["id", "v", "c", "d"] and t.num_rows == 0
    assert t.schema.field("c").type == pa.int32()


@pytest.mark.parametrize("mode, options, partition, message", [
    ("append", {"replaceWhere": "c = 1"}, None, "use it with mode\\('overwrite'\\)"),
    ("overwrite", {"replaceWhere": "v = 'a'"}, None, "'v' is not a partition column"),
    ("overwrite", {}, {"q": 1}, "names 'q', which is not a partition column"),
    ("overwrite", {"replaceWhere": "c = 1", "partitionSpec": "c=1"}, None, "give one of them"),
    ("dynamic", {"replaceWhere": "c = 1"}, None, "give one of them"),
    ("overwrite", {"replaceWhere": "c = 2"}, None, "A row has c=1, d='x', outside"),
    ("overwrite", {"partitionSpec": "c=2"}, None, "A row has c=1, d='x', outside"),
])
def test_static_partition_overwrites_that_cannot_apply_write_nothing(tmp_path, mode, options,
                                                                     partition, message):
    path = str(tmp_path / "t")
    write_table(_arrow([(1, "a", 2, "x")]), path, partition_by=["c", "d"])
    with pytest.raises(InvalidOptionError, match=message):
        write_table(_arrow([(5, "e", 1, "x")]), path, mode="append" if mode == "append"
                    else "overwrite", options=options, partition=partition,
                    partition_overwrite_mode="dynamic" if mode == "dynamic" else "static")
    assert _rows(path) == Counter([(1, "a", 2, "x")])
    assert [h["state"] for h in PathTable(path).history()][0] in ("aborted", "committed")
    assert not os.path.exists(tmp_path / "t" / "c=1")


def test_an_unpartitioned_table_refuses_a_partition_spec(tmp_path):
    path = str(tmp_path / "flat")
    write_table(pa.table({"id": [1]}), path)
    with pytest.raises(InvalidOptionError, match="is not partitioned"):
        write_table(pa.table({"id": [2]}), path, mode="overwrite", partition={"id": 2})
    with pytest.raises(SchemaMismatchError, match="mergeSchema"):
        write_table(pa.table({"id": [2], "extra": ["x"]}), path)
