"""What a table is, in one dict (``HiveAcidTable.detail()``): location, format, columns, files and
sizes of the current snapshot, its write ids; and whether a directory holds a Hive ACID table."""
from __future__ import annotations

from typing import Any, Mapping, Optional

from ..acid.layout import load_layout
from ..acid.names import FLUSH_LENGTH_SUFFIX, is_hidden
from ..acid.snapshot import LONG_MAX
from ..exceptions import HiveAcidError
from ..io.registry import get_filesystem
from ..read.scan import TableScan
from ..write.table_setup import has_acid_dirs
from .base import TableRef


def table_detail(ref: TableRef) -> dict[str, Any]:
    """One snapshot's facts; the listing is the one a read does (``read.scan.TableScan``)."""
    scan = TableScan(ref.reader_options())
    layout, info = scan.layout, scan.table_info
    files = sizes = 0
    for pl in scan.plan.partitions:
        for children in pl.dir_files.values():
            for f in children:
                if not f.is_dir and not is_hidden(f.name) \
                        and not f.name.endswith(FLUSH_LENGTH_SUFFIX):
                    files, sizes = files + 1, sizes + f.size
        files += len(pl.state.original_files)
        sizes += sum(f.size for f in pl.state.original_files)
    ids = scan.write_ids
    if ids.high_watermark == LONG_MAX:  # no log (a Hive-written directory): the directories say
        newest = max((d.max_write_id for pl in scan.plan.partitions
                      for d in pl.state.all_acid_dirs), default=0)
    else:
        newest = ids.high_watermark
    if info is not None:
        buckets, num_buckets = list(info.bucket_cols), info.num_buckets if info.bucket_cols else 0
    elif layout is not None:
        buckets, num_buckets = list(layout.bucket_columns), layout.num_buckets
    else:
        buckets, num_buckets = [], 0
    return {
        "name": info.full_name if info is not None else None,
        "location": scan.table_info.location if info is not None else scan.options.path,
        "format": "hiveacid",
        "kind": "insert-only" if scan.insert_only else "full-acid",
        "fileFormat": layout.file_format if layout is not None else None,
        "columns": [c.name for c in scan.data_columns],
        "partitionColumns": [c.name for c in scan.partition_columns],
        "bucketColumns": buckets,
        "numBuckets": num_buckets,
        "numPartitions": len(scan.plan.partitions) if scan.partition_columns else 0,
        "numFiles": files,
        "sizeInBytes": sizes,
        "currentWriteId": newest,
        "openWriteIds": [e for e in ids.exceptions if not ids.is_aborted(e)],
        "abortedWriteIds": sorted(ids.aborted),
        "snapshot": ids.to_string(),
    }


def is_acid_table_dir(uri: str, options: Optional[Mapping[str, str]] = None) -> bool:
    """True when ``uri`` is a directory holding a Hive ACID table (this library's layout file or
    base/delta directories); False for anything else, including a path that cannot be read."""
    try:
        fs, path = get_filesystem(uri, options or {})
        st = fs.status(path)
        if st is None or not st.is_dir:
            return False
        return load_layout(fs, path) is not None or has_acid_dirs(fs, path)
    except HiveAcidError:
        return False
