"""Every table in the Hive-written corpus (`HIVE_ACID_CORPUS`, default ../shared/corpus) reads exactly
as its MANIFEST.md says."""
import collections
import datetime

import pytest

from spark_hive_acid.direct import read_table

MAX = 9223372036854775807


def _nation_counts(table):
    return collections.Counter(table.column("n_nationkey").to_pylist())


class TestNation25k:
    def test_all_committed(self, corpus_copy):
        t = read_table(corpus_copy("nation25k"))
        assert t.num_rows == 23_000
        counts = _nation_counts(t)
        assert 5 not in counts and 19 not in counts
        assert set(counts.values()) == {1000} and len(counts) == 23
        assert t.schema.names == ["n_nationkey", "n_name", "n_regionkey", "n_comment"]

    def test_snapshot_up_to_3(self, corpus_copy):
        t = read_table(corpus_copy("nation25k"), validWriteIds=f"default.nation25k:3:{MAX}::")
        assert t.num_rows == 24_000 and _nation_counts(t)[19] == 1000 and 5 not in _nation_counts(t)

    def test_snapshot_up_to_2(self, corpus_copy):
        t = read_table(corpus_copy("nation25k"), validWriteIds=f"default.nation25k:2:{MAX}::")
        assert t.num_rows == 25_000

    def test_row_ids_of_nation_0(self, corpus_copy):
        t = read_table(corpus_copy("nation25k"), includeRowId=True)
        rows = [r for r in t.to_pylist() if r["n_nationkey"] == 0]
        assert len(rows) == 1000
        assert sorted(r["row__id"]["rowId"] for r in rows) == list(range(1000))
        assert {(r["row__id"]["writeId"], r["row__id"]["bucketId"]) for r in rows} == {(2, 536870912)}

    def test_stripe_splits_give_the_same_rows(self, corpus_copy):
        from spark_hive_acid.catalog import open_scan

        path = corpus_copy("nation25k")
        scan = open_scan({"path": path, "splitSize": "1"})
        assert len(scan.plan.slices) == 5  # one slice per stripe
        assert scan.to_arrow().num_rows == 23_000


class TestSingleCol:
    @pytest.mark.parametrize("name", ["single_col", "single_col_minor"])
    def test_all_committed_is_empty(self, corpus_copy, name):
        assert read_table(corpus_copy(name)).num_rows == 0

    @pytest.mark.parametrize("name", ["single_col", "single_col_minor"])
    def test_snapshot_up_to_3(self, corpus_copy, name):
        t = read_table(corpus_copy(name), validWriteIds=f"default.t:3:{MAX}::")
        assert t.to_pylist() == [{"col": 2}]


class TestAllTypesOriginal:
    def test_rows_and_row_ids(self, corpus_copy):
        t = read_table(corpus_copy("alltypes_original"), includeRowId=True)
        assert t.num_rows == 7300
        first = t.slice(0, 1).to_pylist()[0]
        assert first["id"] == 2730
        assert first["timestamp_col"] == datetime.datetime(2009, 10, 1, 0, 0)
        by_id = {r["id"]: r["row__id"] for r in t.select(["row__id", "id"]).to_pylist()}
        for i in range(10):
            assert by_id[i] == {"writeId": 0, "bucketId": 536870912, "rowId": 4030 + i}
        positions = [r["rowId"] for r in t.column("row__id").to_pylist()]
        assert positions == list(range(7300))


@pytest.mark.spark
class TestCorpusThroughSpark:
    def test_nation_counts(self, spark, corpus_copy):
        path = corpus_copy("nation25k")
        df = spark.read.format("hiveacid").load(path)
        assert df.count() == 23_000
        assert df.filter("n_nationkey = 5").count() == 0
        assert df.filter("n_nationkey = 0").count() == 1000
        df3 = spark.read.format("hiveacid").option("validWriteIds", f"default.nation25k:3:{MAX}::").load(path)
        assert df3.count() == 24_000

    def test_original_file_types(self, spark, corpus_copy):
        df = spark.read.format("hiveacid").load(corpus_copy("alltypes_original"))
        assert df.schema["timestamp_col"].dataType.typeName() == "timestamp_ntz"
        row = df.filter("id = 2730").collect()[0]
        assert row.timestamp_col == datetime.datetime(2009, 10, 1, 0, 0)
        assert df.count() == 7300


@pytest.mark.parametrize("name", ["nation25k", "alltypes_original"])
def test_small_assembly_chunks_give_the_same_rows_and_row_ids(corpus_copy, monkeypatch, name):
    from spark_hive_acid.read import reader

    path = corpus_copy(name)
    whole = read_table(path, includeRowId=True)
    monkeypatch.setattr(reader, "ASSEMBLY_ROWS", 777)
    chunked = read_table(path, includeRowId=True)
    assert chunked.equals(whole)
    assert max(b.num_rows for b in chunked.to_batches()) <= 777
