"""Hive snapshots: ValidReaderWriteIdList and ValidReadTxnList (storage-api), parsed from strings.

Formats (docs/format.md §3.1):
- write ids: ``db.table:HWM:minOpenWriteId:open1,open2:aborted1,aborted2``
  (also accepted: the txn-wide ``txnId$list$list`` form when it holds exactly one table or the
  table is named, and the body without a table name)
- txns: ``HWM:minOpenTxn:open...:aborted...`` (Hive 3) or ``HWM:minOpenTxn:exc:exc:exc...`` (Hive 2)

An empty string means "everything is valid", as in Hive. Parsing is stricter than storage-api's
``readFromString`` (which takes signs, other scripts' digits and any minOpen): see ``_long`` and
``_check_consistent``; every string Hive writes is accepted (tests/test_snapshot_parsing.py).
"""
from __future__ import annotations

import bisect
import enum
import re
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from ..exceptions import InvalidSnapshotError

LONG_MAX = 9223372036854775807


class RangeResponse(enum.Enum):
    NONE = 0
    SOME = 1
    ALL = 2


@dataclass(frozen=True)
class ValidIdList:
    """A high watermark plus sorted exceptions, some of them aborted (the rest are open)."""

    high_watermark: int = LONG_MAX
    min_open: int = LONG_MAX
    exceptions: tuple[int, ...] = ()
    aborted: frozenset[int] = field(default_factory=frozenset)
    table_name: str = ""

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def all_valid(cls, table_name: str = "") -> "ValidIdList":
        return cls(table_name=table_name)

    @classmethod
    def of(cls, high_watermark: int, open_ids: Sequence[int] = (), aborted_ids: Sequence[int] = (),
           table_name: str = "") -> "ValidIdList":
        exc = tuple(sorted(set(open_ids) | set(aborted_ids)))
        min_open = min(open_ids) if open_ids else LONG_MAX
        return cls(high_watermark, min_open, exc, frozenset(aborted_ids), table_name)

    # -- predicates (ValidReaderWriteIdList) ----------------------------------------------------
    def is_valid(self, w: int) -> bool:
        return w <= self.high_watermark and not self._is_exception(w)

    def is_aborted(self, w: int) -> bool:
        return w in self.aborted

    def is_open(self, w: int) -> bool:
        return self._is_exception(w) and w not in self.aborted

    def is_valid_base(self, w: int) -> bool:
        return w < self.min_open and w <= self.high_watermark

    @property
    def min_open_or_none(self) -> Optional[int]:
        return None if self.min_open == LONG_MAX else self.min_open

    @property
    def everything_valid(self) -> bool:
        return self.high_watermark == LONG_MAX and not self.exceptions

    def _is_exception(self, w: int) -> bool:
        i = bisect.bisect_left(self.exceptions, w)
        return i < len(self.exceptions) and self.exceptions[i] == w

    def _exceptions_in(self, lo: int, hi: int) -> Sequence[int]:
        a = bisect.bisect_left(self.exceptions, lo)
        b = bisect.bisect_right(self.exceptions, hi)
        return self.exceptions[a:b]

    def range_valid(self, lo: int, hi: int) -> RangeResponse:
        """``isWriteIdRangeValid``, case for case as Hive computes it."""
        if lo > self.high_watermark:
            return RangeResponse.NONE
        if self.exceptions and self.exceptions[0] > hi:
            return RangeResponse.ALL
        count = max(0, hi - self.high_watermark) + len(self._exceptions_in(lo, hi))
        if count == 0:
            return RangeResponse.ALL
        if count == hi - lo + 1:
            return RangeResponse.NONE
        return RangeResponse.SOME

    def range_aborted(self, lo: int, hi: int) -> RangeResponse:
        """``isWriteIdRangeAborted``."""
        count = sum(1 for e in self._exceptions_in(lo, hi) if e in self.aborted)
        if count == 0:
            return RangeResponse.NONE
        if count == hi - lo + 1:
            return RangeResponse.ALL
        return RangeResponse.SOME

    def valid_mask(self, ids: np.ndarray) -> np.ndarray:
        """Vectorised :meth:`is_valid` over an int64 array."""
        mask = ids <= self.high_watermark
        if self.exceptions:
            mask &= ~np.isin(ids, np.asarray(self.exceptions, dtype=np.int64))
        return mask

    # -- serialisation ----------------------------------------------------------------------------
    def to_string(self) -> str:
        """Hive 3 ``writeToString`` form (with the table name when there is one)."""
        open_ids = [e for e in self.exceptions if e not in self.aborted]
        body = (f"{self.high_watermark}:{self.min_open}:"
                f"{','.join(map(str, open_ids))}:{','.join(map(str, sorted(self.aborted)))}")
        return f"{self.table_name}:{body}" if self.table_name else body


_ASCII_DIGITS = re.compile(r"[0-9]+")
# a number attempt (any script's digits, sign, underscores, spaces), not a table name
_NUMBER_LIKE = re.compile(r"[+-]?[\d_\s]+")


