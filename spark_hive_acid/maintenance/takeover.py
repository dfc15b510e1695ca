"""Before taking over a partition Hive's compactor gave up on: is the cause gone?

Hive 2.3 and 3.1 do not say why a compaction failed (Hive 4 keeps an error message,
HIVE-25764), and the usual causes are a file the compactor cannot read (damaged, truncated, or
not ORC), a directory it cannot list, or a compaction of Hive's still queued or running. The check
lists the partition and opens the footer of every data file the current snapshot reads (the only
place ``maintain`` opens files, and only for such partitions); anything that fails keeps the
partition out of the run, with the reason. A damaged file must be repaired or removed by the
operator (``hiveacid validate`` names every problem).
"""
from __future__ import annotations

from typing import Optional

from ..acid.names import parse_bucket_file
from ..acid.orc import open_orc, sniff_format
from ..catalog.base import TableRef
from ..exceptions import HiveAcidError
from ..io.filesystem import FileSystem
from ..read.listing import data_files_of_dir, list_table

MAX_PROBLEMS = 3


def cause_remains(ref: TableRef, rel: str) -> Optional[str]:
    """None when partition ``rel`` of ``ref`` can be compacted now, else why not."""
    try:
        source = ref.source()
        fs = source.fs
        _, listings = list_table(fs, source.path, source.write_ids, source.txns,
                                 source.insert_only, source.known_partitions, source.tree)
    except HiveAcidError as e:
        return f"the table cannot be listed: {type(e).__name__}: {e}"
    root = source.path.rstrip("/")
    found = [pl for pl in listings
             if ("" if pl.path.rstrip("/") == root else pl.path.rstrip("/")[len(root):].lstrip("/"))
             == rel]
    if not found:
        return f"partition {rel or '(table)'} is not in the table's listing any more"
    pl = found[0]
    st = pl.state
    files = [f for d in ([st.base] if st.base else []) + st.deltas + st.delete_deltas
             for f in (data_files_of_dir(fs, d, pl.dir_files.get(d.path, []), source.insert_only)
                       if not d.is_delete else
                       [c for c in pl.dir_files.get(d.path, []) if parse_bucket_file(c.name)
                        is not None])]
    files += list(st.original_files)
    problems = [p for p in (_unreadable(fs, f.path, f.size) for f in files) if p]
    if problems:
        more = f" (and {len(problems) - MAX_PROBLEMS} more)" if len(problems) > MAX_PROBLEMS else ""
        return ("files Hive's compactor would fail on are still there: "
                + "; ".join(problems[:MAX_PROBLEMS]) + more
                + ". Repair or remove them (hiveacid validate lists every problem), then rerun")
    return None


def _unreadable(fs: FileSystem, path: str, size: int) -> Optional[str]:
    """Why the file's footer cannot be read (None: it can)."""
    if size == 0:
        return f"{path} is empty (0 bytes)"
    try:
        if sniff_format(fs, path) == "parquet":
            import pyarrow.parquet as pq

            with fs.open_input(path, size) as fh:
                pq.ParquetFile(fh).metadata
        else:
            open_orc(fs, path, size=size).nrows
    except (HiveAcidError, OSError, ValueError) as e:
        return f"{path}: {str(e).split('. ')[0]}"
    return None
