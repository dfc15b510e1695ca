"""Conditions on partition columns (``acid.partition_condition``): what ``replaceWhere``,
``partitionSpec`` and ``dropPartitions`` select, evaluated without Spark. Random conditions are
checked against Spark SQL's own evaluation of the same text over the same partition values."""
from __future__ import annotations

import datetime as dt
import random

import pytest

from spark_hive_acid.acid.partition_condition import PartitionCondition
from spark_hive_acid.exceptions import InvalidOptionError

COLUMNS = [("p", "int"), ("d", "string"), ("day", "date")]
VALUES = [(p, d, day) for p in (None, -1, 0, 1, 7, 12) for d in (None, "a", "b", "o'k", "ab")
          for day in (None, dt.date(2024, 1, 1), dt.date(2024, 2, 29))]


def _random_condition(rng: random.Random, depth: int = 0) -> str:
    if depth < 2 and rng.random() < 0.4:
        op = rng.choice(["AND", "OR"])
        a, b = _random_condition(rng, depth + 1), _random_condition(rng, depth + 1)
        text = f"({a}) {op} ({b})"
        return f"NOT ({text})" if rng.random() < 0.2 else text
    col = rng.choice(["p", "d", "day"])
    lit = {"p": lambda: str(rng.choice([-1, 0, 1, 5, 7, 12])),
           "d": lambda: "'" + rng.choice(["a", "b", "o''k", "ab", "c"]) + "'",
           "day": lambda: "DATE '" + rng.choice(["2024-01-01", "2024-02-29", "2024-01-15"]) + "'"
           }[col]
    form = rng.randrange(6)
    if form == 0:
        return f"{col} {rng.choice(['=', '!=', '<>', '<', '<=', '>', '>='])} {lit()}"
    if form == 1:
        return f"{lit()} {rng.choice(['=', '<', '>='])} {col}"
    if form == 2:
        neg = "NOT " if rng.random() < 0.3 else ""
        return f"{col} {neg}IN ({', '.join(lit() for _ in range(rng.randint(1, 3)))})"
    if form == 3:
        return f"{col} IS {'NOT ' if rng.random() < 0.5 else ''}NULL"
    if form == 4:
        lo, hi = sorted([lit(), lit()])
        return f"{col} BETWEEN {lo} AND {hi}"
    return f"`{col}` = {lit()}"


@pytest.mark.spark
def test_random_conditions_select_what_spark_sql_selects(spark):
    rng = random.Random(26)
    conditions = [_random_condition(rng) for _ in range(120)]
    df = spark.createDataFrame(VALUES, "p int, d string, day date")
    got = df.selectExpr(*[f"coalesce({c}, false) AS c{i}" for i, c in enumerate(conditions)]
                        ).collect()
    for i, text in enumerate(conditions):
        cond = PartitionCondition.parse(text, COLUMNS)
        spark_says = [row[i] for row in got]
        ours = [cond.matches({"p": p, "d": d, "day": day}) for p, d, day in VALUES]
        assert ours == spark_says, text
    assert sum(any(r[i] for r in got) for i in range(len(conditions))) > 60  # not all empty


def test_partition_names_are_read_with_the_columns_types():
    cond = PartitionCondition.parse("p >= 10 AND d = 'a/b' AND day < '2024-02-01'", COLUMNS)
    assert cond.matches_name("p=12/d=a%2Fb/day=2024-01-31")
    assert not cond.matches_name("p=9/d=a%2Fb/day=2024-01-31")  # 9 < 10 as numbers, not text
    assert not cond.matches_name("p=12/d=a%2Fb/day=2024-02-01")
    assert PartitionCondition.parse("p IS NULL", COLUMNS).matches_name(
        "p=__HIVE_DEFAULT_PARTITION__/d=a/day=2024-01-01")
    assert not cond.matches_name("")  # the unpartitioned table is no partition of a region


def test_a_spec_is_a_conjunction_of_equalities():
    spec = PartitionCondition.of_spec({"P": 7, "d": "o'k"}, COLUMNS)
    assert spec.matches({"p": 7, "d": "o'k", "day": None})
    assert not spec.matches({"p": 7, "d": "ok", "day": None})
    assert PartitionCondition.from_json(spec.to_json()) == spec


@pytest.mark.parametrize("text, message", [
    ("qty > 1", "'qty' is not a partition column (the partition columns: p, d, day)"),
    ("p = 'x'", "'x' is not a value of p (int)"),
    ("p = d", "not with another column"),
    ("p", "expected a comparison"),
    ("", "the condition is empty"),
    ("p = 1 AND", "ends too early"),
    ("p = 1)", "unexpected ')'"),
])
def test_conditions_that_cannot_apply_name_the_problem(text, message):
    with pytest.raises(InvalidOptionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        PartitionCondition.parse(text, COLUMNS, "Option replaceWhere")
