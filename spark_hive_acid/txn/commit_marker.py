"""Commit properties of a metastore write, kept beside its files.

Hive 2.3's metastore has no way to store a key/value pair with a commit (Hive 3+ has
``commit_txn`` with a ``_meta`` table parameter, which must already exist). So a metastore
transaction writes its commit properties (e.g. a streaming query's progress) as a hidden file
``_hiveacid_commit.json`` into every directory it publishes, before ``commit_txn``: the file
becomes visible exactly when the directory's write id is committed, and goes with it on abort.
Hive, Trino and this library's reader ignore files whose name starts with ``_``.
"""
from __future__ import annotations

import json
from typing import Mapping, Optional, Sequence

from ..exceptions import StorageError
from ..io.filesystem import FileSystem

MARKER = "_hiveacid_commit.json"


def write_markers(fs: FileSystem, dirs: Sequence[str], write_id: int,
                  properties: Mapping[str, str]) -> None:
    """Write the properties into each published directory of write id ``write_id``."""
    body = json.dumps({"writeId": int(write_id), "properties": dict(properties)}).encode("utf-8")
    for d in dirs:
        fs.write_bytes(fs.join(d, MARKER), body)


def read_marker(fs: FileSystem, directory: str) -> Optional[dict]:
    """``{"writeId": W, "properties": {...}}`` of a directory, or None (no marker, unreadable)."""
    try:
        return json.loads(fs.read_bytes(fs.join(directory, MARKER)).decode("utf-8"))
    except (StorageError, OSError, ValueError):
        return None
