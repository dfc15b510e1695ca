"""BucketCodec: the packed 32-bit ``bucket`` property of a ROW__ID (docs/format.md §5.3).

V1 (Hive 3+): bits 31..29 = 001, bits 27..16 = writer id, bits 11..0 = statement id.
V0 (Hive 2): the whole int is the bucket number.
"""
from __future__ import annotations

import numpy as np

from ..exceptions import InvalidOptionError

V1_TAG = 1 << 29
_VERSION_SHIFT = 29
_WRITER_SHIFT = 16
_WRITER_MASK = 0xFFF
_STMT_MASK = 0xFFF
MAX_WRITER_ID = 4095
MAX_STATEMENT_ID = 4095


def version_of(bucket_property: int) -> int:
    return (bucket_property & 0xFFFFFFFF) >> _VERSION_SHIFT


def encode(writer_id: int, statement_id: int = 0) -> int:
    """V1 bucket property for writer N and statement S (S=-1 encodes as 0)."""
    if not 0 <= writer_id <= MAX_WRITER_ID:
        raise InvalidOptionError(f"writer/bucket id {writer_id} out of range 0..{MAX_WRITER_ID}")
    stmt = max(statement_id, 0)
    if stmt > MAX_STATEMENT_ID:
        raise InvalidOptionError(f"statement id {statement_id} out of range 0..{MAX_STATEMENT_ID}")
    return V1_TAG | (writer_id << _WRITER_SHIFT) | stmt


def decode_writer_id(bucket_property: int) -> int:
    if version_of(bucket_property) == 0:
        return bucket_property
    return (bucket_property >> _WRITER_SHIFT) & _WRITER_MASK


def decode_statement_id(bucket_property: int) -> int:
    if version_of(bucket_property) == 0:
        return 0
    return bucket_property & _STMT_MASK


def decode_writer_ids(bucket_properties: np.ndarray) -> np.ndarray:
    """Vectorised :func:`decode_writer_id` over an int32 array."""
    bp = bucket_properties.astype(np.int64) & 0xFFFFFFFF
    v1 = (bp >> _VERSION_SHIFT) != 0
    return np.where(v1, (bp >> _WRITER_SHIFT) & _WRITER_MASK, bp).astype(np.int32)
