"""Time travel: the read options ``versionAsOf`` and ``timestampAsOf`` turned into the snapshot
(a ValidWriteIdList) a read uses, and the check that a ``validWriteIds`` string names this table.

* ``versionAsOf=W``: the table with every write id up to W that is committed (high watermark W),
  in both modes. W itself must be committed.
* ``timestampAsOf=T``: path mode only, from the commit times the path-mode log records: the
  table as it was after the last commit at or before T. A Hive Metastore does not say when each
  write id committed, so in metastore mode (and for a Hive-written directory without a log) this
  is an error that points to ``versionAsOf``.
"""
from __future__ import annotations

import datetime as _dt
from typing import Optional

from ..acid.logstate import first_write_id, load_state, read_events, state_after
from ..acid.snapshot import ValidIdList
from ..exceptions import InvalidOptionError, InvalidSnapshotError
from ..io.filesystem import FileSystem


def parse_timestamp(raw: str) -> float:
    """Seconds since the epoch of ``2026-11-25``, ``2026-11-25 10:00:00[.123]`` or ISO 8601 with
    an offset (``...T10:00:00Z``, ``+02:00``); a time without an offset is UTC."""
    text = raw.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        value = _dt.datetime.fromisoformat(text)
    except ValueError:
        raise InvalidOptionError(
            f"Option timestampAsOf='{raw}' is not a timestamp: use '2026-11-25 10:00:00' (UTC), "
            "'2026-11-25T10:00:00+02:00' or a date '2026-11-25'") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
    return value.timestamp()


def _iso(t: float) -> str:
    return _dt.datetime.fromtimestamp(t, tz=_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def as_of_version(current: ValidIdList, version: int, display: str) -> ValidIdList:
    """``current`` cut at write id ``version`` (which must be committed in ``current``)."""
    if version < 1:
        raise InvalidOptionError(f"Option versionAsOf={version} must be a write id >= 1")
    if current.is_aborted(version):
        raise InvalidOptionError(
            f"versionAsOf={version}: write id {version} of {display} was aborted; pick a "
            "committed one (HiveAcidTable.history() lists them)")
    if not current.is_valid(version):
        newest = current.high_watermark
        raise InvalidOptionError(
            f"versionAsOf={version}: write id {version} of {display} is not committed "
            f"(the newest write id is {newest}); HiveAcidTable.history() lists the committed ones")
    exceptions = [e for e in current.exceptions if e <= version]
    aborted = [e for e in exceptions if current.is_aborted(e)]
    return ValidIdList.of(version, [e for e in exceptions if e not in current.aborted], aborted,
                          table_name=current.table_name)


def as_of_time(fs: FileSystem, path: str, when: float, raw: str, display: str) -> ValidIdList:
    """The snapshot of a path-mode table after its last commit at or before ``when``."""
    state = load_state(fs, path)
    events = read_events(fs, path) if state is not None else []
    if state is None or not events:
        raise InvalidOptionError(
            f"timestampAsOf='{raw}': {display} has no recorded commit times (it has no "
            "transaction log: written by Hive, or never written by this library); use "
            "versionAsOf=<write id> instead")
    chosen = [ev for ev in events if ev.time <= when]
    if not chosen:
        raise InvalidOptionError(
            f"timestampAsOf='{raw}' is before the first commit recorded for {display} "
            f"({_iso(events[0].time)})")
    snapshot = state_after(events, chosen[-1].seq, first_write_id(state, events)).snapshot()
    if snapshot is None:  # cannot happen: the chosen event terminated a write id
        raise InvalidOptionError(f"timestampAsOf='{raw}': no snapshot of {display} at that time")
    return snapshot


def resolve(current: ValidIdList, *, version: Optional[int], timestamp: Optional[str],
            fs: FileSystem, path: str, display: str, metastore: bool) -> ValidIdList:
    """The snapshot to read: ``current`` unless versionAsOf / timestampAsOf is given."""
    if version is not None and timestamp is not None:
        raise InvalidOptionError("Give versionAsOf or timestampAsOf, not both")
    if version is not None:
        return as_of_version(current, version, display)
    if timestamp is None:
        return current
    when = parse_timestamp(timestamp)
    if metastore:
        raise InvalidOptionError(
            f"timestampAsOf: the Hive Metastore does not record when each write id of {display} "
            "committed, so a time cannot be turned into a snapshot; use versionAsOf=<write id> "
            "(HiveAcidTable.forName(...).history() lists the write ids)")
    return as_of_time(fs, path, when, timestamp, display)


def check_table_name(write_ids: ValidIdList, expected: Optional[str], display: str) -> None:
    """A validWriteIds string naming another table is a mistake (a snapshot copied from another
    table's reads): refuse it. ``expected``: ``db.table`` (``table`` alone means ``default``);
    None when this table has no recorded name."""
    given = write_ids.table_name
    if not given or not expected:
        return

    def full(name: str) -> str:
        name = name.strip().strip("`").lower()
        return name if "." in name else f"default.{name}"
    if full(given) != full(expected):
        raise InvalidSnapshotError(
            f"Option validWriteIds names table '{given}', but this read is of {display} "
            f"('{expected}'): pass this table's snapshot (HiveAcidTable.snapshot()) or drop the "
            "table name from the string")
