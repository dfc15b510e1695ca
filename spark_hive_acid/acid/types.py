"""Hive type strings <-> Arrow types (no Spark here: the Spark mapping lives in the glue)."""
from __future__ import annotations

import pyarrow as pa

from ..exceptions import SchemaMismatchError, UnsupportedTypeError

_PRIMITIVES = {
    "boolean": pa.bool_(), "tinyint": pa.int8(), "smallint": pa.int16(), "int": pa.int32(),
    "integer": pa.int32(), "bigint": pa.int64(), "float": pa.float32(), "double": pa.float64(),
    "string": pa.string(), "binary": pa.binary(), "date": pa.date32(),
    "timestamp": pa.timestamp("us"),
}


def _split_top(s: str) -> list[str]:
    """Split on commas that are not nested inside <> or ()."""
    parts: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in s:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if cur:
        parts.append("".join(cur).strip())
    return parts


def parse_column_list(ddl: str) -> list[tuple[str, str]]:
    """``"id int, name varchar(20), tags array<string>"`` -> ``[(name, Hive type), ...]`` (a
    column name may be back-quoted); every type is checked (SchemaMismatchError naming it)."""
    out = []
    for part in _split_top(ddl):
        part = part.strip()
        if part.startswith("`"):
            end = part.find("`", 1)
            name, rest = part[1:end], part[end + 1:]
        else:
            name, _, rest = part.partition(" ")
        rest = rest.strip()
        if not name or not rest:
            raise SchemaMismatchError(f"'{part}' is not 'name type' (e.g. 'id int')")
        hive_to_arrow(rest, name)
        out.append((name, rest))
    if not out:
        raise SchemaMismatchError("The column list is empty (e.g. 'id int, name string')")
    return out


def hive_to_arrow(hive_type: str, column: str = "") -> pa.DataType:
    """Arrow type of a Hive type string (``decimal(10,2)``, ``map<string,array<int>>``...)."""
    t = hive_type.strip()
    low = t.lower()
    if low in _PRIMITIVES:
        return _PRIMITIVES[low]
    if low.startswith(("char(", "varchar(")):
        return pa.string()
    if low == "decimal":
        return pa.decimal128(10, 0)
    if low.startswith("decimal("):
        p, s = (int(x) for x in low[8:-1].split(","))
        return pa.decimal128(p, s)
    if low.startswith("array<"):
        return pa.list_(hive_to_arrow(t[6:-1], column))
    if low.startswith("map<"):
        k, v = _split_top(t[4:-1])
        return pa.map_(hive_to_arrow(k, column), hive_to_arrow(v, column))
    if low.startswith("struct<"):
        fields = []
        for part in _split_top(t[7:-1]):
            name, _, ftype = part.partition(":")
            fields.append(pa.field(name.strip(), hive_to_arrow(ftype, column)))
        return pa.struct(fields)
    if low.startswith("uniontype<"):
        raise UnsupportedTypeError(
            f"Column '{column}' has Hive type {hive_type}: Spark has no union type. "
            "Read the other columns with option 'columns'.")
    raise SchemaMismatchError(f"Unknown Hive type '{hive_type}' of column '{column}'")


def arrow_to_hive(t: pa.DataType, column: str = "") -> str:
    """Hive type string of an Arrow type (used when creating tables)."""
    if pa.types.is_boolean(t):
        return "boolean"
    for name, at in (("tinyint", pa.int8()), ("smallint", pa.int16()), ("int", pa.int32()),
                     ("bigint", pa.int64()), ("float", pa.float32()), ("double", pa.float64())):
        if t == at:
            return name
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "binary"
    if pa.types.is_date32(t):
        return "date"
    if pa.types.is_timestamp(t):
        return "timestamp"
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_map(t):
        return f"map<{arrow_to_hive(t.key_type, column)},{arrow_to_hive(t.item_type, column)}>"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return f"array<{arrow_to_hive(t.value_type, column)}>"
    if pa.types.is_struct(t):
        inner = ",".join(f"{f.name}:{arrow_to_hive(f.type, column)}" for f in t)
        return f"struct<{inner}>"
    raise UnsupportedTypeError(f"Column '{column}' has type {t}, which Hive ACID tables cannot store")


