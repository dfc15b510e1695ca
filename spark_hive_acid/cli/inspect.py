"""``hiveacid inspect``: per partition, what the snapshot reads and what it ignores, and why.

The report is a list of per-partition *sections* (:data:`SECTIONS`): each computes a JSON-able
value from a :class:`PartitionContext` and renders it as text lines. A new section (e.g. what a
compaction would do in this partition) is one more entry; nothing else changes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..acid.names import ParsedDir, parse_bucket_file
from ..acid.orc import open_orc, sniff_format
from ..acid.snapshot import LONG_MAX, RangeResponse, ValidIdList
from ..acid.state import AcidState
from ..compaction.initiator import decide_listing
from ..exceptions import HiveAcidError
from ..io.filesystem import FileStatus
from ..progress import Progress
from ..read.listing import PartitionListing, data_files_of_dir, list_table
from .target import Target

SELECTED, IGNORED, ORIGINAL = "read", "ignored", "original"


@dataclass
class PartitionContext:
    """One partition of the inspected table (sections may cache derived values in ``cache``)."""

    target: Target
    name: str  # k=v/k2=v2, '' when unpartitioned
    listing: PartitionListing
    cache: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Section:
    name: str
    compute: Callable[[PartitionContext], Any]
    render: Callable[[Any], list[str]]


# --- directories ----------------------------------------------------------------------------------
def _rows(ctx: PartitionContext, f: FileStatus) -> Optional[int]:
    """Rows (events, in a delete delta) of one file from its footer; None when it cannot be read
    (``hiveacid validate`` says why)."""
    try:
        if sniff_format(ctx.target.fs, f.path) == "parquet":
            import pyarrow.parquet as pq

            with ctx.target.fs.open_input(f.path) as fh:
                return pq.ParquetFile(fh).metadata.num_rows
        return open_orc(ctx.target.fs, f.path, size=f.size).nrows
    except (HiveAcidError, OSError, ValueError):
        return None


def _why_ignored(d: ParsedDir, ids: ValidIdList, state: AcidState) -> str:
    if d.path in state.obsolete:
        return "obsolete: covered by the base or a wider delta the snapshot reads"
    if d.path in state.aborted:
        return "aborted"
    lo, hi = d.min_write_id, d.max_write_id
    if lo > ids.high_watermark:
        return f"not visible: written after the snapshot (high watermark {ids.high_watermark})"
    if any(lo <= e <= hi and ids.is_open(e) for e in ids.exceptions):
        return "open: its write id is not committed in this snapshot"
    if d.visibility_txn:
        return f"not visible: the compaction (txn {d.visibility_txn}) is not committed"
    if ids.range_valid(lo, hi) is RangeResponse.NONE:
        return "not visible in this snapshot"
    return "not visible: an older base or delta than the one the snapshot reads"


def directories(ctx: PartitionContext) -> list[dict]:
    t, pl = ctx.target, ctx.listing
    st = pl.state
    out = []
    chosen = ([st.base] if st.base else []) + st.deltas + st.delete_deltas
    for d in chosen:
        children = pl.dir_files.get(d.path, [])
        files = ([c for c in children if parse_bucket_file(c.name) is not None and c.size > 0]
                 if d.is_delete else
                 [f for f in data_files_of_dir(t.fs, d, children, t.insert_only) if f.size > 0])
        rows = [_rows(ctx, f) for f in files]
        out.append({"dir": d.name, "status": SELECTED, "kind": d.kind,
                    "writeIds": [d.min_write_id, d.max_write_id],
                    "statement": d.statement_id if d.statement_id >= 0 else None,
                    "files": len(files), "bytes": sum(f.size for f in files),
                    "events" if d.is_delete else "rows":
                        None if None in rows else sum(r or 0 for r in rows)})
    chosen_paths = {d.path for d in chosen}
    for d in sorted(st.all_acid_dirs, key=ParsedDir.sort_key):
        if d.path not in chosen_paths:
            out.append({"dir": d.name, "status": IGNORED, "kind": d.kind,
                        "writeIds": [d.min_write_id, d.max_write_id],
                        "reason": _why_ignored(d, t.write_ids, st)})
    for f in st.original_files:
        out.append({"dir": f.path.rsplit("/", 1)[-1], "status": ORIGINAL, "kind": "original",
                    "files": 1, "bytes": f.size, "rows": _rows(ctx, f)})
    ctx.cache["directories"] = out
    return out


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def render_directories(entries: list[dict]) -> list[str]:
    lines = []
    for e in entries:
        if e["status"] == IGNORED:
            lines.append(f"  ignored  {e['dir']:<40} {e['reason']}")
            continue
        count = e.get("events", e.get("rows"))
        what = "events" if "events" in e else "rows"
        lines.append(f"  {e['status']:<8} {e['dir']:<40} {e['files']} file(s), "
                     f"{_size(e['bytes'])}, {'?' if count is None else count} {what}")
    return lines or ["  (empty)"]


# --- summary --------------------------------------------------------------------------------------
def summary(ctx: PartitionContext) -> dict:
    entries = ctx.cache.get("directories") or directories(ctx)
    read = [e for e in entries if e["status"] != IGNORED]
    ids = [w for e in read if e["kind"] != "original" for w in e["writeIds"]]
    unknown = any(e.get("rows", 0) is None or e.get("events", 0) is None for e in read)
    return {"files": sum(e["files"] for e in read), "bytes": sum(e["bytes"] for e in read),
            "rows": None if unknown else sum(e.get("rows") or 0 for e in read),
            "deleteEvents": None if unknown else sum(e.get("events") or 0 for e in read),
            "writeIdRange": [min(ids), max(ids)] if ids else None,
            "ignored": len(entries) - len(read)}


def render_summary(s: dict) -> list[str]:
    rng = s["writeIdRange"]
    rows = "?" if s["rows"] is None else s["rows"]
    dels = "?" if s["deleteEvents"] is None else s["deleteEvents"]
    return [f"  {s['files']} file(s) read, {_size(s['bytes'])}, {rows} rows, {dels} "
            f"delete events; write ids {f'{rng[0]}..{rng[1]}' if rng else 'none'}; "
            f"{s['ignored']} directories ignored"]


# --- compaction -----------------------------------------------------------------------------------
def compaction(ctx: PartitionContext) -> dict:
    """What ``HiveAcidTable.compactIfNeeded()`` would do in this partition (Hive's Initiator)."""
    t = ctx.target
    props = dict(t.layout.properties) if t.layout is not None else {}
    try:
        return decide_listing(ctx.listing, props, t.insert_only)
    except HiveAcidError as e:  # a bad compactorthreshold.* property: report it, go on
        return {"decision": None, "reason": str(e)}


def render_compaction(d: dict) -> list[str]:
    return [f"  compactIfNeeded: {d['decision'] or 'nothing'} ({d['reason']})"]


#: the per-partition sections, in report order
SECTIONS: list[Section] = [
    Section("directories", directories, render_directories),
    Section("summary", summary, render_summary),
    Section("compaction", compaction, render_compaction),
]


# --- the report -----------------------------------------------------------------------------------
def inspect_table(target: Target) -> dict:
    names, listings = list_table(target.fs, target.path, target.write_ids, target.txns,
                                 target.insert_only, target.known_partitions, target.source.tree)
    layout = target.layout
    ids = target.write_ids
    report: dict[str, Any] = {
        "table": target.display, "location": target.path,
        "kind": "insert-only" if target.insert_only else "full-acid",
        "snapshot": ids.to_string(),
        "highWatermark": None if ids.high_watermark == LONG_MAX else ids.high_watermark,
        "layout": {"partitionColumns": names,
                   "bucketColumns": list(layout.bucket_columns) if layout else [],
                   "numBuckets": layout.num_buckets if layout else 0,
                   "fileFormat": layout.file_format if layout else None,
                   "layoutFile": layout is not None},
        "partitions": [],
    }
    named = [("/".join(f"{n}={v}" for n, v in zip(names, pl.values)), pl) for pl in listings]
    with Progress(f"inspect {target.display}", len(named), "partitions") as progress:
        for name, pl in progress.iterate(sorted(named, key=lambda np_: np_[0])):
            ctx = PartitionContext(target, name, pl)
            entry: dict[str, Any] = {"partition": name, "path": pl.path}
            for section in SECTIONS:
                entry[section.name] = section.compute(ctx)
            report["partitions"].append(entry)
    return report


def render(report: dict) -> list[str]:
    lay = report["layout"]
    lines = [f"table {report['table']} ({report['kind']}"
             + (f", {lay['fileFormat']}" if lay["fileFormat"] else "") + ")",
             f"snapshot {report['snapshot']}",
             f"partitioned by {', '.join(lay['partitionColumns']) or '-'}; bucketed by "
             f"{', '.join(lay['bucketColumns']) or '-'}"
             + (f" into {lay['numBuckets']} buckets" if lay["numBuckets"] else "")]
    for p in report["partitions"]:
        lines.append(f"partition {p['partition'] or '(table root)'}")
        for section in SECTIONS:
            lines.extend(section.render(p[section.name]))
    return lines
