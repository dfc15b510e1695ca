"""Small path-mode warehouses for the ``maintain`` tests, written with the library's own writer
(each table keeps its log), and the rows + ROW__IDs a table holds."""
from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pyarrow as pa

from spark_hive_acid.catalog.path import PathTable
from spark_hive_acid.compaction.runner import compact
from spark_hive_acid.direct import read_table, write_table


def append(path: Path, ids: list[int], p: str, *, first: bool = False, pad: int = 0) -> None:
    rng = random.Random(ids[0] if ids else 0)
    data = pa.table({"id": pa.array(ids, pa.int64()),
                     "v": ["%0*x" % (pad, rng.getrandbits(pad * 4)) if pad else f"v{i}"
                           for i in ids],
                     "p": [p] * len(ids)})
    write_table(data, str(path), partition_by=["p"] if first else None)


def needs_major(path: Path, p: str, start: int, n: int = 11) -> None:
    """``n`` > 10 one-row deltas and no base: the Initiator says major."""
    for k in range(n):
        append(path, [start + k], p, first=not path.exists())


def needs_minor(path: Path, p: str, start: int) -> None:
    """A big base and 11 one-row deltas (delta/base far below 0.1): the Initiator says minor."""
    append(path, list(range(start, start + 3000)), p, first=not path.exists(), pad=64)
    compact(PathTable(str(path)), "major", [f"p={p}"])
    for k in range(11):
        append(path, [start + 5000 + k], p)


def healthy(path: Path, p: str, start: int) -> None:
    for k in range(3):
        append(path, [start + k], p, first=not path.exists())


def rows(path: Path) -> Counter:
    t = read_table(str(path), includeRowId="true")
    return Counter((tuple(r["row__id"].values()), r["id"], r["v"], r["p"]) for r in t.to_pylist())


def dirs(path: Path) -> dict[str, list[str]]:
    """Partition -> its directories (what the Initiator looks at)."""
    return {d.name: sorted(x.name for x in d.iterdir()) for d in sorted(path.iterdir())
            if d.is_dir() and not d.name.startswith("_")}