def _long(text: str, what: str, where: str) -> int:
    """A non-negative Java long in ASCII digits. Python's ``int()`` would also take a sign,
    ``1_0``, spaces, other scripts' digits and any size, and read a snapshot nobody meant."""
    if not _ASCII_DIGITS.fullmatch(text):
        raise InvalidSnapshotError(
            f"Malformed snapshot in {where}: the {what} '{text}' is not a non-negative integer "
            "in ASCII digits")
    value = int(text)
    if value > LONG_MAX:
        raise InvalidSnapshotError(
            f"Malformed snapshot in {where}: the {what} {text} is beyond Java's long range "
            f"(at most {LONG_MAX})")
    return value


def _id_list(text: str, what: str, where: str) -> list[int]:
    """A comma-separated id list; an empty field is an empty list, an empty entry an error."""
    return [_long(x, f"{what} id", where) for x in text.split(",")] if text else []


def _check_consistent(hwm: int, min_open: int, listed: list[int], where: str) -> None:
    """Refuse what no Hive writer produces: an id listed twice, or a minOpen that is not
    Long.MAX_VALUE (nothing open), not a listed id and not above the high watermark (the
    metastore keeps its minOpen when it cuts the list down to the lowest invalid id)."""
    seen: set[int] = set()
    for w in listed:
        if w in seen:
            raise InvalidSnapshotError(
                f"Malformed snapshot in {where}: id {w} is listed twice (the open and aborted "
                "lists must not overlap)")
        seen.add(w)
    if min_open != LONG_MAX and min_open <= hwm and min_open not in seen:
        raise InvalidSnapshotError(
            f"Malformed snapshot in {where}: the minOpen {min_open} is none of the listed ids and "
            f"not above the high watermark {hwm}; Hive writes the smallest open id there, or "
            f"{LONG_MAX} when none is open")


def _parse_body(fields: list[str], table: str, option: str, raw: str) -> ValidIdList:
    """Parse ``HWM:minOpen[:open:aborted]`` (Hive 3) or ``HWM:minOpen:exc:exc:exc...`` (Hive 2)."""
    where = f"option {option}='{raw}'"
    if len(fields) < 2:
        raise InvalidSnapshotError(
            f"Malformed snapshot in {where}: expected "
            + ("'db.table:HWM:minOpen:open,...:aborted,...'" if option == "validWriteIds"
               else "'HWM:minOpenTxn:open,...:aborted,...'"))
    hwm = _long(fields[0], "high watermark", where)
    min_open = _long(fields[1], "minOpen", where)
    rest = fields[2:]
    if len(rest) <= 2:  # Hive 3: open ids, then aborted ids (comma-separated)
        open_ids = _id_list(rest[0], "open", where) if len(rest) > 0 else []
        aborted = _id_list(rest[1], "aborted", where) if len(rest) > 1 else []
    else:  # Hive 2: every remaining field is one exception (open or aborted is not recorded)
        open_ids, aborted = [_long(x, "exception id", where) for x in rest], []
    _check_consistent(hwm, min_open, open_ids + aborted, where)
    exc = tuple(sorted(set(open_ids) | set(aborted)))
    return ValidIdList(hwm, min_open, exc, frozenset(aborted), table)


def parse_write_ids(raw: Optional[str], option: str = "validWriteIds",
                    table_name: Optional[str] = None) -> ValidIdList:
    """Parse a ValidReaderWriteIdList (or a ValidTxnWriteIdList naming one table)."""
    if raw is None or raw.strip() == "":
        return ValidIdList.all_valid()
    raw = raw.strip()
    if "$" in raw:  # ValidTxnWriteIdList: txnId$list$list...
        head, *parts = raw.split("$")
        _long(head, "transaction id", f"option {option}='{raw}'")
        parts = [p for p in parts if p]
        lists = [parse_write_ids(p, option) for p in parts]
        if table_name:
            lists = [w for w in lists if w.table_name.lower() == table_name.lower()] or lists
        if len(lists) != 1:
            raise InvalidSnapshotError(
                f"Option {option}='{raw}' holds write id lists for {len(lists)} tables "
                f"({', '.join(w.table_name for w in lists)}); pass the one for this table")
        return lists[0]
    fields = raw.split(":")
    table = ""
    if fields[0] and not _NUMBER_LIKE.fullmatch(fields[0]):
        table, fields = fields[0], fields[1:]
    return _parse_body(fields, table, option, raw)


def parse_txns(raw: Optional[str], option: str = "validTxns") -> ValidIdList:
    """Parse a ValidReadTxnList (Hive 3 or Hive 2 form)."""
    if raw is None or raw.strip() == "":
        return ValidIdList.all_valid()
    raw = raw.strip()
    fields = raw.split(":")
    if fields[0] and not _NUMBER_LIKE.fullmatch(fields[0]):
        raise InvalidSnapshotError(
            f"Malformed snapshot in option {option}='{raw}': a ValidTxnList has no table name "
            "(expected 'HWM:minOpenTxn:open,...:aborted,...')")
    return _parse_body(fields, "", option, raw)
