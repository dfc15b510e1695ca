"""Add user metadata to a finished ORC file by rewriting only its tail.

pyarrow's ORC writer is columnar and fast but cannot set footer user metadata, which Hive ACID files
need (``hive.acid.key.index``...). pyorc can, but only takes rows one Python tuple at a time (see
docs/writing.md for the measurements). So we write with pyarrow and then patch the tail:

``... [footer (compressed stream)] [postscript] [1 byte: postscript length]``

* A protobuf message may be extended by appending more fields: appending ``Footer.metadata`` (field
  5, ``UserMetadataItem{name=1, value=2}``) entries to the serialized footer merges them in.
* The footer is a compressed stream of chunks, each with a 3-byte header ``(len << 1) | isOriginal``.
  An *original* (uncompressed) chunk is valid under every codec, so the new entries are appended as
  one more chunk; nothing needs decompressing.
* The postscript (never compressed) gets the new ``footerLength`` (field 1); all its other fields
  are copied byte for byte.
"""
from __future__ import annotations

import io
import os
from dataclasses import dataclass
from typing import BinaryIO, Mapping

from ..exceptions import CorruptFileError
from ..io.protobuf import fields as _fields, read_varint as _read_varint, varint as _varint

_FOOTER_METADATA_FIELD = 5
_PS_FOOTER_LENGTH_FIELD = 1
_PS_COMPRESSION_FIELD = 2
_PS_BLOCK_SIZE_FIELD = 3
_PS_METADATA_LENGTH_FIELD = 5
_MAX_CHUNK = (1 << 23) - 1  # 23 bits of chunk length


def _length_delimited(field: int, payload: bytes) -> bytes:
    return _varint((field << 3) | 2) + _varint(len(payload)) + payload


def encode_user_metadata(items: Mapping[str, bytes]) -> bytes:
    """Serialized ``Footer.metadata`` entries for ``items``."""
    out = b""
    for name, value in items.items():
        item = _length_delimited(1, name.encode("utf-8")) + _length_delimited(2, value)
        out += _length_delimited(_FOOTER_METADATA_FIELD, item)
    return out


def as_original_chunks(data: bytes, block_size: int) -> bytes:
    """``data`` as a compressed stream of *original* (stored) chunks, valid under every codec."""
    out = bytearray()
    step = max(1, min(block_size or _MAX_CHUNK, _MAX_CHUNK))
    for i in range(0, len(data), step):
        part = data[i:i + step]
        header = (len(part) << 1) | 1
        out += bytes((header & 0xFF, (header >> 8) & 0xFF, (header >> 16) & 0xFF)) + part
    return bytes(out)


@dataclass(frozen=True)
class Tail:
    """An ORC file's tail: the postscript's fields and the footer and metadata sections, still
    compressed (``footer``, ``metadata``: the bytes as stored)."""

    size: int  # of the whole file
    ps_length: int
    ps_fields: list  # (field, wire type, raw) of the postscript, in order
    footer_length: int
    metadata_length: int
    compression: int  # CompressionKind: 0 NONE, 1 ZLIB, 2 SNAPPY, 3 LZO, 4 LZ4, 5 ZSTD
    block_size: int
    footer: bytes = b""
    metadata: bytes = b""

    def decoded_footer(self) -> bytes:
        return decompress_stream(self.footer, self.compression)

    def decoded_metadata(self) -> bytes:
        return decompress_stream(self.metadata, self.compression)


def read_tail(f: BinaryIO, *, sections: bool = True) -> Tail:
    """The tail of the ORC file open in ``f`` (seekable); ``sections``: also read the footer and
    metadata bytes."""
    f.seek(0, os.SEEK_END)
    size = f.tell()
    if size < 4:
        raise CorruptFileError("File too short to be ORC")
    f.seek(size - 1)
    ps_len = f.read(1)[0]
    f.seek(size - 1 - ps_len)
    ps = f.read(ps_len)
    fields = _fields(ps)
    values = {num: raw for num, _, raw in fields}
    if _PS_FOOTER_LENGTH_FIELD not in values:
        raise CorruptFileError("ORC postscript has no footer length")

    def num(field: int) -> int:
        return _read_varint(values[field], 0)[0] if field in values else 0

    footer_len, meta_len = num(_PS_FOOTER_LENGTH_FIELD), num(_PS_METADATA_LENGTH_FIELD)
    footer = metadata = b""
    if sections:
        start = size - 1 - ps_len - footer_len - meta_len
        if start < 3:
            raise CorruptFileError("ORC file tail longer than the file")
        f.seek(start)
        metadata = f.read(meta_len)
        footer = f.read(footer_len)
    return Tail(size, ps_len, fields, footer_len, meta_len, num(_PS_COMPRESSION_FIELD),
                num(_PS_BLOCK_SIZE_FIELD), footer, metadata)


