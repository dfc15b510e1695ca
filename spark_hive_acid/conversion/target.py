"""What the converter asks of a target table format (Iceberg: ``conversion.iceberg``, Delta:
``conversion.delta``), and the unit it hands over: one :class:`Step` per Hive write id."""
from __future__ import annotations

import abc
import datetime as _dt
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

import pyarrow as pa

from .keys import GroupKey
from .writing import WrittenFile

#: the names under which every target records a step's Hive facts (snapshot summary / commitInfo)
WRITE_ID_KEY = "hive.write-id"
COMMIT_TIME_KEY = "hive.commit-time"
OPERATION_KEY = "hive.operation"
COLLAPSED_KEY = "hive.history-collapsed-up-to"
SOURCE_KEY = "hiveacid.source"  # table property: the Hive table the target mirrors


@dataclass
class Step:
    """One Hive write id as one target commit: files added, target files removed."""

    write_id: int
    operation: str
    commit_time: Optional[float]  # epoch seconds (the path-mode log's); None when unknown
    adds: list[WrittenFile] = field(default_factory=list)
    removes: list[Any] = field(default_factory=list)  # the target's handles of current files
    collapsed_up_to: Optional[int] = None  # the first step: history up to here is collapsed

    def properties(self) -> dict[str, str]:
        """The Hive facts recorded with the commit (string values)."""
        out = {WRITE_ID_KEY: str(self.write_id), OPERATION_KEY: self.operation}
        if self.commit_time is not None:
            out[COMMIT_TIME_KEY] = _dt.datetime.fromtimestamp(
                self.commit_time, tz=_dt.timezone.utc).isoformat(timespec="milliseconds")
        if self.collapsed_up_to is not None:
            out[COLLAPSED_KEY] = str(self.collapsed_up_to)
        return out


@dataclass(frozen=True)
class Version:
    """A committed target version and the Hive write id it holds."""

    ref: Any  # Iceberg snapshot id / Delta version
    write_id: int


class Target(abc.ABC):
    """A target table (see the module docstring). Not thread-safe; one run at a time."""

    partition_columns: list[str]
    display: str
    commits_each_step: bool  # apply() commits (Delta) or finish() commits everything (Iceberg)

    # --- state ---------------------------------------------------------------------------------
    @abc.abstractmethod
    def exists(self) -> bool:
        """Whether the target table exists (and so holds a conversion)."""

    @abc.abstractmethod
    def last_write_id(self) -> Optional[int]:
        """The last Hive write id applied, from the target's own metadata (None: no table)."""

    @abc.abstractmethod
    def source(self) -> Optional[str]:
        """The Hive table the target was converted from (its table property)."""

    @abc.abstractmethod
    def current_files(self) -> dict[GroupKey, list[Any]]:
        """The current data files the converter wrote, by group (handles for :class:`Step`)."""

    @abc.abstractmethod
    def versions(self) -> list[Version]:
        """Every version the converter committed, oldest first."""

    @abc.abstractmethod
    def current(self) -> Optional[Version]:
        """The table's current version (whoever made it) with the last Hive write id applied."""

    @abc.abstractmethod
    def read(self, version: Any) -> Iterator[pa.RecordBatch]:
        """The rows of ``version``, read by the target's own library (the verdict's side)."""

    # --- writing -------------------------------------------------------------------------------
    @abc.abstractmethod
    def start(self, schema: pa.Schema, partition_columns: list[str], source: str) -> None:
        """Prepare a new table of ``schema`` (nothing visible until :meth:`finish`) or, when
        it exists, check that it mirrors ``source`` with this schema."""

    @abc.abstractmethod
    def data_file_path(self, key: GroupKey, tag: str) -> str:
        """Where a new data file of group ``key`` goes (``tag`` makes the name unique)."""

    @abc.abstractmethod
    def open_output(self, path: str) -> Any:
        """A writable binary stream for a new data file at ``path``."""

    @abc.abstractmethod
    def file_batch(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """``batch`` as the target's data files hold it."""

    @abc.abstractmethod
    def file_schema(self) -> pa.Schema:
        """The schema of the target's data files."""

    @abc.abstractmethod
    def handle(self, f: WrittenFile) -> Any:
        """The handle a later step removes ``f`` with."""

    @abc.abstractmethod
    def apply(self, step: Step) -> None:
        """Add ``step``: committed at once (Delta: one version) or with :meth:`finish`."""

    @abc.abstractmethod
    def finish(self) -> None:
        """Make every step applied so far visible (all at once where the format can)."""

    @abc.abstractmethod
    def abort(self, written: list[WrittenFile]) -> None:
        """After a failure: drop what :meth:`finish` would have made visible, and the files."""
