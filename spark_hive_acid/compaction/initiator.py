"""When to compact: Hive's Initiator rules, per partition (``Initiator.determineCompactionType``).

For each partition, at the table's current snapshot (``AcidUtils.getAcidState``):

* base size = the bytes of the chosen base's files, or of the original files; delta size = the
  bytes of the chosen deltas and delete deltas; deltas = how many of those directories;
* no base but deltas -> no ratio test; otherwise delta size / base size **>**
  ``hive.compactor.delta.pct.threshold`` (0.1) -> **major**;
* else deltas **>** ``hive.compactor.delta.num.threshold`` (10) -> **minor** (major when there is
  no base, and in an insert-only table);
* else nothing.

Both thresholds can be overridden per table by the properties
``compactorthreshold.hive.compactor.delta.pct.threshold`` and
``compactorthreshold.hive.compactor.delta.num.threshold``, as Hive reads them; a table property
``no_auto_compaction=true`` (any case) turns the Initiator off for the table. Not modelled: the
aborted-transaction threshold (``hive.compactor.abortedtxn.threshold``; vacuum removes aborted
directories), the database-level ``no_auto_compaction``, and two Hive 4 additions: a major
compaction when only obsolete bases remain (``multiBase``), and major instead of minor where Hive
cannot run a minor one (original files: ours can).

:func:`decide` is Spark-free and returns JSON-able dicts (for ``HiveAcidTable.compactIfNeeded``
and the ``hiveacid inspect`` command).
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

from ..catalog.base import TableRef
from ..exceptions import InvalidOptionError
from ..read.listing import PartitionListing
from ..read.plan import TablePlan

NUM_THRESHOLD = "hive.compactor.delta.num.threshold"
PCT_THRESHOLD = "hive.compactor.delta.pct.threshold"
PREFIX = "compactorthreshold."
NO_AUTO_COMPACTION = "no_auto_compaction"
DEFAULT_NUM = 10
DEFAULT_PCT = 0.1


def thresholds(properties: Mapping[str, str]) -> tuple[int, float, bool]:
    """(delta count threshold, delta/base ratio threshold, auto compaction allowed) of a table."""
    props = {str(k).lower(): str(v) for k, v in (properties or {}).items()}
    try:
        num = int(props.get(PREFIX + NUM_THRESHOLD, DEFAULT_NUM))
        pct = float(props.get(PREFIX + PCT_THRESHOLD, DEFAULT_PCT))
    except ValueError as e:
        raise InvalidOptionError(f"Table property {PREFIX}hive.compactor.*: {e}") from None
    return num, pct, props.get(NO_AUTO_COMPACTION, "").strip().lower() != "true"


def decide_partition(listing: PartitionListing, num: int, pct: float,
                     insert_only: bool = False) -> dict[str, Any]:
    """The decision for one partition."""
    st = listing.state
    base_bytes = (sum(f.size for f in listing.dir_files.get(st.base.path, []))
                  if st.base is not None else sum(f.size for f in st.original_files))
    deltas = st.deltas + st.delete_deltas
    delta_bytes = sum(f.size for d in deltas for f in listing.dir_files.get(d.path, []))
    kind: Optional[str] = None
    reason = f"{len(deltas)} delta directories (threshold: more than {num})"
    ratio = None
    no_base = base_bytes == 0 and delta_bytes > 0
    if not no_base and base_bytes > 0:
        ratio = delta_bytes / base_bytes
        if ratio > pct:
            kind, reason = "major", f"delta/base size {ratio:.3f} > {pct}"
    if kind is None and len(deltas) > num:
        kind = "major" if no_base or insert_only else "minor"
        reason = f"{len(deltas)} delta directories > {num}" + (
            " and no base" if no_base else " in an insert-only table" if insert_only else "")
    elif kind is None and no_base:
        reason += "; no base yet"
    return {"decision": kind, "reason": reason, "deltas": len(deltas),
            "deltaBytes": delta_bytes, "baseBytes": base_bytes,
            "ratio": None if ratio is None else round(ratio, 6),
            "base": st.base.name if st.base is not None else None,
            "originalFiles": len(st.original_files)}


def decide_listing(listing: PartitionListing, properties: Mapping[str, str], insert_only: bool = False
                   ) -> dict[str, Any]:
    """The decision for one partition under the table's ``properties`` (thresholds and
    ``no_auto_compaction``), with the thresholds used."""
    num, pct, allowed = thresholds(properties)
    entry = decide_partition(listing, num, pct, insert_only)
    if not allowed:
        entry.update(decision=None, reason=f"table property {NO_AUTO_COMPACTION}=true")
    entry["thresholds"] = {NUM_THRESHOLD: num, PCT_THRESHOLD: pct}
    return entry


def decide(plan: TablePlan, properties: Mapping[str, str], insert_only: bool = False
           ) -> list[dict[str, Any]]:
    """One entry per partition of a planned table (at its current snapshot): ``partition``,
    ``decision`` ("major", "minor" or None), ``reason``, ``deltas``, ``deltaBytes``,
    ``baseBytes``, ``ratio``, ``base``, ``originalFiles``, ``thresholds``."""
    thresholds(properties)  # a bad property fails even for a table without partitions
    out = []
    root = plan.table_path.rstrip("/")
    for pl in plan.partitions:
        p = pl.path.rstrip("/")
        entry = {"partition": "" if p == root else p[len(root):].lstrip("/")}
        entry.update(decide_listing(pl, properties, insert_only))
        out.append(entry)
    return out


def decide_for_table(table: TableRef) -> list[dict[str, Any]]:
    """:func:`decide` for a ``catalog`` table reference, at its current committed snapshot (the
    entry point for ``hiveacid inspect``)."""
    scan = table.scan()
    props = scan.layout.properties if scan.layout is not None else {}
    return decide(scan.plan, props, scan.insert_only)
