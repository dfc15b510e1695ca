"""Insert-only tables we write, read by Hive's own code: Hive 3.1.3 and 4.1.0's insert-only read
(tests/hive_jvm: ``HiveInputFormat.processPathsForMmRead`` picks the directories, then the
table's input format reads them, as a Hive 3 / 4 map task does), and Hive 2.3.10 (in the pyspark
jars) as follows.

Hive 2.3 predates insert-only tables: its ACID reader refuses them (``Unexpected value
insert_only for ACID operational properties``, or, reading them as full ACID, ``Can't find user
metadata hive.acid.key.index``). What Hive 3 does for an insert-only read
(``HiveInputFormat.processPathsForMmRead``) is Hive's snapshot selection followed by a plain read
of every file in the chosen directories, and both halves are in Hive 2.3: ``AcidUtils.getAcidState``
picks the directories (the directory grammar has not changed) and the plain ``OrcInputFormat`` /
``MapredParquetInputFormat`` + ``ParquetHiveSerDe`` read the files. So at every write id of a
randomized history the rows Hive reads that way must be the model's rows.
"""
from __future__ import annotations

import datetime as dt
import decimal
import os
import random
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

from hive_jvm.fixtures import newer_hives  # noqa: F401
from hive_jvm.oracle import write_ids
from hive_jvm.server import HiveCallError
from hive_ref import HiveReferenceError, valid_txns
from insert_only_layout import apply_write
from spark_hive_acid import read_table, write_table

pytestmark = [pytest.mark.hive, pytest.mark.hive31, pytest.mark.hive41]
MAX = 9223372036854775807
COLUMNS = [("id", "bigint"), ("name", "string"), ("amount", "decimal(12,2)"), ("day", "date"),
           ("ts", "timestamp"), ("score", "double"), ("flag", "boolean"), ("small", "smallint"),
           ("raw", "binary"), ("tags", "array<int>"), ("attrs", "map<string,int>"),
           ("pt", "struct<x:int,y:string>")]
SCHEMA = pa.schema([
    ("id", pa.int64()), ("name", pa.string()), ("amount", pa.decimal128(12, 2)),
    ("day", pa.date32()), ("ts", pa.timestamp("us")), ("score", pa.float64()),
    ("flag", pa.bool_()), ("small", pa.int16()), ("raw", pa.binary()),
    ("tags", pa.list_(pa.int32())), ("attrs", pa.map_(pa.string(), pa.int32())),
    ("pt", pa.struct([("x", pa.int32()), ("y", pa.string())])), ("p", pa.string()),
])
PARTS = ["a", "b", "c"]


def _row(rng: random.Random, i: int) -> dict:
    """Values both calendars agree on (Hive 2.3 reads dates and timestamps before 1582 through
    the hybrid calendar; tests/hive_ref's docstring lists its quirks)."""
    def maybe(v):
        return None if rng.random() < 0.15 else v
    return {
        "id": i, "name": maybe(rng.choice(["", "a", "é ü", "tab\there"])),
        "amount": maybe(decimal.Decimal(rng.randrange(-10**11, 10**11)).scaleb(-2)),
        "day": maybe(dt.date(1600, 1, 1) + dt.timedelta(days=rng.randrange(2_900_000))),
        "ts": maybe(dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=rng.randrange(10**16))),
        "score": maybe(rng.uniform(-1e9, 1e9)), "flag": maybe(rng.random() < 0.5),
        "small": maybe(rng.randrange(-2**15, 2**15)),
        "raw": maybe(bytes(rng.randrange(256) for _ in range(rng.randrange(5)))),
        "tags": maybe([rng.randrange(-5, 5) for _ in range(rng.randrange(3))]),
        "attrs": maybe([(f"k{j}", rng.randrange(9)) for j in range(rng.randrange(3))]),
        "pt": maybe({"x": maybe(rng.randrange(9)), "y": maybe("s")}),
        "p": rng.choice(PARTS),
    }


def _canon(r: dict) -> tuple:
    """A row as one hashable value, the same for our model's rows and Hive's."""
    out = []
    for name, _ in COLUMNS:
        v = r[name]
        if name == "attrs" and v is not None:
            v = tuple(sorted(v.items() if isinstance(v, dict) else v))
        elif name == "pt" and v is not None:
            v = (v["x"], v["y"]) if isinstance(v, dict) else tuple(v)
        elif name == "tags" and v is not None:
            v = tuple(v)
        out.append((name, v))
    return tuple(out) + (("p", r["p"]),)


