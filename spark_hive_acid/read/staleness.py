"""Is a planned read stale? The commits a table received after a read planned its snapshot.

A Spark DataFrame of this format, and a temporary view created in plain SQL, keep the plan of
their first action: every later action reads the same snapshot (PySpark 4.3 calls the source's
``reader()`` and ``partitions()`` once per plan, and only ``read()`` per action). That is right
for a DataFrame that was made to be reused, but a ``SELECT`` after an ``INSERT INTO`` the same
view then silently misses the insert. A read task can tell: it compares the snapshot the read
planned with the table's newest commit (:class:`StaleCheck`), and the Spark glue warns.

What it can tell: tables with this library's path-mode log, whose newest record is one small
file. A metastore table is not checked (tasks do not talk to the metastore), nor commits Hive
makes to a directory without the log (finding them needs a walk of every partition).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Hashable, Optional

from ..acid.logstate import read_snapshot
from ..acid.snapshot import ValidIdList
from ..exceptions import HiveAcidError
from ..io.filesystem import FileSystem

log = logging.getLogger(__name__)

#: how many new write ids a message names at most
SHOWN = 5
#: (table, planned snapshot, occasion) already checked in this process
_checked: set[tuple[str, str, Hashable]] = set()


@dataclass(frozen=True)
class StaleCheck:
    """The table a read planned and the snapshot it planned (picklable: tasks run it)."""

    fs: FileSystem
    path: str
    display: str
    planned: ValidIdList

    @classmethod
    def of(cls, fs: FileSystem, path: str, display: str, planned: ValidIdList,
           fixed: bool, metastore: bool) -> Optional["StaleCheck"]:
        """The check of a read, or None where there is nothing to check: a snapshot the user
        fixed (validWriteIds, versionAsOf, timestampAsOf: old on purpose), a metastore table."""
        if fixed or metastore:
            return None
        return cls(fs, path, display, planned)

    def newer_commits(self) -> list[int]:
        """Write ids committed now that the planned snapshot does not read (at most
        :data:`SHOWN`, newest last); empty when the read is current."""
        now = read_snapshot(self.fs, self.path)
        if now is None:
            return []
        found = [w for w in sorted(self.planned.exceptions)
                 if w <= now.high_watermark and now.is_valid(w)][:SHOWN]
        w = self.planned.high_watermark + 1
        while w <= now.high_watermark and len(found) < SHOWN:  # each step: a find or an exception
            if now.is_valid(w):
                found.append(w)
            w += 1
        return sorted(found)

    def message(self, newer: list[int]) -> str:
        ids = ", ".join(map(str, newer)) + (" ..." if len(newer) == SHOWN else "")
        return (f"Stale read of {self.display}: this DataFrame (or temporary view) planned its "
                f"snapshot (high watermark {self.planned.high_watermark}) before write id(s) "
                f"{ids} committed, and a DataFrame keeps the snapshot it planned, so their rows "
                "are not in this result. Read again (spark.read.format('hiveacid').load(...), "
                "HiveAcidTable.toDF()); in SQL run the statement through spark_hive_acid.sql() "
                "or CREATE OR REPLACE TEMPORARY VIEW before it (docs/sql.md)")


def warn_if_stale(check: Optional[StaleCheck], occasion: Optional[Hashable]) -> bool:
    """Check once per ``occasion`` (a Spark stage: one action's read; None: every time) in this
    process and log a WARNING when the read is stale; True when it is. A check that fails (a log
    being rewritten, a file system hiccup) never fails the read."""
    if check is None:
        return False
    if occasion is not None:
        key = (check.path, check.planned.to_string(), occasion)
        if key in _checked:
            return False
        _checked.add(key)
    try:
        newer = check.newer_commits()
    except (HiveAcidError, OSError) as e:
        log.debug("could not check whether the read of %s is stale: %s", check.display, e)
        return False
    if newer:
        log.warning(check.message(newer))
    return bool(newer)
