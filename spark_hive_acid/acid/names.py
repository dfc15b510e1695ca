"""The directory and file name grammar of Hive ACID tables (docs/format.md §2)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

BASE_PREFIX = "base_"
DELTA_PREFIX = "delta_"
DELETE_DELTA_PREFIX = "delete_delta_"
ACID_VERSION_FILE = "_orc_acid_version"
METADATA_FILE = "_metadata_acid"
FLUSH_LENGTH_SUFFIX = "_flush_length"

_BASE_RE = re.compile(r"^base_(\d+)(?:_v(\d+))?$")
_DELTA_RE = re.compile(r"^(delete_delta|delta)_(\d+)_(\d+)(?:_(\d+))?(?:_v(\d+))?$")
_BUCKET_RE = re.compile(r"^bucket_(\d+)(?:_(\d+))?$")
_ORIGINAL_RE = re.compile(r"^(\d+)_(\d+)(?:_copy_(\d+))?$")

NO_STATEMENT = -1


@dataclass(frozen=True)
class ParsedDir:
    """A parsed ``base_*``, ``delta_*`` or ``delete_delta_*`` directory name."""

    kind: str  # "base" | "delta" | "delete_delta"
    name: str
    path: str
    min_write_id: int
    max_write_id: int
    statement_id: int = NO_STATEMENT  # -1: none in the name (compacted or streaming)
    visibility_txn: int = 0

    @property
    def is_base(self) -> bool:
        return self.kind == "base"

    @property
    def is_delete(self) -> bool:
        return self.kind == "delete_delta"

    @property
    def write_id(self) -> int:
        """A base's write id (its max)."""
        return self.max_write_id

    @property
    def stmt_for_pruning(self) -> int:
        return max(self.statement_id, 0)

    def sort_key(self) -> tuple:
        """``ParsedDeltaLight.compareTo``: min asc, max desc, stmt asc, then path."""
        return (self.min_write_id, -self.max_write_id, self.statement_id, self.path)


def is_hidden(name: str) -> bool:
    """Hive's hiddenFileFilter: names starting with '_' or '.' are not table data."""
    return name.startswith("_") or name.startswith(".")


def parse_acid_dir(name: str, path: str = "") -> Optional[ParsedDir]:
    """Parse a base/delta/delete_delta directory name; None for any other name."""
    m = _BASE_RE.match(name)
    if m:
        w = int(m.group(1))
        return ParsedDir("base", name, path or name, w, w, NO_STATEMENT, int(m.group(2) or 0))
    m = _DELTA_RE.match(name)
    if m:
        stmt = int(m.group(4)) if m.group(4) is not None else NO_STATEMENT
        return ParsedDir(m.group(1), name, path or name, int(m.group(2)), int(m.group(3)), stmt,
                         int(m.group(5) or 0))
    return None


def parse_bucket_file(name: str) -> Optional[int]:
    """Bucket (writer) id of ``bucket_N`` / ``bucket_N_A``; None for side files and other names."""
    if name.endswith(FLUSH_LENGTH_SUFFIX):
        return None
    m = _BUCKET_RE.match(name)
    return int(m.group(1)) if m else None


def parse_original_file(name: str) -> Optional[int]:
    """Bucket id of an original file name (``000003_0`` -> 3, ``000001_0_copy_2`` -> 1)."""
    m = _ORIGINAL_RE.match(name)
    return int(m.group(1)) if m else None


# --- formatting (writers) -----------------------------------------------------------------------
def base_dir_name(write_id: int, visibility_txn: int = 0) -> str:
    return f"base_{write_id:07d}" + (f"_v{visibility_txn:07d}" if visibility_txn else "")


def delta_dir_name(min_w: int, max_w: int, statement: Optional[int] = None,
                   visibility_txn: int = 0, delete: bool = False) -> str:
    prefix = "delete_delta_" if delete else "delta_"
    name = f"{prefix}{min_w:07d}_{max_w:07d}"
    if statement is not None and statement >= 0:
        name += f"_{statement:04d}"
    if visibility_txn:
        name += f"_v{visibility_txn:07d}"
    return name


def bucket_file_name(bucket: int, attempt: Optional[int] = None) -> str:
    return f"bucket_{bucket:05d}" + (f"_{attempt}" if attempt is not None else "")
