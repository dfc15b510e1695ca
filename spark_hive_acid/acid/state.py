"""Snapshot selection for one partition directory: Hive's ``AcidUtils.getAcidState`` (docs/format.md §4).

Deliberate deviation, documented in docs/reading.md ("One deliberate deviation"): Hive 4 accepts a non-compacted (insert
overwrite) base whose write id equals minOpenWriteId, i.e. a base of a still-open transaction. We
require such a base to be valid in the snapshot, so uncommitted data is never shown.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Optional

from ..exceptions import CorruptFileError, NotEnoughHistoryError
from ..io.filesystem import FileStatus, FileSystem
from .names import METADATA_FILE, ParsedDir, is_hidden, parse_acid_dir_strict
from .snapshot import RangeResponse, ValidIdList

log = logging.getLogger(__name__)


@dataclass
class AcidState:
    """What a snapshot reads in one partition directory."""

    base: Optional[ParsedDir] = None
    deltas: list[ParsedDir] = field(default_factory=list)  # insert deltas, in covering order
    delete_deltas: list[ParsedDir] = field(default_factory=list)
    original_files: list[FileStatus] = field(default_factory=list)  # sorted by path; no base only
    obsolete: list[str] = field(default_factory=list)
    aborted: list[str] = field(default_factory=list)
    all_acid_dirs: list[ParsedDir] = field(default_factory=list)  # every one, visible or not

    @property
    def has_acid_dirs(self) -> bool:
        return self.base is not None or bool(self.deltas) or bool(self.delete_deltas)


def read_metadata_file(fs: FileSystem, base_path: str) -> Optional[dict]:
    """The ``_metadata_acid`` JSON of a base directory, or None when there is none."""
    path = fs.join(base_path, METADATA_FILE)
    if not fs.exists(path):
        return None
    raw = fs.read_bytes(path)
    try:
        meta = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CorruptFileError(f"Cannot parse {path}: {e}") from e
    if str(meta.get("thisFileVersion", "")) != "0":
        raise CorruptFileError(f"Unsupported _metadata_acid version in {path}: {meta}")
    if "dataFormat" not in meta:
        raise CorruptFileError(f"{path} has no dataFormat entry")
    return meta


def _dir_usable(d: ParsedDir, txns: ValidIdList, state: AcidState) -> bool:
    """``isDirUsable``: a ``_vT`` directory is visible only once its txn T committed."""
    if d.visibility_txn == 0 or txns.is_valid(d.visibility_txn):
        return True
    if txns.is_aborted(d.visibility_txn):
        state.aborted.append(d.path)
    return False


class _BaseJudge:
    """Caches the ``_metadata_acid`` look-ups of one directory."""

    def __init__(self, fs: FileSystem):
        self.fs = fs
        self._cache: dict[str, bool] = {}

    def is_compacted(self, base: ParsedDir) -> bool:
        if base.visibility_txn > 0:
            return True
        if base.path not in self._cache:
            meta = read_metadata_file(self.fs, base.path)
            self._cache[base.path] = meta is not None and meta.get("dataFormat") == "compacted"
        return self._cache[base.path]

    def is_valid_base(self, base: ParsedDir, wids: ValidIdList) -> bool:
        w = base.write_id
        compacted = self.is_compacted(base)
        min_open = wids.min_open_or_none
        if min_open is not None and (w < min_open or (w == min_open and compacted)):
            return True
        if compacted:
            return wids.is_valid_base(w)
        return wids.is_valid(w)


def select_acid_state(
    fs: FileSystem,
    children: list[FileStatus],
    write_ids: ValidIdList,
    txns: ValidIdList,
    *,
    insert_only: bool = False,
    partition_path: str = "",
) -> AcidState:
    """Choose base, deltas, delete deltas and original files of one partition directory."""
    state = AcidState()
    judge = _BaseJudge(fs)
    oldest_base: Optional[ParsedDir] = None
    candidates: list[ParsedDir] = []
    original_dirs: list[FileStatus] = []
    original_files: list[FileStatus] = []

    for child in children:
        if is_hidden(child.name):
            continue
        if not child.is_dir:
            if child.size > 0:
                original_files.append(child)
            continue
        parsed = parse_acid_dir_strict(child.name, child.path)
        if parsed is None:
            original_dirs.append(child)
            continue
        state.all_acid_dirs.append(parsed)
        if not _dir_usable(parsed, txns, state):
            continue
        if parsed.is_base:
            if oldest_base is None or oldest_base.write_id > parsed.write_id:
                oldest_base = parsed
            compacted = judge.is_compacted(parsed)
            if write_ids.is_aborted(parsed.write_id) and not compacted:
                state.aborted.append(parsed.path)
                continue
            current = state.base
            if (current is None or current.write_id < parsed.write_id
                    or (current.write_id == parsed.write_id and compacted)):
                if judge.is_valid_base(parsed, write_ids):
                    if current is not None:
                        state.obsolete.append(current.path)
                    state.base = parsed
            else:
                state.obsolete.append(parsed.path)
        else:
            lo, hi = parsed.min_write_id, parsed.max_write_id
            if write_ids.range_aborted(lo, hi) is RangeResponse.ALL:
                state.aborted.append(parsed.path)
            elif write_ids.range_valid(lo, hi) is not RangeResponse.NONE:
                candidates.append(parsed)

    _select_deltas(state, candidates, write_ids)

    if oldest_base is not None and state.base is None and judge.is_compacted(oldest_base):
        invalid = list(write_ids.exceptions)
        lowest = f", lowest invalid write id {invalid[0]}" if invalid else ""
        raise NotEnoughHistoryError(
            f"ACID_NOT_ENOUGH_HISTORY in {partition_path or oldest_base.path}: the snapshot "
            f"(high watermark {write_ids.high_watermark}{lowest}) is older than the compacted "
            f"base {oldest_base.name}, which erased the history it needs. Read a newer snapshot.")

    if state.base is not None:
        state.obsolete.extend(f.path for f in original_files)
    elif not insert_only:
        for d in original_dirs:
            original_files.extend(list_files_recursive(fs, d.path))
        state.original_files = sorted(original_files, key=lambda f: f.path)
    return state


def _select_deltas(state: AcidState, candidates: list[ParsedDir], write_ids: ValidIdList) -> None:
    """``findBestWorkingDeltas``: keep the deltas that cover (base, HWM] without overlap."""
    current = state.base.write_id if state.base is not None else 0
    last_stmt = -1
    prev: Optional[ParsedDir] = None
    for d in sorted(candidates, key=ParsedDir.sort_key):
        if d.max_write_id > current:
            if write_ids.range_valid(current + 1, d.max_write_id) is RangeResponse.NONE:
                continue
            take = True
            current, last_stmt = d.max_write_id, d.statement_id
        elif d.max_write_id == current and last_stmt >= 0:
            take = True
        elif (prev is not None and prev.min_write_id == d.min_write_id
              and prev.max_write_id == d.max_write_id and prev.statement_id == d.statement_id):
            take = True
        else:
            take = False
        if take:
            (state.delete_deltas if d.is_delete else state.deltas).append(d)
            prev = d
        else:
            state.obsolete.append(d.path)


def list_files_recursive(fs: FileSystem, path: str) -> list[FileStatus]:
    """Every non-hidden, non-empty file below ``path`` (hidden directories are not entered)."""
    out: list[FileStatus] = []
    for child in fs.list_dir(path):
        if is_hidden(child.name):
            continue
        if child.is_dir:
            out.extend(list_files_recursive(fs, child.path))
        elif child.size > 0:
            out.append(child)
    return out
