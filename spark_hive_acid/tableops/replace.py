"""TRUNCATE and DROP PARTITION as ACID operations: one write id whose ``base_W`` (holding one
empty data file) replaces every partition of the table, or those a condition on the partition
columns selects.

Nothing is deleted: a reader at an older snapshot, time travel (``versionAsOf``) and the change
feed still see the rows (as deletes of that write id); ``vacuum()`` removes the hidden directories
once their retention has passed. The partitions stay (directories, and the metastore's entries):
they are empty. Hive 4 truncates the same way (``hive.acid.truncate.usebase``: a ``base_W``
holding only ``_metadata_acid`` with ``"dataFormat":"truncated"``); the empty data file this
library writes instead is what Hive 4 writes for an INSERT OVERWRITE of no rows, and Hive 3.1,
which truncates by deleting files and knows no "truncated" marker, reads it too.
"""
from __future__ import annotations

import logging
from typing import Any, Mapping, Optional, Union

import pyarrow as pa

from ..acid.layout import TableLayout
from ..acid.partition_condition import PartitionCondition
from ..catalog import TableRef
from ..exceptions import InvalidOptionError
from ..txn.committer import empty_bases
from ..txn.session import WriteSession
from ..write.task_writer import TableSpec

log = logging.getLogger(__name__)

TRUNCATE, DROP_PARTITIONS = "truncate", "dropPartitions"
HINT = "dropPartitions takes a condition on partition columns; to remove rows use delete()"
Condition = Union[str, Mapping[str, Any]]


def table_layout(ref: TableRef) -> TableLayout:
    """The table's layout (a path-mode table Hive wrote is adopted with its reader's columns)."""
    def columns() -> pa.Schema:
        scan = ref.scan()
        return pa.schema([pa.field(c.name, c.type)
                          for c in scan.data_columns + scan.partition_columns])
    return ref.layout(columns)


def partition_condition(layout: TableLayout, condition: Condition, table: str,
                        what: str = DROP_PARTITIONS) -> PartitionCondition:
    """``condition`` (SQL text, or a ``{column: value}`` partition spec) on the partition columns
    of ``layout``; InvalidOptionError when it names anything else."""
    if not layout.partition_columns:
        raise InvalidOptionError(
            f"{what}: table {table} is not partitioned; truncate() empties it, delete(condition) "
            "removes rows")
    columns = list(layout.partition_columns)
    if isinstance(condition, str):
        return PartitionCondition.parse(condition, columns, what, HINT)
    if isinstance(condition, Mapping):
        names = {n.lower() for n, _ in columns}
        unknown = [k for k in condition if str(k).lower() not in names]
        if unknown:
            raise InvalidOptionError(
                f"{what}({dict(condition)}): {', '.join(map(str, unknown))} is not a partition "
                f"column of {table} (they are: {', '.join(n for n, _ in columns)})")
        return PartitionCondition.of_spec(condition, columns, what)
    raise InvalidOptionError(
        f"{what} takes a SQL condition on partition columns (\"day < '2024-01-01'\") or a "
        f"partition spec ({{'day': '2024-01-01'}}), not {type(condition).__name__}")


def replace_with_empty(ref: TableRef, region: Optional[PartitionCondition],
                       operation: str) -> dict[str, Any]:
    """Commit one write id that gives every partition of ``region`` (None: the whole table) an
    empty ``base_W``. Returns the metrics, ``partitions`` (those emptied) and the ids."""
    layout = table_layout(ref)
    fs, location = ref.location()
    spec = TableSpec.of(location, layout)
    txn = ref.begin(operation)
    with WriteSession(fs, location, txn, operation) as session:
        empty = empty_bases(txn, fs, spec, [], replace_all=region is None, region=region)
        result = session.commit(spec, [], empty_bases=empty, static_overwrite=region is None,
                                replaced=region)
    log.info("%s of %s: %d partition(s) emptied by write id %d", operation, ref.display,
             len(empty), txn.write_id)
    return dict(result.metrics, partitions=sorted(p for p in empty if p), **txn.ids())


def truncate(ref: TableRef) -> dict[str, Any]:
    """Empty the whole table (every partition) as one ACID write."""
    return replace_with_empty(ref, None, TRUNCATE)


def drop_partitions(ref: TableRef, condition: Condition) -> dict[str, Any]:
    """Empty the partitions ``condition`` selects as one ACID write."""
    region = partition_condition(table_layout(ref), condition, ref.display)
    return replace_with_empty(ref, region, DROP_PARTITIONS)
