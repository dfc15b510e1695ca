"""The few protobuf wire-format pieces ORC file tails need (no generated code, no dependency).

ORC's postscript and footer are protobuf messages (``orc_proto.proto``). Reading one field or
appending one needs only the wire format: a key varint ``(field << 3) | wire type`` per field.
"""
from __future__ import annotations

from ..exceptions import CorruptFileError


def varint(n: int) -> bytes:
    """``n`` (>= 0) as a base-128 varint."""
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def read_varint(buf: bytes, i: int) -> tuple[int, int]:
    """(value, next position) of the varint at ``buf[i]``."""
    shift = value = 0
    while True:
        if i >= len(buf):
            raise CorruptFileError("Truncated varint in an ORC file tail")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, i


def fields(buf: bytes) -> list[tuple[int, int, bytes]]:
    """(field number, wire type, raw value bytes) of a serialized protobuf message, in order.
    For a length-delimited field (wire type 2) the raw bytes include the length prefix."""
    out, i = [], 0
    while i < len(buf):
        key, i = read_varint(buf, i)
        num, wire = key >> 3, key & 7
        start = i
        if wire == 0:
            _, i = read_varint(buf, i)
        elif wire == 2:
            n, i = read_varint(buf, i)
            i += n
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            raise CorruptFileError(f"Unsupported protobuf wire type {wire} in an ORC file tail")
        if i > len(buf):
            raise CorruptFileError("Truncated field in an ORC file tail")
        out.append((num, wire, buf[start:i]))
    return out


def payload(raw: bytes) -> bytes:
    """The bytes of a length-delimited field's raw value (its length prefix removed)."""
    n, i = read_varint(raw, 0)
    return raw[i:i + n]
