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
from typing import BinaryIO, Mapping

from ..exceptions import CorruptFileError
from ..io.protobuf import fields as _fields, read_varint as _read_varint, varint as _varint

_FOOTER_METADATA_FIELD = 5
_PS_FOOTER_LENGTH_FIELD = 1
_PS_COMPRESSION_FIELD = 2
_PS_BLOCK_SIZE_FIELD = 3
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


def _as_original_chunks(data: bytes, block_size: int) -> bytes:
    out = bytearray()
    step = max(1, min(block_size or _MAX_CHUNK, _MAX_CHUNK))
    for i in range(0, len(data), step):
        part = data[i:i + step]
        header = (len(part) << 1) | 1
        out += bytes((header & 0xFF, (header >> 8) & 0xFF, (header >> 16) & 0xFF)) + part
    return bytes(out)


def add_user_metadata(f: BinaryIO, items: Mapping[str, bytes]) -> None:
    """Append user metadata to the ORC file open in ``f`` (read/write, seekable) in place."""
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
    footer_len, _ = _read_varint(values[_PS_FOOTER_LENGTH_FIELD], 0)
    compression = _read_varint(values[_PS_COMPRESSION_FIELD], 0)[0] if _PS_COMPRESSION_FIELD in values else 0
    block = _read_varint(values[_PS_BLOCK_SIZE_FIELD], 0)[0] if _PS_BLOCK_SIZE_FIELD in values else 0
    extra = encode_user_metadata(items)
    if compression != 0:  # NONE = 0: the footer is raw protobuf, otherwise a chunk stream
        extra = _as_original_chunks(extra, block)
    new_ps = b""
    for num, wire, raw in fields:
        key = _varint((num << 3) | wire)
        if num == _PS_FOOTER_LENGTH_FIELD:
            new_ps += key + _varint(footer_len + len(extra))
        else:
            new_ps += key + raw
    if len(new_ps) > 255:
        raise CorruptFileError("ORC postscript would exceed 255 bytes")
    f.seek(size - 1 - ps_len)
    f.truncate()
    f.write(extra + new_ps + bytes((len(new_ps),)))


def add_user_metadata_to_bytes(data: bytes, items: Mapping[str, bytes]) -> bytes:
    buf = io.BytesIO(data)
    add_user_metadata(buf, items)
    return buf.getvalue()
