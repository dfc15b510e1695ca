"""Hive partition directory names: ``k1=v1/k2=v2``, escaped the way Hive escapes path names.

Hive's ``FileUtils.escapePathName`` turns every character below 0x20, DEL (0x7f) and
``"#%'*/:=?\\{[]^`` into ``%XX`` (two upper-case hex digits) and leaves everything else, non-ASCII
included, as it is; it applies to partition keys and values alike (``FileUtils.makePartName``). A
null or empty value is the default partition ``__HIVE_DEFAULT_PARTITION__``.
``FileUtils.unescapePathName`` turns ``%XX`` back into the character with that code when XX parses
as hex, and leaves anything else alone. This is the only place that knows these rules.
"""
from __future__ import annotations

import datetime as _dt
import re
from typing import Any, Mapping, Optional, Sequence

from ..exceptions import InvalidOptionError

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"

_ESCAPED = frozenset(chr(c) for c in range(0x20)) | frozenset('"#%\'*/:=?\\\x7f{[]^')
_HEX = re.compile(r"[+-]?[0-9A-Fa-f]+")


def escape(text: str) -> str:
    """``FileUtils.escapePathName`` of a key or a non-empty value."""
    if not any(c in _ESCAPED for c in text):
        return text
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in text)


def unescape(text: str) -> str:
    """``FileUtils.unescapePathName``."""
    if "%" not in text:
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "%" and i + 2 < n:
            code = text[i + 1:i + 3]  # Java's Integer.parseInt(code, 16): a sign is allowed
            if _HEX.fullmatch(code) and int(code, 16) >= 0:
                out.append(chr(int(code, 16)))
                i += 3
                continue
        out.append(c)
        i += 1
    return "".join(out)


def escape_value(value: Optional[str]) -> str:
    """A partition value in a path: escaped, or the default partition for None and ''."""
    if value is None or value == "":
        return DEFAULT_PARTITION
    return escape(value)


def unescape_value(raw: str) -> Optional[str]:
    """The value a path component stands for (None for the default partition)."""
    return None if raw == DEFAULT_PARTITION else unescape(raw)


def value_string(value: Any) -> Optional[str]:
    """The string Hive uses for a partition value of a Python (Arrow ``as_py()``) scalar."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, _dt.datetime):
        return timestamp_string(value)
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def timestamp_string(value: _dt.datetime) -> str:
    """Hive's text of a timestamp: ``yyyy-MM-dd HH:mm:ss[.fffffffff]`` without trailing zeros in the
    fraction, as its ``Timestamp.toString`` prints it. A zone-aware value (Spark's TIMESTAMP) is
    written as its UTC wall clock, as the data columns store it."""
    if value.tzinfo is not None:
        value = value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    text = value.strftime("%Y-%m-%d %H:%M:%S")
    if value.microsecond:
        text += f".{value.microsecond:06d}".rstrip("0")
    return text


#: Most file systems refuse a path component longer than this many bytes.
MAX_NAME_BYTES = 255


def partition_name(keys: Sequence[str], values: Sequence[Optional[str]]) -> str:
    """``k1=v1/k2=v2`` (Hive's ``makePartName``: keys and values escaped; '' for no keys)."""
    if len(keys) != len(values):
        raise InvalidOptionError(
            f"Partition has {len(values)} values for {len(keys)} keys ({', '.join(keys)})")
    parts = [f"{escape(k)}={escape_value(None if v is None else str(v))}"
             for k, v in zip(keys, values)]
    for key, part in zip(keys, parts):
        if len(part.encode("utf-8")) > MAX_NAME_BYTES:
            raise InvalidOptionError(
                f"A value of partition column '{key}' is too long for a directory name "
                f"({len(part.encode('utf-8'))} bytes escaped, at most {MAX_NAME_BYTES}): "
                f"'{part[:60]}...'. Partition by a shorter column (e.g. a hash or prefix of it); "
                "nothing was written.")
    return "/".join(parts)


def parse_partition_name(name: str) -> dict[str, str]:
    """``k1=v1/k2=v2`` -> ``{k1: v1, k2: v2}`` (unescaped; the default partition stays as its
    marker, as the metastore stores it)."""
    spec: dict[str, str] = {}
    for part in name.strip("/").split("/"):
        k, sep, v = part.partition("=")
        if not sep:
            raise InvalidOptionError(f"Malformed partition name '{name}': expected key=value/...")
        spec[unescape(k)] = unescape(v)
    return spec


def partition_values(keys: Sequence[str], partition: Mapping[str, Any] | Sequence[Any] | str
                     ) -> list[Optional[str]]:
    """Values in key order from a ``{key: value}`` dict, a value list, or a partition name."""
    if isinstance(partition, str):
        partition = parse_partition_name(partition)
    if isinstance(partition, Mapping):
        lowered = {str(k).lower(): v for k, v in partition.items()}
        missing = [k for k in keys if k.lower() not in lowered]
        extra = set(lowered) - {k.lower() for k in keys}
        if missing or extra:
            raise InvalidOptionError(
                f"Partition spec {dict(partition)} does not match the partition keys "
                f"{list(keys)} (missing {missing}, unknown {sorted(extra)})")
        raw = [lowered[k.lower()] for k in keys]
    else:
        raw = list(partition)
        if len(raw) != len(keys):
            raise InvalidOptionError(
                f"Partition {raw} has {len(raw)} values for the keys {list(keys)}")
    return [None if v is None or v == DEFAULT_PARTITION else str(v) for v in raw]
