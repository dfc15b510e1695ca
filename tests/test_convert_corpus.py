"""Tables Hive wrote (the corpus, ``HIVE_ACID_CORPUS``) converted to Iceberg and Delta: each
version holds the rows the corpus manifest says the table has at that write id."""
from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pytest

from convert_model import iceberg_props
from spark_hive_acid.conversion import convert, delta_target, iceberg_target

pytest.importorskip("pyiceberg")
pytest.importorskip("deltalake")


def _targets(tmp_path, name):
    return (iceberg_target(iceberg_props(tmp_path), f"db.{name}"),
            delta_target(str(tmp_path / f"delta_{name}")))


@pytest.mark.parametrize("kind", [0, 1])
def test_nation25k(corpus_copy, tmp_path, kind):
    """base_2 (25,000 rows), then write id 3 deletes nationkey 5, write id 4 nationkey 19
    (1,000 rows each): three versions, every nationkey 1,000 times except those deleted."""
    result = convert(corpus_copy("nation25k"), _targets(tmp_path, "nation")[kind], samples=5)
    assert result.verdict.ok and [s["writeId"] for s in result.steps] == [2, 3, 4]
    assert [s["operation"] for s in result.steps] == ["insert_overwrite", "delete", "delete"]
    target = _targets(tmp_path, "nation")[kind]
    gone = {2: set(), 3: {5}, 4: {5, 19}}
    for v in target.versions():
        keys = Counter(pa.Table.from_batches(list(target.read(v.ref)))
                       .column("n_nationkey").to_pylist())
        assert keys == {k: 1000 for k in range(25) if k not in gone[v.write_id]}
    # the deletes rewrote only the group holding their rows (the base's one bucket, rowIds < 2**20)
    assert result.steps[1]["filesRemoved"] == 1 and result.steps[1]["rowsWritten"] == 24_000


def test_single_col_and_original_files(corpus_copy, tmp_path):
    """single_col: an insert (write id 2) deleted by write id 4: two versions, 1 row then none.
    alltypes_original: a pre-ACID original file (write id 0), 7,300 rows, every Hive type of it."""
    single, original = corpus_copy("single_col"), corpus_copy("alltypes_original")
    for kind in (0, 1):
        result = convert(single, _targets(tmp_path, f"single{kind}")[kind])
        assert result.verdict.ok and [s["writeId"] for s in result.steps] == [2, 4]
        target = _targets(tmp_path, f"single{kind}")[kind]
        counts = [sum(b.num_rows for b in target.read(v.ref)) for v in target.versions()]
        assert counts == [1, 0]
        result = convert(original, _targets(tmp_path, f"all{kind}")[kind])
        assert result.verdict.ok and result.steps[0]["rowsWritten"] == 7300
        target = _targets(tmp_path, f"all{kind}")[kind]
        table = pa.Table.from_batches(list(target.read(target.versions()[-1].ref)))
        first = table.filter(pa.compute.equal(table.column("id"), 2730)).to_pylist()[0]
        assert str(first["timestamp_col"]) == "2009-10-01 00:00:00"
