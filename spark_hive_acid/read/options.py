"""Read options, parsed once from Spark's all-string, case-insensitive option map."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from ..acid.snapshot import ValidIdList, parse_txns, parse_write_ids
from ..exceptions import InvalidOptionError
from ..option_lookup import get_option

DEFAULT_SPLIT_BYTES = 128 * 1024 * 1024
DEFAULT_MAX_DELETE_EVENTS = 10_000_000

KNOWN_OPTIONS = {
    "path", "paths", "validwriteids", "validtxns", "includerowid", "columns", "splitsize",
    "maxdeleteeventsinmemory", "transactionalproperties", "table", "metastoreuri",
    "webhdfsurl", "hdfsuser", "hdfsclient", "partitionby", "bucketby", "numbuckets",
    "bucketingversion", "compression", "tableproperties", "partitionoverwritemode", "countrows",
    "rebasedatetime",
}


def parse_bool(options: Mapping[str, str], key: str, default: bool) -> bool:
    raw = get_option(options, key)
    if raw is None:
        return default
    low = raw.strip().lower()
    if low in ("true", "1", "yes"):
        return True
    if low in ("false", "0", "no"):
        return False
    raise InvalidOptionError(f"Option {key}='{raw}' must be true or false")


def parse_int(options: Mapping[str, str], key: str, default: int, minimum: int = 1) -> int:
    raw = get_option(options, key)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError as e:
        raise InvalidOptionError(f"Option {key}='{raw}' must be an integer") from e
    if value < minimum:
        raise InvalidOptionError(f"Option {key}={value} must be >= {minimum}")
    return value


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
    raw: tuple[tuple[str, str], ...] = ()  # every option, for file-system factories

    @property
    def options(self) -> dict[str, str]:
        return dict(self.raw)

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> "ReadOptions":
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
        count_rows = parse_bool(opts, "countRows", False)
        if count_rows and (columns or parse_bool(opts, "includeRowId", False)):
            raise InvalidOptionError(
                "Option countRows=true reads one column, row_count: drop options columns and "
                "includeRowId")
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
            include_row_id=parse_bool(opts, "includeRowId", False),
            columns=columns,
            split_bytes=parse_int(opts, "splitSize", DEFAULT_SPLIT_BYTES),
            max_delete_events=parse_int(opts, "maxDeleteEventsInMemory", DEFAULT_MAX_DELETE_EVENTS),
            insert_only=insert_only,
            count_rows=count_rows,
            rebase_datetime=parse_bool(opts, "rebaseDatetime", True),
            raw=tuple(sorted(opts.items())),
        )
