"""Pushed filters: exact three-valued evaluation, and stripes skipped only when stats prove it."""
import datetime
import decimal

import pyarrow as pa
import pyarrow.orc as po
import pytest
from pyspark.sql.datasource import (EqualNullSafe, EqualTo, GreaterThan, In, IsNotNull, IsNull,
                                    LessThanOrEqual, Not, StringStartsWith)

from spark_hive_acid.read.pushdown import DataPredicate, compile_filter, evaluate_all
from spark_hive_acid.read.reader import TaskReader
from spark_hive_acid.catalog import open_scan
from spark_hive_acid.read.stripe_stats import cond_rules_out

TYPES = {"i": pa.int32(), "s": pa.string(), "d": pa.date32(), "m": pa.decimal128(10, 2),
         "a": pa.list_(pa.int32())}
COLS = {"i": pa.array([1, 2, None, 4], pa.int32()), "s": pa.array(["ab", None, "b", "abc"])}


def _mask(f):
    c = compile_filter(f, TYPES)
    assert c is not None, f
    return evaluate_all([c], COLS).to_pylist()


def test_three_valued_logic_matches_sql():
    assert _mask(EqualTo(("i",), 2)) == [False, True, None, False]
    assert _mask(Not(EqualTo(("i",), 2))) == [True, False, None, True]
    assert _mask(In(("i",), [1, 4])) == [True, False, None, True]
    assert _mask(Not(In(("i",), [1, 4]))) == [False, True, None, False]  # NULL stays unknown
    assert _mask(IsNull(("i",))) == [False, False, True, False]
    assert _mask(EqualNullSafe(("i",), None)) == [False, False, True, False]
    assert _mask(EqualNullSafe(("i",), 1)) == [True, False, False, False]
    assert _mask(StringStartsWith(("s",), "ab")) == [True, None, False, True]


def test_filters_that_cannot_be_exact_are_refused():
    assert compile_filter(In(("i",), [1, None]), TYPES) is None
    assert compile_filter(EqualTo(("a",), [1]), TYPES) is None  # not a primitive column
    assert compile_filter(EqualTo(("x", "y"), 1), TYPES) is None  # nested attribute
    assert compile_filter(EqualTo(("i",), "one"), TYPES) is None  # value of another type
    assert compile_filter(EqualTo(("nope",), 1), TYPES) is None


def test_stats_rules():
    stats = {"has_null": False, "number_of_values": 10, "minimum": 5, "maximum": 9}
    c = lambda f: compile_filter(f, TYPES)  # noqa: E731
    assert cond_rules_out(c(EqualTo(("i",), 4)), stats)
    assert not cond_rules_out(c(EqualTo(("i",), 5)), stats)
    assert cond_rules_out(c(GreaterThan(("i",), 9)), stats)
    assert not cond_rules_out(c(GreaterThan(("i",), 8)), stats)
    assert cond_rules_out(c(LessThanOrEqual(("i",), 4)), stats)
    assert cond_rules_out(c(In(("i",), [1, 2, 10])), stats)
    assert cond_rules_out(c(IsNull(("i",))), stats)
    assert not cond_rules_out(c(Not(EqualTo(("i",), 7))), stats)  # NOT is never used to skip
    assert cond_rules_out(c(EqualTo(("i",), 1)), None)  # column absent from the file: all null
    assert not cond_rules_out(c(IsNull(("i",))), None)
    assert not cond_rules_out(c(IsNotNull(("i",))), {"number_of_values": 3, "has_null": True})
    dstats = {"number_of_values": 2, "minimum": datetime.date(2020, 1, 1), "maximum": datetime.date(2020, 12, 31)}
    assert cond_rules_out(c(GreaterThan(("d",), datetime.date(2021, 1, 1))), dstats)
    mstats = {"number_of_values": 2, "minimum": decimal.Decimal("1.00"), "maximum": decimal.Decimal("2.00")}
    assert cond_rules_out(c(EqualTo(("m",), decimal.Decimal("3.00"))), mstats)


@pytest.mark.parametrize("value,expected_stripes", [(7, [1]), (19, []), (0, [0])])
def test_stripes_skipped_on_the_corpus_table(corpus_copy, monkeypatch, value, expected_stripes):
    """nation25k's base has 5 stripes of 5 nations each; nation 19 is deleted."""
    scan = open_scan({"path": corpus_copy("nation25k")})
    conds = (compile_filter(EqualTo(("n_nationkey",), value),
                            {c.name.lower(): c.type for c in scan.data_columns}),)
    pred = DataPredicate(conds, tuple((c.name.lower(), i) for i, c in enumerate(scan.data_columns)))
    schema = pa.schema([pa.field(c.name, c.type) for c in scan.data_columns])
    reader = TaskReader(scan.fs, scan.read_spec(schema, pred, pred.column_indexes))
    read = []
    original = po.ORCFile.read_stripe

    def spy(self, n, columns=None):
        read.append(n)
        return original(self, n, columns=columns)

    monkeypatch.setattr(po.ORCFile, "read_stripe", spy)
    rows = [r for t in scan.tasks() for b in reader.read(t) for r in b.to_pylist()]
    assert {r["n_nationkey"] for r in rows} == ({value} if value != 19 else set())
    assert len(rows) == (1000 if value != 19 else 0)
    base_reads = [n for n in read]  # delete files are read with ORCFile.read, not read_stripe
    assert base_reads == expected_stripes if value != 19 else base_reads == [3]