def decompress_stream(data: bytes, compression: int) -> bytes:
    """The bytes of an ORC compressed stream (chunks with a 3-byte header
    ``(length << 1) | isOriginal``), for a tail section."""
    if compression == 0:
        return data
    out, i = bytearray(), 0
    while i < len(data):
        if i + 3 > len(data):
            raise CorruptFileError("Truncated compression chunk header in an ORC file tail")
        header = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16)
        n = header >> 1
        chunk = data[i + 3:i + 3 + n]
        if len(chunk) != n:
            raise CorruptFileError("Truncated compression chunk in an ORC file tail")
        out += chunk if header & 1 else _decompress_chunk(chunk, compression)
        i += 3 + n
    return bytes(out)


def _decompress_chunk(chunk: bytes, compression: int) -> bytes:
    import zlib

    import pyarrow as pa

    if compression == 1:
        return zlib.decompress(chunk, -15)
    if compression == 2:  # raw snappy: the uncompressed length leads the chunk
        return pa.Codec("snappy").decompress(chunk, _read_varint(chunk, 0)[0], asbytes=True)
    if compression == 4:
        return pa.Codec("lz4_raw").decompress(chunk, _lz4_length(chunk), asbytes=True)
    if compression == 5:
        return pa.Codec("zstd").decompress(chunk, _zstd_content_size(chunk), asbytes=True)
    raise CorruptFileError(f"ORC compression kind {compression} is not supported here")


def _lz4_length(block: bytes) -> int:
    """Decompressed length of a raw LZ4 block (pyarrow needs it exactly), from its sequences."""
    i = total = 0
    while i < len(block):
        token = block[i]
        n, i = _lz4_count(block, i + 1, token >> 4)
        i += n
        total += n
        if i >= len(block):
            break  # the last sequence has literals only
        m, i = _lz4_count(block, i + 2, token & 15)  # after the 2-byte match offset
        total += m + 4
    return total


def _lz4_count(block: bytes, i: int, n: int) -> tuple[int, int]:
    """A token's length nibble ``n`` extended by the bytes at ``i`` (255: more follow)."""
    if n == 15:
        while True:
            b = block[i]
            i += 1
            n += b
            if b != 255:
                break
    return n, i


def _zstd_content_size(frame: bytes) -> int:
    """The frame content size of a zstd frame header (ORC's writers record it)."""
    if len(frame) < 6 or frame[:4] != b"\x28\xb5\x2f\xfd":
        raise CorruptFileError("Not a zstd frame in an ORC file tail")
    fhd = frame[4]
    fcs_flag, single, dict_flag = fhd >> 6, (fhd >> 5) & 1, fhd & 3
    i = 5 + (0 if single else 1) + (0, 1, 2, 4)[dict_flag]
    size = (1 if single else 0, 2, 4, 8)[fcs_flag]
    if size == 0:
        raise CorruptFileError("zstd frame without its content size in an ORC file tail")
    value = int.from_bytes(frame[i:i + size], "little")
    return value + 256 if size == 2 else value


def add_user_metadata(f: BinaryIO, items: Mapping[str, bytes]) -> None:
    """Append user metadata to the ORC file open in ``f`` (read/write, seekable) in place."""
    tail = read_tail(f, sections=False)
    extra = encode_user_metadata(items)
    if tail.compression != 0:  # NONE = 0: the footer is raw protobuf, otherwise a chunk stream
        extra = as_original_chunks(extra, tail.block_size)
    new_ps = encode_postscript(tail.ps_fields,
                               {_PS_FOOTER_LENGTH_FIELD: tail.footer_length + len(extra)})
    f.seek(tail.size - 1 - tail.ps_length)
    f.truncate()
    f.write(extra + new_ps)


def encode_postscript(fields: list, values: Mapping[int, int]) -> bytes:
    """The postscript ``fields`` (from :func:`read_tail`) with the varint fields in ``values``
    replaced, followed by its one-byte length (the last byte of an ORC file)."""
    out = b""
    for num, wire, raw in fields:
        key = _varint((num << 3) | wire)
        out += key + (_varint(values[num]) if num in values else raw)
    if len(out) > 255:
        raise CorruptFileError("ORC postscript would exceed 255 bytes")
    return out + bytes((len(out),))


def add_user_metadata_to_bytes(data: bytes, items: Mapping[str, bytes]) -> bytes:
    buf = io.BytesIO(data)
    add_user_metadata(buf, items)
    return buf.getvalue()
