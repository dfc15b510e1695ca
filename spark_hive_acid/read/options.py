"""Read options, parsed once from Spark's all-string, case-insensitive option map."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from ..acid.snapshot import ValidIdList, parse_txns, parse_write_ids
from ..exceptions import InvalidOptionError
from .. import options as opt

DEFAULT_SPLIT_BYTES: int = opt.default("splitSize")
DEFAULT_MAX_DELETE_EVENTS: int = opt.default("maxDeleteEventsInMemory")


@dataclass(frozen=True)
class ReadOptions:
    path: str
    write_ids: Optional[ValidIdList]  # None: not given (use the table's log, else all committed)
    txns: ValidIdList
    include_row_id: bool = False
    columns: Optional[tuple[str, ...]] = None
    split_bytes: int = DEFAULT_SPLIT_BYTES
    max_delete_events: int = DEFAULT_MAX_DELETE_EVENTS
    insert_only: Optional[bool] = None  # None: detect
    table: Optional[str] = None  # "db.tbl": read through the Hive Metastore
    txns_given: bool = False
    count_rows: bool = False  # one row_count per Spark task instead of the rows
    rebase_datetime: bool = True  # hybrid-calendar files: old dates as written (read/calendar.py)
    version_as_of: Optional[int] = None  # time travel (read/time_travel.py)
    timestamp_as_of: Optional[str] = None
    raw: tuple[tuple[str, str], ...] = ()  # every option, for file-system factories

    @property
    def options(self) -> dict[str, str]:
        return dict(self.raw)

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> "ReadOptions":
        opt.check_known(options, "hiveacid read", (opt.READ, opt.METASTORE, opt.STORAGE))
        opts = opt.lowered(options)
        if not opts.get("path") and opts.get("paths"):
            raise InvalidOptionError("hiveacid reads one table per load(): pass a single path")
        path, table = opt.path_or_table(
            opts, "use spark.read.format('hiveacid').load('/path/to/table') or")
        wid_raw = opt.value(opts, "validWriteIds")
        write_ids = parse_write_ids(wid_raw, "validWriteIds") if wid_raw else None
        txns_raw = opt.value(opts, "validTxns")
        columns = None
        if opt.get(opts, "columns"):
            columns = tuple(opt.value(opts, "columns") or ())
            if not columns:
                raise InvalidOptionError("Option columns is empty: name at least one column")
        count_rows = opt.value(opts, "countRows")
        include_row_id = opt.value(opts, "includeRowId")
        if count_rows and (columns or include_row_id):
            raise InvalidOptionError(
                "Option countRows=true reads one column, row_count: drop options columns and "
                "includeRowId")
        opt.refuse_blank(opts, "versionAsOf", "timestampAsOf", "startingVersion", "endingVersion")
        version = opt.value(opts, "versionAsOf")
        timestamp = opt.value(opts, "timestampAsOf")
        if write_ids is not None and (version is not None or timestamp is not None):
            raise InvalidOptionError(
                "Give validWriteIds (a snapshot) or versionAsOf / timestampAsOf, not both")
        kind = opt.value(opts, "transactionalProperties")
        return cls(
            path=path or "",
            table=table,
            txns_given=bool(txns_raw),
            write_ids=write_ids,
            txns=parse_txns(txns_raw, "validTxns"),
            include_row_id=include_row_id,
            columns=columns,
            split_bytes=opt.value(opts, "splitSize"),
            max_delete_events=opt.value(opts, "maxDeleteEventsInMemory"),
            insert_only=None if kind is None else kind == "insert_only",
            count_rows=count_rows,
            rebase_datetime=opt.value(opts, "rebaseDatetime"),
            version_as_of=version,
            timestamp_as_of=timestamp,
            raw=tuple(sorted(opts.items())),
        )
