"""Concatenate ORC files of one schema into one file at the stripe level, without decoding.

A stripe is self-contained (its streams' positions are relative to the stripe), so the stripes of
the sources are copied byte for byte, one after the other, and one new file tail is written:

* Metadata: the sources' stripe statistics, in stripe order (copied; nothing to merge).
* Footer: the stripes with their new offsets; the sources' types (they must be identical); the
  row count; the file-level column statistics merged (counts, hasNull, bytes on disk, and the
  minimum / maximum / sum of each type where every source states them; what cannot be merged
  exactly is left out, which the ORC specification allows: a reader then assumes nothing); the
  user metadata given by the caller. Every other field is the first source's.
* PostScript: the first source's, with the new section lengths.

Metadata and Footer are written as *original* (stored) chunks, valid under every codec
(``orc_tail.as_original_chunks``). Used by compaction to write one ``bucket_N`` file from
segments written in parallel (``compaction.segments``).
"""
from __future__ import annotations

import struct
from decimal import Decimal
from typing import Any, BinaryIO, Callable, Mapping, Optional, Sequence

from ..exceptions import CorruptFileError
from ..io.filesystem import FileSystem
from ..io.protobuf import fields, payload, read_varint, varint
from .orc_tail import Tail, as_original_chunks, encode_postscript, encode_user_metadata, read_tail

# Footer / StripeInformation / ColumnStatistics field numbers (orc_proto.proto)
_F_CONTENT, _F_STRIPES, _F_TYPES, _F_USER, _F_ROWS, _F_STATS = 2, 3, 4, 5, 6, 7
_S_OFFSET, _S_INDEX, _S_DATA, _S_FOOTER, _S_ROWS = 1, 2, 3, 4, 5
_C_VALUES, _C_HAS_NULL, _C_BYTES = 1, 10, 12
_PS_FOOTER_LENGTH, _PS_METADATA_LENGTH = 1, 5
_MAGIC = b"ORC"
_COPY_CHUNK = 8 << 20
_INT64 = (-(1 << 63), (1 << 63) - 1)

MergeMetadata = Callable[[list[dict[str, bytes]]], Mapping[str, bytes]]


def _zigzag(n: int) -> int:
    return (n << 1) ^ (n >> 63) if n < 0 else n << 1


def _unzigzag(n: int) -> int:
    return (n >> 1) ^ -(n & 1)


def _message(raw_by_field: list[tuple[int, int, bytes]]) -> dict[int, list[tuple[int, bytes]]]:
    out: dict[int, list[tuple[int, bytes]]] = {}
    for num, wire, raw in raw_by_field:
        out.setdefault(num, []).append((wire, raw))
    return out


def _key(num: int, wire: int) -> bytes:
    return varint((num << 3) | wire)


def _ld(num: int, data: bytes) -> bytes:
    return _key(num, 2) + varint(len(data)) + data


def _uint(msg: dict, num: int) -> Optional[int]:
    return read_varint(msg[num][0][1], 0)[0] if num in msg else None


# --- file-level column statistics ----------------------------------------------------------------
# per statistics kind: field -> (how to merge, value codec)
_SINT, _UINT, _DOUBLE, _BYTES, _DECIMAL = "sint", "uint", "double", "bytes", "decimal"
_KINDS = {
    2: {1: ("min", _SINT), 2: ("max", _SINT), 3: ("sum", _SINT)},  # integer
    3: {1: ("min", _DOUBLE), 2: ("max", _DOUBLE), 3: ("sum", _DOUBLE)},  # double
    4: {1: ("min", _BYTES), 2: ("max", _BYTES), 3: ("sum", _SINT)},  # string (no bounds)
    6: {1: ("min", _DECIMAL), 2: ("max", _DECIMAL), 3: ("sum", _DECIMAL)},  # decimal
    7: {1: ("min", _SINT), 2: ("max", _SINT)},  # date
    8: {1: ("sum", _SINT)},  # binary
    11: {1: ("min", _UINT), 2: ("max", _UINT), 3: ("sum", _UINT)},  # collection
}
_BUCKET, _TIMESTAMP, _STRING = 5, 9, 4


def _decode(codec: str, wire: int, raw: bytes) -> Any:
    """The value of one statistics field: a float, bytes, Decimal or int, by ``codec``."""
    if codec == _DOUBLE:
        return struct.unpack("<d", raw)[0]
    if codec == _BYTES:
        return payload(raw)
    if codec == _DECIMAL:
        return Decimal(payload(raw).decode("ascii"))
    n = read_varint(raw, 0)[0]
    return _unzigzag(n) if codec == _SINT else n