def _hive_rows(hive_ref, root: Path, fmt: str, w: int) -> Counter:
    """What Hive reads at write id ``w``: per partition, its getAcidState, then its plain reader."""
    got: Counter = Counter()
    for part in sorted(os.listdir(root)):
        if not part.startswith("p="):
            continue
        state = hive_ref.acid_state(root / part, valid_txns(w))
        dirs = ([state["base"]] if state["base"] else []) + [d["path"] for d in state["deltas"]]
        assert not any(d["delete"] for d in state["deltas"])
        if not dirs:
            continue
        rows = hive_ref.read_plain([root / part / d for d in dirs], COLUMNS, fmt, native=True)
        got.update(_canon(dict(zip([c for c, _ in COLUMNS], r), p=part[2:])) for r in rows)
    return got


def _newer_rows(hive, root: Path, fmt: str, w: int) -> Counter:
    """What Hive 3.1 / 4.1's insert-only read returns at write id ``w``, per partition."""
    got: Counter = Counter()
    for part in sorted(os.listdir(root)):
        if part.startswith("p="):
            _, rows = hive.read_mm(root / part, COLUMNS, write_ids=write_ids(w), fmt=fmt,
                                   native=True)
            got.update(_canon(dict(zip([c for c, _ in COLUMNS], r), p=part[2:])) for r in rows)
    return got


def _older_base(root: Path, w: int) -> bool:
    return any(n.startswith("base_") and int(n[5:]) > w
               for d in root.iterdir() if d.name.startswith("p=") for n in os.listdir(d))


@pytest.mark.parametrize("fmt,seed", [("orc", 21), ("parquet", 22)])
def test_hive_reads_every_snapshot_of_a_random_history(hive_ref, newer_hives, tmp_path, fmt,  # noqa: F811
                                                       seed):
    rng = random.Random(seed)
    root = tmp_path / "t"
    parts: dict[str, list] = {}
    history: list[Counter] = [Counter()]
    next_id = 0
    ops = ["append"] + [rng.choice(["append", "append", "overwrite", "dynamic"]) for _ in range(6)]
    for step, op in enumerate(ops):
        n = rng.choice([0, 3, 25]) if step else 25
        rows = [_row(rng, next_id + i) for i in range(n)]
        next_id += n
        write_table(pa.Table.from_pylist(rows, schema=SCHEMA), str(root),
                    mode="append" if op == "append" else "overwrite",
                    partition_overwrite_mode="dynamic" if op == "dynamic" else "static",
                    **(dict(partition_by=["p"], options={
                        "fileFormat": fmt, "tableProperties": "transactional_properties=insert_only"})
                       if step == 0 else {}))
        parts = apply_write(parts, op, rows, lambda r: r["p"])
        history.append(Counter(_canon(r) for rs in parts.values() for r in rs))
    checked = []
    for w in range(1, len(history)):
        ours = Counter(_canon(r) for r in read_table(
            str(root), validWriteIds=f"default.t:{w}:{MAX}::").to_pylist())
        assert ours == history[w], f"our reader, write id {w}"
        for hive in newer_hives:
            try:
                got = _newer_rows(hive, root, fmt, w)
            except HiveCallError as e:
                # Hive 3.1 (not 4.1) refuses a snapshot older than every base, whatever made it
                assert hive.version.startswith("3.") and "Not enough history" in str(e), e
                assert _older_base(root, w)
                continue
            assert got == history[w], f"{hive}'s insert-only read, write id {w} ({ops[:w]})"
        try:
            hive = _hive_rows(hive_ref, root, fmt, w)
        except HiveReferenceError as e:
            # Hive 2.3 refuses a snapshot older than every base, even an insert-overwrite base
            assert "Not enough history" in str(e), e
            assert _older_base(root, w)
            continue
        assert hive == history[w], f"Hive's reader, write id {w} ({ops[:w]})"
        checked.append(w)
    # the current snapshot and every one since the oldest base are checked against Hive itself
    assert checked[-1] == len(history) - 1 and len(checked) >= 3, checked
