"""What a table is, in one dict (``HiveAcidTable.detail()``): location, format, columns, files and
sizes of the current snapshot, its write ids; and whether a directory holds a Hive ACID table."""
from __future__ import annotations

from typing import Any, Mapping, Optional

from ..acid.layout import load_layout
from ..acid.names import FLUSH_LENGTH_SUFFIX, is_hidden
from ..exceptions import HiveAcidError
from ..io.registry import get_filesystem
from ..acid.partition_tree import has_acid_dirs
from .base import TableRef


def table_detail(ref: TableRef) -> dict[str, Any]:
    """One snapshot's facts; the listing is the one a read does (``read.scan.TableScan``)."""
    scan = ref.scan()
    layout = scan.layout
    files = sizes = 0
    for pl in scan.plan.partitions:
        for children in pl.dir_files.values():
            for f in children:
                if not f.is_dir and not is_hidden(f.name) \
                        and not f.name.endswith(FLUSH_LENGTH_SUFFIX):
                    files, sizes = files + 1, sizes + f.size
        files += len(pl.state.original_files)
        sizes += sum(f.size for f in pl.state.original_files)
    ids = scan.write_ids  # a directory without a log: up to the highest write id it names
    if layout is not None:
        buckets = list(layout.bucket_columns)
        num_buckets = layout.num_buckets if buckets else 0
    else:
        buckets, num_buckets = [], 0
    return {
        "name": scan.source.name,
        "location": scan.source.location,
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
        "currentWriteId": ids.high_watermark,
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