def _encode(num: int, codec: str, value: Any) -> Optional[bytes]:
    if codec == _DOUBLE:
        return _key(num, 1) + struct.pack("<d", value)
    if codec == _BYTES:
        return _ld(num, value)
    if codec == _DECIMAL:
        if len(value.as_tuple().digits) > 38:
            return None  # overflows a decimal(38): Hive leaves the sum out too
        return _ld(num, format(value, "f").encode("ascii"))
    if codec == _SINT:
        if not _INT64[0] <= value <= _INT64[1]:
            return None  # overflowed: unknown
        return _key(num, 0) + varint(_zigzag(value))
    return _key(num, 0) + varint(value)


def _merge_kind(kind: int, subs: list[dict]) -> bytes:
    """One merged type-specific statistics message; ``subs``: each source's (with values)."""
    if kind == _BUCKET:  # count per boolean value: packed uint64, added element-wise
        counts: list[int] = []
        for m in subs:
            vals = []
            for wire, raw in m.get(1, []):
                if wire == 2:
                    data, i = payload(raw), 0
                    while i < len(data):
                        v, i = read_varint(data, i)
                        vals.append(v)
                else:
                    vals.append(read_varint(raw, 0)[0])
            counts = [a + b for a, b in zip(counts, vals)] if counts else vals
        return _ld(1, b"".join(varint(c) for c in counts)) if counts else b""
    if kind == _TIMESTAMP:
        return _merge_timestamp(subs)
    out = b""
    bounded = kind == _STRING and any(4 in m or 5 in m for m in subs)
    for num, (how, codec) in _KINDS[kind].items():
        if bounded and how != "sum":
            continue  # truncated strings: lower/upper bounds only; leave min/max out
        if not all(num in m for m in subs):
            continue
        values = [_decode(codec, *m[num][0]) for m in subs]
        value = min(values) if how == "min" else max(values) if how == "max" else sum(values)
        enc = _encode(num, codec, value)
        out += enc or b""
    return out


def _merge_timestamp(subs: list[dict]) -> bytes:
    """Minimum from the source with the least (utc or local millis, nanos), maximum likewise:
    their fields (millis, utc millis, nanos) are copied together."""
    out = b""
    for group, pick in (((1, 3, 5), min), ((2, 4, 6), max)):
        present = {tuple(n for n in group if n in m) for m in subs}
        if len(present) != 1 or not next(iter(present)):
            continue
        millis = group[1] if group[1] in subs[0] else group[0]

        def order(m: dict) -> tuple[int, int]:
            nanos = read_varint(m[group[2]][0][1], 0)[0] if group[2] in m else 0
            return _unzigzag(read_varint(m[millis][0][1], 0)[0]), nanos

        best = pick(subs, key=order)
        for n in group:
            if n in best:
                wire, raw = best[n][0]
                out += _key(n, wire) + raw
    return out


def merge_column_statistics(stats: list[bytes]) -> bytes:
    """One file-level ``ColumnStatistics`` (serialized) from the sources' of one column."""
    msgs = [_message(fields(s)) for s in stats]
    values = [_uint(m, _C_VALUES) or 0 for m in msgs]
    out = _key(_C_VALUES, 0) + varint(sum(values))
    with_values = [m for m, v in zip(msgs, values) if v > 0] or msgs[:1]
    kinds = {n for m in msgs for n in m if n not in (_C_VALUES, _C_HAS_NULL, _C_BYTES)}
    for kind in sorted(kinds):
        if kind not in _KINDS and kind not in (_BUCKET, _TIMESTAMP):
            continue  # a kind this module does not know: left out
        if not all(kind in m for m in with_values):
            continue
        subs = [_message(fields(payload(m[kind][0][1]))) for m in with_values]
        out += _ld(kind, _merge_kind(kind, subs))
    if any(_C_HAS_NULL in m for m in msgs):
        out += _key(_C_HAS_NULL, 0) + varint(int(any(_uint(m, _C_HAS_NULL) for m in msgs)))
    if all(_C_BYTES in m for m in msgs):
        out += _key(_C_BYTES, 0) + varint(sum(_uint(m, _C_BYTES) or 0 for m in msgs))
    return out


# --- the concatenation ---------------------------------------------------------------------------
class _Source:
    def __init__(self, fs: FileSystem, path: str):
        self.path = path
        with fs.open_input(path) as f:
            if f.read(3) != _MAGIC:
                raise CorruptFileError(f"{path} is not an ORC file")
            try:
                self.tail: Tail = read_tail(f)
                self.footer = _message(fields(self.tail.decoded_footer()))
                self.metadata = self.tail.decoded_metadata()
            except CorruptFileError as e:
                raise CorruptFileError(f"{path}: {e}") from e
        self.stripes = [_message(fields(payload(raw))) for _, raw in self.footer.get(_F_STRIPES, [])]
        self.rows = _uint(self.footer, _F_ROWS) or 0

    def user_metadata(self) -> dict[str, bytes]:
        out = {}
        for _, raw in self.footer.get(_F_USER, []):
            item = _message(fields(payload(raw)))
            out[payload(item[1][0][1]).decode("utf-8")] = payload(item[2][0][1]) if 2 in item else b""
        return out


