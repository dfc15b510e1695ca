"""Read options, parsed once from Spark's all-string, case-insensitive option map."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from ..acid.snapshot import ValidIdList, parse_txns, parse_write_ids
from ..exceptions import InvalidOptionError
from .. import options as opt

DEFAULT_SPLIT_BYTES = 128 * 1024 * 1024
DEFAULT_MAX_DELETE_EVENTS = 10_000_000


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
        opts = {k.lower(): v for k, v in options.items()}
        path = opts.get("path")
        table = (opts.get("table") or "").strip() or None
        if not path and opts.get("paths"):
            raise InvalidOptionError("hiveacid reads one table per load(): pass a single path")
        if path and table:
            raise InvalidOptionError(
                f"Give either a path ({path}) or option table ({table}), not both")
        if not path and not table:
            raise InvalidOptionError(
                "No table given: use spark.read.format('hiveacid').load('/path/to/table') or "
                ".option('table', 'db.tbl') with a metastore (option metastoreUri)")
        wid_raw = opts.get("validwriteids")
        write_ids = parse_write_ids(wid_raw, "validWriteIds") if wid_raw else None
        txns = parse_txns(opts.get("validtxns"), "validTxns")
        columns = None
        if opts.get("columns"):
            columns = tuple(c.strip() for c in opts["columns"].split(",") if c.strip())
            if not columns:
                raise InvalidOptionError("Option columns is empty: name at least one column")
        count_rows = opt.get_bool(opts, "countRows", False)
        if count_rows and (columns or opt.get_bool(opts, "includeRowId", False)):
            raise InvalidOptionError(
                "Option countRows=true reads one column, row_count: drop options columns and "
                "includeRowId")
        opt.refuse_blank(opts, "versionAsOf", "timestampAsOf", "startingVersion", "endingVersion")
        version = opt.get_int(opts, "versionAsOf", None)
        timestamp = opt.get_str(opts, "timestampAsOf")
        if write_ids is not None and (version is not None or timestamp is not None):
            raise InvalidOptionError(
                "Give validWriteIds (a snapshot) or versionAsOf / timestampAsOf, not both")
        props = opts.get("transactionalproperties")
        insert_only = None
        if props:
            low = props.strip().lower()
            if low not in ("insert_only", "default", "split_update"):
                raise InvalidOptionError(
                    f"Option transactionalProperties='{props}' must be insert_only or default")
            insert_only = low == "insert_only"
        return cls(
            path=path or "",
            table=table,
            txns_given=bool(opts.get("validtxns")),
            write_ids=write_ids,
            txns=txns,
            include_row_id=opt.get_bool(opts, "includeRowId", False),
            columns=columns,
            split_bytes=opt.get_int(opts, "splitSize", DEFAULT_SPLIT_BYTES, minimum=1),
            max_delete_events=opt.get_int(opts, "maxDeleteEventsInMemory",
                                          DEFAULT_MAX_DELETE_EVENTS, minimum=1),
            insert_only=insert_only,
            count_rows=count_rows,
            rebase_datetime=opt.get_bool(opts, "rebaseDatetime", True),
            version_as_of=version,
            timestamp_as_of=timestamp,
            raw=tuple(sorted(opts.items())),
        )
