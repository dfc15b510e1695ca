"""The directory and file name grammar of Hive ACID tables (docs/format.md §2)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ..exceptions import CorruptFileError

BASE_PREFIX = "base_"
DELTA_PREFIX = "delta_"
DELETE_DELTA_PREFIX = "delete_delta_"
ACID_VERSION_FILE = "_orc_acid_version"
METADATA_FILE = "_metadata_acid"
FLUSH_LENGTH_SUFFIX = "_flush_length"
#: Hive's ROW__ID as a column of the rows read (and a name no table column may take)
ROW_ID_COLUMN = "row__id"

# ASCII digits only (re.ASCII): Python's \d also matches other scripts' digits
_BASE_RE = re.compile(r"^base_(\d+)(?:_v(\d+))?$", re.ASCII)
_DELTA_RE = re.compile(r"^(delete_delta|delta)_(\d+)_(\d+)(?:_(\d+))?(?:_v(\d+))?$", re.ASCII)
_BUCKET_RE = re.compile(r"^bucket_(\d+)(?:_(\d+))?$", re.ASCII)
_ORIGINAL_RE = re.compile(r"^(\d+)_(\d+)(?:_copy_(\d+))?$", re.ASCII)
ACID_DIR_PREFIXES = (BASE_PREFIX, DELTA_PREFIX, DELETE_DELTA_PREFIX)

NO_STATEMENT = -1
_LONG_MAX = (1 << 63) - 1  # write and txn ids are Java longs
_INT_MAX = (1 << 31) - 1  # statement ids are Java ints


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
    """Parse a base/delta/delete_delta directory name; None for any other name (including a
    stray name with an ACID prefix: see :func:`parse_acid_dir_strict`)."""
    m = _BASE_RE.match(name)
    if m:
        w, vis = int(m.group(1)), int(m.group(2) or 0)
        if w > _LONG_MAX or vis > _LONG_MAX:
            return None
        return ParsedDir("base", name, path or name, w, w, NO_STATEMENT, vis)
    m = _DELTA_RE.match(name)
    if m:
        lo, hi, vis = int(m.group(2)), int(m.group(3)), int(m.group(5) or 0)
        stmt = int(m.group(4)) if m.group(4) is not None else NO_STATEMENT
        if max(lo, hi, vis) > _LONG_MAX or stmt > _INT_MAX:
            return None
        return ParsedDir(m.group(1), name, path or name, lo, hi, stmt, vis)
    return None


def parse_acid_dir_strict(name: str, path: str = "") -> Optional[ParsedDir]:
    """:func:`parse_acid_dir` for a child of a table or partition directory, where Hive's
    ``getAcidState`` takes every name starting with ``base_``/``delta_``/``delete_delta_`` for an
    ACID directory and fails the read when it does not parse (``ParsedDeltaLight.parse``,
    ``parseBase``). Such a name (a backup copy ``delta_..._0000.bak``, ``delta_abc``) is refused
    here too: read as original data it would duplicate or resurrect rows."""
    parsed = parse_acid_dir(name, path)
    if parsed is None and name.startswith(ACID_DIR_PREFIXES):
        raise CorruptFileError(
            f"Directory {path or name} is named like a Hive ACID directory but its name does not "
            "parse (expected base_<writeId>[_v<txnId>] or [delete_]delta_<minWriteId>_"
            "<maxWriteId>[_<statementId>][_v<txnId>], in ASCII digits within Java's long range). "
            "Hive refuses to read such a table too. If it is a backup or a leftover copy, move it "
            "out of the table directory; if it holds table data, restore its proper name.")
    return parsed


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
