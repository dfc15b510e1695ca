"""``hiveacid validate``: check every file of a table, report every problem (one line each,
naming the file), never stop at the first: a damaged table is what this is for.

Checks (docs/format.md §2 and §5): directory names parse; the layout file and every record of
the path-mode log can be read (:mod:`.validate_log`); ``_orc_acid_version`` markers; every data
file opens and none is empty (0 bytes); ACID event files have the event schema with integer keys,
``hive.acid.key.index`` (the last key of every stripe) and ``hive.acid.stats`` (inserts, updates,
deletes) that agree with their content, events in (originalTransaction, bucket, rowId) order, and
bucket properties whose writer id is the N of their ``bucket_N`` name.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..acid.bucket_codec import decode_writer_ids
from ..acid.layout import load_layout
from ..acid.names import ParsedDir, is_hidden, parse_acid_dir_strict, parse_bucket_file
from ..acid.orc import (
    acid_field_names,
    check_acid_key_types,
    flush_length,
    is_acid_schema,
    open_orc,
    sniff_format,
)
from ..io.filesystem import FileStatus
from ..acid.partition_tree import walk_partitions
from ..progress import Progress
from .target import Target
from .validate_log import Report, check_acid_version_files, check_log

KEY_INDEX, STATS = "hive.acid.key.index", "hive.acid.stats"


def _leaves(target: Target) -> list[tuple[str, list[FileStatus]]]:
    """(partition directory, its listing) of every partition."""
    fs = target.fs
    if target.known_partitions is not None:
        names, leaves = target.known_partitions
        out = []
        for path, _ in leaves:
            out.append((path, fs.list_dir(path) if fs.exists(path) else []))
        return out or [(target.path, fs.list_dir(target.path))]
    tree = walk_partitions(fs, target.path)
    return [(p, tree.children[p]) for p, _, _ in tree.leaves]


def check_acid_file(target: Target, d: ParsedDir, f: FileStatus, report: Report) -> None:
    fs = target.fs
    bucket = parse_bucket_file(f.name)
    flushed = flush_length(fs, f.path)
    orc = open_orc(fs, f.path, flushed, size=f.size)
    schema = orc.schema
    if not is_acid_schema(schema):
        report.add(f.path, f"not an ACID event file: its columns are {', '.join(schema.names)}, "
                           "not operation, originalTransaction, bucket, rowId, "
                           "currentTransaction, row")
        return
    check_acid_key_types(schema, f.path)
    names = acid_field_names(schema)
    cols = [names["operation"], names["originalTransaction"], names["bucket"], names["rowId"]]
    stripe_keys, ops, keys = [], [], []
    for i in range(orc.nstripes):
        batch = orc.read_stripe(i, columns=cols)
        arrays = [np.asarray(batch.column(j).to_numpy(zero_copy_only=False)) for j in range(4)]
        if any(batch.column(j).null_count for j in range(4)):
            report.add(f.path, f"stripe {i} has null ACID key values (Hive never writes one)")
            return
        ops.append(arrays[0])
        keys.append(arrays[1:])
        if batch.num_rows:
            stripe_keys.append(tuple(int(a[-1]) for a in arrays[1:]))
    op = np.concatenate(ops) if ops else np.zeros(0, np.int64)
    owid, bp, rid = (np.concatenate([k[j] for k in keys]) if keys else np.zeros(0, np.int64)
                     for j in range(3))
    if len(op) > 1:
        o, b, r = owid.astype(np.int64), bp.astype(np.int64) & 0xFFFFFFFF, rid.astype(np.int64)
        later = (o[1:] > o[:-1]) | ((o[1:] == o[:-1]) & ((b[1:] > b[:-1])
                                                         | ((b[1:] == b[:-1]) & (r[1:] >= r[:-1]))))
        if not later.all():
            at = int(np.argmin(later)) + 1
            report.add(f.path, f"events not sorted by (originalTransaction, bucket, rowId): "
                               f"event {at} ({o[at]}, {bp[at]}, {r[at]}) comes after "
                               f"({o[at - 1]}, {bp[at - 1]}, {r[at - 1]})")
    if bucket is not None and len(bp):
        writers = decode_writer_ids(bp.astype(np.int32))
        wrong = np.nonzero(writers != bucket)[0]
        if len(wrong):
            report.add(f.path, f"{len(wrong)} event(s) have a bucket property for writer "
                               f"{int(writers[wrong[0]])}, not {bucket} as the file name says")
    if flushed is not None:
        return  # a streaming file being written: its footer metadata comes at close
    meta = orc.metadata or {}
    if KEY_INDEX.encode() not in meta and KEY_INDEX not in meta:
        report.add(f.path, f"no {KEY_INDEX} in the footer")
    else:
        raw = meta.get(KEY_INDEX.encode(), meta.get(KEY_INDEX))
        text = raw.decode() if isinstance(raw, bytes) else str(raw)
        listed: list[tuple[object, ...]] = []
        for part in [p for p in text.split(";") if p]:
            try:
                listed.append(tuple(int(x) for x in part.split(",")))
            except ValueError:
                listed.append(("unparsable", part))
        if listed != stripe_keys:
            report.add(f.path, f"{KEY_INDEX} lists {listed} but the stripes end with {stripe_keys}")
    if STATS.encode() not in meta and STATS not in meta:
        report.add(f.path, f"no {STATS} in the footer")
    else:
        raw = meta.get(STATS.encode(), meta.get(STATS))
        text = raw.decode() if isinstance(raw, bytes) else str(raw)
        actual = [int((op == k).sum()) for k in (0, 1, 2)]
        try:
            stated = [int(x) for x in text.split(",")]
        except ValueError:
            stated = []
        if stated != actual:
            report.add(f.path, f"{STATS} says '{text}' (inserts,updates,deletes) but the file "
                               f"holds {actual[0]},{actual[1]},{actual[2]}")


def check_plain_file(target: Target, f: FileStatus) -> None:
    """An insert-only table's data file (or an original file) opens."""
    fs = target.fs
    if sniff_format(fs, f.path) == "parquet":
        import pyarrow.parquet as pq

        with fs.open_input(f.path) as fh:
            pq.ParquetFile(fh).metadata
        return
    open_orc(fs, f.path, size=f.size).schema


