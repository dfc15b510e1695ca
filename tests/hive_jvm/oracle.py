"""Hive 3.1 / 4.1's own readers, snapshot selection and bucket hashes as test oracles.

A :class:`HiveOracle` wraps one running :class:`~hive_jvm.server.HiveJvm`. Values travel in the
forms of :mod:`hive_ref` (its ``_Schema`` converts them both ways): decimals as text at the
column's scale, dates ``'YYYY-MM-DD'``, timestamps ``'YYYY-MM-DD HH:MM:SS[.f]'`` (Hive 3+'s
proleptic calendar, UTC wall clock), binary as bytes, structs as tuples, maps as dicts.

Snapshots are Hive 3's strings: a ``ValidWriteIdList`` (``db.table:HWM:minOpen:open:aborted``,
see :func:`write_ids`) and, for Hive 4's ``_vT`` visibility check, a ``ValidTxnList``
(:data:`ALL_TXNS` trusts every transaction).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

from hive_ref import _Schema

from .server import HiveJvm

__all__ = ["HiveOracle", "write_ids", "ALL_TXNS", "MAX"]

MAX = 9223372036854775807
#: a ValidTxnList in which every transaction is committed
ALL_TXNS = f"{MAX}:{MAX}::"
Column = Sequence[str]


def write_ids(hwm: int = MAX, open_ids: Iterable[int] = (), aborted: Iterable[int] = (),
              table: str = "default.t", min_open: Optional[int] = None) -> str:
    """A ``ValidReaderWriteIdList`` string, as ``writeToString`` prints it."""
    open_ids, aborted = sorted(set(open_ids)), sorted(set(aborted))
    if min_open is None:
        min_open = min(open_ids) if open_ids else MAX
    return (f"{table}:{hwm}:{min_open}:{','.join(map(str, open_ids))}:"
            f"{','.join(map(str, aborted))}")


def snapshot_write_ids(snap, table: str = "default.t") -> str:
    """The library's snapshot (``acid.snapshot.ValidIdList``) as Hive's string for ``table``."""
    aborted = sorted(snap.aborted)
    open_ids = [e for e in snap.exceptions if e not in snap.aborted]
    return write_ids(snap.high_watermark, open_ids, aborted, table, min_open=snap.min_open)


class HiveOracle:
    """Hive ``name`` (``"hive31"`` / ``"hive41"``) answering through its JVM."""

    def __init__(self, jvm: HiveJvm):
        self.jvm = jvm
        self.name = jvm.name
        #: "3.1.3" / "4.1.0", what Hive's jars say (HiveVersionInfo)
        self.version: str = jvm.info["hive"]

    def __repr__(self) -> str:
        return f"HiveOracle({self.version})"

    def call(self, op: str, spec: Optional[dict] = None) -> Any:
        return self.jvm.call(op, spec)

    # ---- reading ----------------------------------------------------------------------------

    def read(self, table_dir: os.PathLike, columns: Sequence[Column], *, write_ids: str,
             txns: str = ALL_TXNS, bucket_count: Optional[int] = 1, vectorized: bool = False,
             conf: Optional[dict] = None, native: bool = False, sort: bool = False) -> list:
        """Read a full-ACID table or partition directory with Hive's own ACID reader
        (``OrcInputFormat``: row by row, or ``VectorizedOrcAcidRowBatchReader``).

        Returns ``[((writeId, bucketProperty, rowId), (v1, v2, ...)), ...]`` in Hive's order,
        or sorted by ROW__ID with ``sort=True``.
        """
        schema = _Schema(columns)
        spec = {**schema.spec(), "dir": str(Path(table_dir).resolve()), "write_ids": write_ids,
                "txns": txns, "bucket_count": bucket_count, "vectorized": bool(vectorized),
                "conf": {str(k): str(v) for k, v in (conf or {}).items()}}
        out = self.call("Acid.read", spec)
        rows = [(tuple(rid), schema.row_from_json(vals, native)) for rid, vals in out["rows"]]
        if sort:
            rows.sort(key=lambda r: r[0])
        return rows

    def read_mm(self, table_dir: os.PathLike, columns: Sequence[Column], *, write_ids: str,
                fmt: str = "orc", txns: str = ALL_TXNS, native: bool = False) -> tuple[list, list]:
        """Read an insert-only table or partition directory as Hive does: the directories
        ``HiveInputFormat.processPathsForMmRead`` chooses (relative names), and the rows the
        table's input format reads from them."""
        schema = _Schema(columns)
        root = Path(table_dir).resolve()
        spec = {**schema.spec(), "dir": str(root), "write_ids": write_ids, "format": fmt,
                "conf": {"hive.txn.valid.txns": txns}}
        out = self.call("Acid.readMm", spec)
        dirs = [os.path.relpath(_local(p), root) for p in out["dirs"]]
        return dirs, [schema.row_from_json(vals, native) for vals in out["rows"]]

    def acid_state(self, table_dir: os.PathLike, write_ids: str, txns: str = ALL_TXNS) -> dict:
        """``AcidUtils.getAcidState``: ``{"base", "deltas": [{"path", "min", "max", "statement",
        "delete"}], "original_files", "obsolete", "aborted"}``, paths relative to the dir."""
        root = Path(table_dir).resolve()
        out = self.call("Acid.acidState", {"dir": str(root), "write_ids": write_ids, "txns": txns})

        def rel(p: Optional[str]) -> Optional[str]:
            return None if p is None else os.path.relpath(_local(p), root)

        return {"base": rel(out["base"]),
                "deltas": [{**d, "path": rel(d["path"])} for d in out["deltas"]],
                "original_files": [rel(p) for p in out["original_files"]],
                "obsolete": sorted(rel(p) for p in out["obsolete"]),
                "aborted": sorted(rel(p) for p in out["aborted"])}

    # ---- bucket hashes ------------------------------------------------------------------------

    def bucket_hashes(self, columns: Sequence[Column], rows: Iterable[Sequence[Any]],
                      num_buckets: int = 1) -> dict:
        """Hive's own bucket hashes of ``rows`` over ``columns`` (the CLUSTERED BY columns).

        ``{"v1": {...}, "v2": {...}}``, each with ``fields`` (per row, one hash per column:
        ``ObjectInspectorUtils.hashCode`` / ``hashCodeMurmur``), ``hash`` (``getBucketHashCodeOld``
        / ``getBucketHashCode``) and ``bucket`` (``getBucketNumber``).
        """
        schema = _Schema(columns)
        spec = {"columns": [list(c) for c in schema.columns],
                "rows": [schema.row_to_json(r) for r in rows], "num_buckets": int(num_buckets)}
        return self.call("Hashes.bucketHashes", spec)


def _local(p: str) -> str:
    return p[len("file:"):] if p.startswith("file:") else p
