"""Write options, parsed once from Spark's case-insensitive string options.

| option | meaning | default |
|---|---|---|
| ``path`` | table directory | required |
| ``partitionBy`` | comma-separated partition columns (table creation) | none |
| ``bucketBy`` / ``numBuckets`` | CLUSTERED BY columns and bucket count (table creation) | none |
| ``bucketingVersion`` | Hive bucket hash, 1 or 2 | 2 |
| ``compression`` | NONE, ZLIB, SNAPPY, LZ4, ZSTD | ZLIB |
| ``tableProperties`` | ``k=v,k2=v2`` or a JSON object (table creation) | none |
| ``partitionOverwriteMode`` | ``static`` (replace the table) or ``dynamic`` (only written partitions) | static |
| ``txnTimeoutSeconds`` | idle time after which another writer may abort this write | 3600 |
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Mapping, Optional

from ..exceptions import InvalidOptionError
from ..option_lookup import get_option
from .acid_file import orc_codec


def _get(options: Mapping[str, str], key: str) -> Optional[str]:
    """The stripped option value; None when absent or blank."""
    v = get_option(options, key)
    return None if v is None or str(v).strip() == "" else str(v).strip()


def _columns(raw: Optional[str]) -> list[str]:
    if raw is None:
        return []
    if raw.startswith("["):  # Spark passes some column lists as JSON
        try:
            return [str(c).strip() for c in json.loads(raw)]
        except ValueError:
            pass
    return [c.strip().strip("`") for c in raw.split(",") if c.strip()]


def parse_table_properties(raw: Optional[str]) -> dict[str, str]:
    """``k=v,k2=v2`` or a JSON object of strings."""
    if raw is None:
        return {}
    if raw.lstrip().startswith("{"):
        try:
            d = json.loads(raw)
        except ValueError as e:
            raise InvalidOptionError(f"Option tableProperties is not valid JSON: {e}") from e
        if not isinstance(d, dict):
            raise InvalidOptionError("Option tableProperties must be a JSON object")
        return {str(k): str(v) for k, v in d.items()}
    out = {}
    for part in raw.split(","):
        if not part.strip():
            continue
        k, sep, v = part.partition("=")
        if not sep or not k.strip():
            raise InvalidOptionError(
                f"Option tableProperties: '{part}' is not 'key=value' (use 'k=v,k2=v2' or JSON)")
        out[k.strip()] = v.strip()
    return out


def _int(options: Mapping[str, str], key: str, default: Optional[int]) -> Optional[int]:
    raw = _get(options, key)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise InvalidOptionError(f"Option {key} must be an integer, not '{raw}'") from None


@dataclass(frozen=True)
class WriteOptions:
    path: str
    partition_by: list[str] = field(default_factory=list)
    bucket_by: list[str] = field(default_factory=list)
    num_buckets: Optional[int] = None
    bucketing_version: Optional[int] = None
    compression: Optional[str] = None
    table_properties: dict[str, str] = field(default_factory=dict)
    dynamic_overwrite: bool = False
    txn_timeout_s: float = 3600.0
    raw: dict[str, str] = field(default_factory=dict)  # every option, for the file system

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> "WriteOptions":
        path = _get(options, "path")
        if path is None:
            raise InvalidOptionError(
                "No table path given: use df.write.format('hiveacid').save('/path/to/table')")
        bucket_by = _columns(_get(options, "bucketBy"))
        num_buckets = _int(options, "numBuckets", None)
        if bucket_by and not num_buckets:
            raise InvalidOptionError("Option bucketBy needs numBuckets (a positive integer)")
        if num_buckets is not None and (num_buckets <= 0 or num_buckets > 4096):
            raise InvalidOptionError(f"Option numBuckets must be in 1..4096, not {num_buckets}")
        if num_buckets and not bucket_by:
            raise InvalidOptionError("Option numBuckets needs bucketBy (the CLUSTERED BY columns)")
        version = _int(options, "bucketingVersion", None)
        if version is not None and version not in (1, 2):
            raise InvalidOptionError(f"Option bucketingVersion must be 1 or 2, not {version}")
        compression = _get(options, "compression")
        if compression is not None:
            orc_codec(compression)  # validates
            compression = compression.upper()
        mode = (_get(options, "partitionOverwriteMode") or "static").lower()
        if mode not in ("static", "dynamic"):
            raise InvalidOptionError(
                f"Option partitionOverwriteMode must be 'static' or 'dynamic', not '{mode}'")
        timeout = _get(options, "txnTimeoutSeconds")
        try:
            timeout_s = float(timeout) if timeout is not None else 3600.0
        except ValueError:
            raise InvalidOptionError(f"Option txnTimeoutSeconds must be a number, not '{timeout}'") from None
        return cls(path=path, partition_by=_columns(_get(options, "partitionBy")),
                   bucket_by=bucket_by, num_buckets=num_buckets, bucketing_version=version,
                   compression=compression,
                   table_properties=parse_table_properties(_get(options, "tableProperties")),
                   dynamic_overwrite=mode == "dynamic", txn_timeout_s=timeout_s,
                   raw={str(k).lower(): str(v) for k, v in options.items()})