def validate_table(target: Target) -> Report:
    report = Report()
    fs, root = target.fs, target.path
    if target.ref.keeps_log:
        report.guard(root, lambda: load_layout(fs, root))
        check_log(fs, root, report)
    leaves: list[tuple[str, list[FileStatus]]] = []

    def list_leaves() -> None:
        leaves.extend(_leaves(target))
    report.guard(root, list_leaves)
    acid_dirs: list[tuple[ParsedDir, list[FileStatus]]] = []
    with Progress(f"validate {target.display}", len(leaves), "partitions") as progress:
        for _, children in progress.iterate(leaves):
            _check_partition(target, children, acid_dirs, report)
    if not target.insert_only:
        check_acid_version_files(fs, acid_dirs, report)
    return report


def _check_partition(target: Target, children: list[FileStatus],
                     acid_dirs: list[tuple[ParsedDir, list[FileStatus]]], report: Report) -> None:
    """Every directory and file of one partition (``children``: its directory's entries)."""
    fs = target.fs
    for child in sorted(children, key=lambda c: c.name):
        if is_hidden(child.name):
            continue
        if not child.is_dir:
            if child.size > 0 and not target.insert_only:  # an original (pre-ACID) file
                report.files += 1
                report.guard(child.path, lambda: check_plain_file(target, child))
            continue
        parsed: list[Optional[ParsedDir]] = []
        report.guard(child.path, lambda: parsed.append(parse_acid_dir_strict(child.name,
                                                                             child.path)))
        d = parsed[0] if parsed else None
        if d is None:
            continue
        files: list[FileStatus] = []
        report.guard(d.path, lambda: files.extend(fs.list_dir(d.path)))
        acid_dirs.append((d, files))
        for f in sorted(files, key=lambda c: c.name):
            if f.is_dir or is_hidden(f.name) or f.name.endswith("_flush_length"):
                continue
            if f.size == 0:
                if (not target.insert_only and parse_bucket_file(f.name) is not None
                        and flush_length(fs, f.path) is None):
                    report.add(f.path, "empty (0 bytes): an ACID data file always holds at "
                                       "least its ORC footer; it was truncated or damaged")
                continue
            report.files += 1
            if target.insert_only or parse_bucket_file(f.name) is None:
                report.guard(f.path, lambda: check_plain_file(target, f))
            else:
                report.guard(f.path, lambda: check_acid_file(target, d, f, report))
