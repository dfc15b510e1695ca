"""Table and partition statistics a write must not leave stale (Hive 4's transactional stats).

Hive 4 answers ``count(*)``, ``min`` and ``max`` of a transactional table from the metastore's
statistics (``StatsOptimizer``) when they are "compliant" with the query's snapshot: the
``COLUMN_STATS_ACCURATE`` parameter says they are accurate and the write id that recorded them
is valid in the snapshot (``ObjectStore.isCurrentStatsValidForTheQuery``). A write by anything
but Hive leaves both as they were, so after it Hive answers from the old numbers: shown with
Hive 4.1's own engine in tests/test_metastore_stats.py. Every write of this library therefore
removes ``COLUMN_STATS_ACCURATE`` from the table (or the partitions it wrote) inside its
transaction, as Hive does for a write that does not recompute them
(``StatsSetupConst.setBasicStatsState(params, FALSE)``): an ``alter_table_req`` /
``alter_partitions_req`` carrying the write id and the transaction's write-id list, without which
Hive 4 refuses to change the stats state of a transactional table. The alter records the write
id with the statistics, so a snapshot that cannot see the write does not trust them either.

Hive 2.3 and 3.1 never answer a query over a transactional table from statistics
(``StatsOptimizer``: "is ACID table. Skip StatsOptimizer."): nothing is done there.
"""
from __future__ import annotations

import logging
from typing import Any, Optional, Sequence

from ._thrift import bindings
from ._wire import RawStruct, WithFields, void_call
from .tables import PROCESSOR_CAPABILITIES, PROCESSOR_ID

log = logging.getLogger(__name__)

STATS_ACCURATE = "COLUMN_STATS_ACCURATE"


def invalidate_stats(client: Any, db: str, tbl: str, partitions: Optional[Sequence[str]],
                     write_id: int, valid_write_ids: str) -> int:
    """Remove ``COLUMN_STATS_ACCURATE`` from ``db.tbl`` (``partitions`` None) or from the named
    partitions, as write ``write_id`` of the open transaction whose write-id list of the table is
    ``valid_write_ids``. Returns how many objects had it. Does nothing below Hive 4."""
    if client.server_kind != "hive4":
        return 0
    _, tt = bindings()
    errors = {1: tt.InvalidOperationException, 2: tt.MetaException}
    if partitions is None:
        table = client._raw_table(db, tbl)
        if STATS_ACCURATE not in (table.parameters or {}):
            return 0
        table.parameters = {k: v for k, v in table.parameters.items() if k != STATS_ACCURATE}
        req = RawStruct("AlterTableRequest", [
            (2, "string", db), (3, "string", tbl),
            (4, "struct", WithFields(table, [(19, "i64", write_id)])),
            (6, "i64", write_id), (7, "string", valid_write_ids),
            (8, "list<string>", list(PROCESSOR_CAPABILITIES)), (9, "string", PROCESSOR_ID)])
        client._call(void_call("alter_table_req", RawStruct("args", [(1, "struct", req)]), errors),
                     what=f"invalidating the statistics of {db}.{tbl}", table=f"{db}.{tbl}")
        log.info("write %d of %s.%s: table statistics marked stale", write_id, db, tbl)
        return 1
    if not partitions:
        return 0
    parts = client._call("get_partitions_by_names", db, tbl, list(partitions),
                         what=f"partitions of {db}.{tbl}", retry=True, table=f"{db}.{tbl}")
    stale = [p for p in parts if STATS_ACCURATE in (p.parameters or {})]
    if not stale:
        return 0
    for p in stale:
        p.parameters = {k: v for k, v in p.parameters.items() if k != STATS_ACCURATE}
    req = RawStruct("AlterPartitionsRequest", [
        (2, "string", db), (3, "string", tbl),
        (4, "list<struct>", [WithFields(p, [(10, "i64", write_id)]) for p in stale]),
        (6, "i64", write_id), (7, "string", valid_write_ids)])
    client._call(void_call("alter_partitions_req", RawStruct("args", [(1, "struct", req)]),
                           errors),
                 what=f"invalidating the statistics of {len(stale)} partitions of {db}.{tbl}",
                 table=f"{db}.{tbl}")
    log.info("write %d of %s.%s: statistics of %d partitions marked stale", write_id, db, tbl,
             len(stale))
    return len(stale)


def stats_stale_after(txn: Any) -> int:
    """:func:`invalidate_stats` for what an open write transaction (``txn.hms.HmsTransaction``)
    wrote: the table, or the partitions it registered. Does nothing below Hive 4."""
    client = txn.client
    if client.server_kind != "hive4":
        return 0
    table = txn.table or client.get_table(txn.db, txn.tbl)
    write_ids, _ = txn.read_snapshot()
    return invalidate_stats(client, txn.db, txn.tbl,
                            list(txn.partitions_written) if table.is_partitioned else None,
                            int(txn.write_id), write_ids.to_string())
