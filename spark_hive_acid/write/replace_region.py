"""Static partition overwrite: which partitions an overwrite with ``replaceWhere`` or
``partitionSpec`` replaces (docs/writing.md, "Static partition overwrite").

Hive's ``INSERT OVERWRITE TABLE t PARTITION (c=1) SELECT ...`` replaces exactly partition ``c=1``,
also when the SELECT returns no rows: Hive 4 then writes ``base_W`` with an empty file there, and
creates the partition if it did not exist (Hive 3.1.3 leaves the partition as it was, a bug this
library does not copy). With some of the partition columns, as Spark's static mode does, every
partition matching them is replaced. ``replaceWhere`` (delta-spark's name) takes any condition on
the partition columns (``acid.partition_condition``). Every row written must be inside the region.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..acid.layout import TableLayout
from ..acid.partition_condition import PartitionCondition
from ..acid.partitions import DEFAULT_PARTITION, partition_name
from ..exceptions import InvalidOptionError
from .options import WriteOptions

HINT = "it may name partition columns only; to remove rows by other columns use delete()"


@dataclass(frozen=True)
class Replacement:
    """The region an overwrite replaces, and what follows from how it was given."""

    region: PartitionCondition
    option: str  # replaceWhere | partitionSpec: how errors name it
    constants: tuple[tuple[str, Optional[str]], ...] = ()  # spec columns the data may leave out
    ensure: tuple[str, ...] = ()  # a full spec's partition: created even when it gets no rows


def replacement(layout: TableLayout, opts: WriteOptions, overwrite: bool,
                table: str) -> Optional[Replacement]:
    """The region of ``opts`` (None: not a static partition overwrite); InvalidOptionError when
    the options cannot apply to this write."""
    if opts.replace_where is None and not opts.partition_spec:
        return None
    option = "replaceWhere" if opts.replace_where is not None else "partitionSpec"
    if not overwrite:
        raise InvalidOptionError(
            f"Option {option} says which partitions an overwrite replaces: use it with "
            "mode('overwrite') (an append adds rows and replaces nothing). Nothing was written.")
    if not layout.partition_columns:
        raise InvalidOptionError(
            f"Option {option}: table {table} is not partitioned, so an overwrite replaces the "
            "whole table (drop the option), or delete rows with HiveAcidTable.delete(condition)."
            " Nothing was written.")
    columns = [(n, t) for n, t in layout.partition_columns]
    if opts.replace_where is not None:
        return Replacement(PartitionCondition.parse(opts.replace_where, columns,
                                                 "Option replaceWhere", HINT), option)
    names = {n.lower(): n for n, _ in columns}
    spec: dict[str, Optional[str]] = {}
    for k, v in opts.partition_spec.items():
        if k.lower() not in names:
            raise InvalidOptionError(
                f"Option partitionSpec names '{k}', which is not a partition column of {table} "
                f"(they are: {', '.join(names.values())}). Nothing was written.")
        spec[names[k.lower()]] = None if v in ("", DEFAULT_PARTITION) else v
    region = PartitionCondition.of_spec(spec, columns, "Option partitionSpec")
    full = len(spec) == len(columns)
    ensure = (partition_name([n for n, _ in columns], [spec[n] for n, _ in columns]),) \
        if full else ()
    return Replacement(region, option, tuple(spec.items()), ensure)


def outside(values: dict, rep: Replacement) -> InvalidOptionError:
    """The error for a row outside the replaced region."""
    shown = ", ".join(f"{k}={v!r}" for k, v in values.items())
    return InvalidOptionError(
        f"A row has {shown}, outside the partitions this overwrite replaces ({rep.option}: "
        f"{rep.region.text}): every row must be inside them. Filter the data (df.where(...)) or "
        "widen the condition. Nothing was written.")