def normalize_read_type(t: pa.DataType, column: str = "") -> pa.DataType:
    """The Arrow type the reader emits for a type as pyarrow's ORC reader returns it.

    Timestamps become microseconds without a zone (Spark TimestampNTZ), large types become the
    regular ones (Spark's Arrow schema), unions are refused with the column named.
    """
    if pa.types.is_timestamp(t):
        return pa.timestamp("us")
    if pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_large_binary(t):
        return pa.binary()
    if pa.types.is_union(t):
        raise UnsupportedTypeError(
            f"Column '{column}' is a Hive uniontype, which Spark cannot hold. "
            "Read the other columns with option 'columns'.")
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(normalize_read_type(t.value_type, column))
    if pa.types.is_map(t):
        return pa.map_(normalize_read_type(t.key_type, column), normalize_read_type(t.item_type, column))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, normalize_read_type(f.type, f"{column}.{f.name}"))
                          for f in t])
    return t


_INT_DIGITS = {8: 3, 16: 5, 32: 10, 64: 19}


def can_convert(src: pa.DataType, dst: pa.DataType, *, lossless: bool) -> bool:
    """Whether values of type ``src`` may be stored as / read as ``dst``: the one widening rule.

    ``lossless=True`` (writing a DataFrame into a table): only conversions that keep every value
    exactly (int -> wider int, int32 -> double, float -> double, decimals and ints into decimals with
    room for every digit, string/binary flavours, nested types field by field with the same names).
    ``lossless=False`` (reading a file written before ``ALTER TABLE`` changed a column's type): the
    conversions Hive's schema evolution performs, which add integer -> any float or decimal and
    date -> timestamp, and leave nested types to the cast itself (Hive reads structs by position).
    """
    t = pa.types
    if src == dst or t.is_null(src):
        return True
    if (t.is_string(src) or t.is_large_string(src)) and t.is_string(dst):
        return True
    if (t.is_binary(src) or t.is_large_binary(src)) and t.is_binary(dst):
        return True
    if t.is_integer(src) and t.is_integer(dst):  # Hive's integers are signed
        if t.is_unsigned_integer(src):
            return t.is_signed_integer(dst) and dst.bit_width > src.bit_width
        return t.is_signed_integer(dst) and dst.bit_width >= src.bit_width
    if t.is_integer(src) and t.is_floating(dst):
        return not lossless or (dst == pa.float64() and src.bit_width <= 32)
    if t.is_integer(src) and t.is_decimal(dst):
        return not lossless or dst.precision - dst.scale >= _INT_DIGITS[src.bit_width]
    if t.is_floating(src) and t.is_floating(dst):
        return dst.bit_width >= src.bit_width
    if t.is_decimal(src) and t.is_decimal(dst):
        return dst.scale >= src.scale and dst.precision - dst.scale >= src.precision - src.scale
    if t.is_timestamp(src) and t.is_timestamp(dst):
        return True  # zone-aware (Spark TIMESTAMP, UTC) is stored as its UTC wall clock
    if t.is_date32(src) and t.is_timestamp(dst):
        return not lossless
    nested = ((t.is_list(src) or t.is_large_list(src)) and t.is_list(dst)) or (
        t.is_map(src) and t.is_map(dst)) or (t.is_struct(src) and t.is_struct(dst))
    if not nested:
        return False
    if not lossless:
        return True  # the cast itself checks the children
    if t.is_map(src):
        return (can_convert(src.key_type, dst.key_type, lossless=True)
                and can_convert(src.item_type, dst.item_type, lossless=True))
    if t.is_struct(src):
        return src.num_fields == dst.num_fields and all(
            a.name.lower() == b.name.lower() and can_convert(a.type, b.type, lossless=True)
            for a, b in zip(src, dst))
    return can_convert(src.value_type, dst.value_type, lossless=True)