def concat_orc(fs: FileSystem, sources: Sequence[str], target: str,
               merge_metadata: Optional[MergeMetadata] = None) -> int:
    """Write ``target``: the stripes of ``sources`` (ORC files of identical schema, codec and
    compression block size), in order, with one merged tail (module docstring). The user
    metadata of ``target`` is ``merge_metadata(each source's user metadata)`` (none without it).
    Sources without rows contribute nothing. Returns the rows written."""
    if not sources:
        raise CorruptFileError(f"Nothing to concatenate into {target}")
    srcs = [_Source(fs, p) for p in sources]
    first = srcs[0]
    for s in srcs[1:]:
        if (s.footer.get(_F_TYPES) != first.footer.get(_F_TYPES)
                or (s.tail.compression, s.tail.block_size) != (first.tail.compression,
                                                               first.tail.block_size)):
            raise CorruptFileError(
                f"Cannot concatenate {s.path} after {first.path}: their schemas or compression "
                "differ")
    user = dict(merge_metadata([s.user_metadata() for s in srcs])) if merge_metadata else {}
    kept = [s for s in srcs if s.rows > 0] or srcs[:1]
    stripe_fields, stats_meta = [], []
    offset = len(_MAGIC)
    # a store that writes in place gets the file whole or not at all, only where none is
    with (fs.open_output_exclusive(target) if fs.writes_in_place else fs.open_output(target)) \
            as out:
        out.write(_MAGIC)
        for s in kept:
            with fs.open_input(s.path, size=s.tail.size) as f:
                for st in s.stripes:
                    start = _uint(st, _S_OFFSET)
                    if start is None:
                        raise CorruptFileError(f"{s.path}: a stripe without its offset")
                    length = sum(_uint(st, n) or 0 for n in (_S_INDEX, _S_DATA, _S_FOOTER))
                    _copy(f, out, start, length, s.path)
                    body = _key(_S_OFFSET, 0) + varint(offset) + b"".join(
                        _key(n, w) + raw for n, vals in st.items() if n != _S_OFFSET
                        for w, raw in vals)
                    stripe_fields.append(_ld(_F_STRIPES, body))
                    offset += length
            stats_meta.append(s.metadata)
        metadata = b"".join(stats_meta)  # repeated StripeStatistics (field 1), in stripe order
        footer = _footer(first, kept, stripe_fields, offset, user)
        if first.tail.compression != 0:
            metadata = as_original_chunks(metadata, first.tail.block_size)
            footer = as_original_chunks(footer, first.tail.block_size)
        out.write(metadata)
        out.write(footer)
        out.write(encode_postscript(first.tail.ps_fields, {_PS_FOOTER_LENGTH: len(footer),
                                                           _PS_METADATA_LENGTH: len(metadata)}))
    return sum(s.rows for s in kept)


def _footer(first: _Source, kept: list[_Source], stripes: list[bytes], content_length: int,
            user: Mapping[str, bytes]) -> bytes:
    """The new Footer, fields in the first source's order (the replaced ones where they were)."""
    per_column = [[payload(raw) for _, raw in s.footer.get(_F_STATS, [])] for s in kept]
    if len({len(c) for c in per_column}) != 1:
        raise CorruptFileError(f"{first.path}: the files to concatenate have different statistics")
    merged = [_ld(_F_STATS, merge_column_statistics(list(col))) for col in zip(*per_column)]
    replaced = {
        _F_CONTENT: _key(_F_CONTENT, 0) + varint(content_length),
        _F_STRIPES: b"".join(stripes),
        _F_ROWS: _key(_F_ROWS, 0) + varint(sum(s.rows for s in kept)),
        _F_STATS: b"".join(merged),
        _F_USER: encode_user_metadata(user),
    }
    out, done = b"", set()
    for num, vals in first.footer.items():
        if num in replaced:
            out += replaced[num]
            done.add(num)
        else:
            out += b"".join(_key(num, w) + raw for w, raw in vals)
    return out + b"".join(v for n, v in replaced.items() if n not in done)


def _copy(f: BinaryIO, out: BinaryIO, start: int, length: int, path: str) -> None:
    f.seek(start)
    left = length
    while left:
        chunk = f.read(min(left, _COPY_CHUNK))
        if not chunk:
            raise CorruptFileError(f"{path} ends inside a stripe")
        out.write(chunk)
        left -= len(chunk)
