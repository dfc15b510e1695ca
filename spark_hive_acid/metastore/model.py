"""Plain, picklable value objects for what the metastore returns (no Thrift types leak out)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from ..acid.layout import TableLayout

ORC_SERDE = "org.apache.hadoop.hive.ql.io.orc.OrcSerde"
ORC_INPUT_FORMAT = "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat"
ORC_OUTPUT_FORMAT = "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"

Column = tuple[str, str]
"""A column as ``(name, hive_type)``, e.g. ``("id", "int")``."""


@dataclass(frozen=True)
class TableInfo:
    """A metastore table: location, schema, bucketing and the parameters that make it ACID."""

    db: str
    name: str
    location: str
    columns: tuple[Column, ...]
    partition_keys: tuple[Column, ...] = ()
    bucket_cols: tuple[str, ...] = ()
    num_buckets: int = -1
    parameters: Mapping[str, str] = field(default_factory=dict, hash=False)
    input_format: Optional[str] = None
    output_format: Optional[str] = None
    serde: Optional[str] = None
    serde_parameters: Mapping[str, str] = field(default_factory=dict, hash=False)
    table_type: Optional[str] = None
    owner: Optional[str] = None

    @property
    def full_name(self) -> str:
        """``db.table`` in lower case, as Hive names tables in snapshots and locks."""
        return f"{self.db}.{self.name}".lower()

    @property
    def is_transactional(self) -> bool:
        return self.parameters.get("transactional", "").strip().lower() == "true"

    @property
    def transactional_properties(self) -> str:
        """``default`` (full ACID, split-update) unless the table says otherwise."""
        return (self.parameters.get("transactional_properties") or "default").strip().lower()

    @property
    def is_insert_only(self) -> bool:
        return self.is_transactional and self.transactional_properties == "insert_only"

    @property
    def is_full_acid(self) -> bool:
        return self.is_transactional and not self.is_insert_only

    @property
    def bucketing_version(self) -> int:
        """The ``bucketing_version`` property; absent means 1 (tables made before Hive 3)."""
        raw = self.parameters.get("bucketing_version", "").strip()
        return int(raw) if raw.isdigit() else 1

    @property
    def is_partitioned(self) -> bool:
        return bool(self.partition_keys)

    @property
    def is_bucketed(self) -> bool:
        return bool(self.bucket_cols) and self.num_buckets > 0

    @property
    def column_names(self) -> list[str]:
        return [c for c, _ in self.columns]

    @property
    def partition_names(self) -> list[str]:
        return [c for c, _ in self.partition_keys]

    def to_layout(self) -> TableLayout:
        """The layout the table declares (columns, partitions, bucketing, properties)."""
        return TableLayout(
            columns=list(self.columns),
            partition_columns=list(self.partition_keys),
            bucket_columns=list(self.bucket_cols),
            num_buckets=max(self.num_buckets, 0) if self.bucket_cols else 0,
            bucketing_version=self.bucketing_version,
            properties=dict(self.parameters),
        )


@dataclass(frozen=True)
class PartitionInfo:
    """One partition: its values (in partition-key order), Hive name and location."""

    values: tuple[str, ...]
    name: str
    location: str
    parameters: Mapping[str, str] = field(default_factory=dict, hash=False)

    def spec(self, keys: tuple[Column, ...] | list[str]) -> dict[str, str]:
        """``{key: value}`` for the table's partition keys."""
        names = [k if isinstance(k, str) else k[0] for k in keys]
        return dict(zip(names, self.values))


@dataclass(frozen=True)
class TxnStatus:
    """A transaction the metastore still tracks (``get_open_txns_info``): open or aborted."""

    txn_id: int
    state: str
    user: Optional[str] = None
    hostname: Optional[str] = None
    agent_info: Optional[str] = None
    started_ms: Optional[int] = None
    last_heartbeat_ms: Optional[int] = None

    @property
    def is_open(self) -> bool:
        return self.state == "OPEN"

    @property
    def is_aborted(self) -> bool:
        return self.state == "ABORTED"


@dataclass(frozen=True)
class OpenTxnsInfo:
    """The global transaction high watermark and every open or aborted transaction."""

    high_watermark: int
    txns: tuple[TxnStatus, ...]

    @property
    def open_ids(self) -> list[int]:
        return sorted(t.txn_id for t in self.txns if t.is_open)

    @property
    def aborted_ids(self) -> list[int]:
        return sorted(t.txn_id for t in self.txns if t.is_aborted)

    def get(self, txn_id: int) -> Optional[TxnStatus]:
        return next((t for t in self.txns if t.txn_id == txn_id), None)


@dataclass(frozen=True)
class LockInfo:
    """One lock component as ``show_locks`` reports it."""

    lock_id: int
    db: str
    table: Optional[str]
    partition: Optional[str]
    state: str
    type: str
    txn_id: int
    last_heartbeat_ms: int
    acquired_ms: Optional[int]
    user: Optional[str]
    hostname: Optional[str]
    agent_info: Optional[str] = None
    blocked_by_lock_id: Optional[int] = None


@dataclass(frozen=True)
class CompactionInfo:
    """One entry of ``show_compact``."""

    id: Optional[int]
    db: str
    table: str
    partition: Optional[str]
    type: str
    state: str
    worker_id: Optional[str] = None
    start_ms: Optional[int] = None
    run_as: Optional[str] = None
    highest_txn_id: Optional[int] = None
    end_ms: Optional[int] = None


@dataclass(frozen=True)
class CompactionRequestResult:
    """The answer to a compaction request: ``accepted`` is False when one is already queued."""

    id: int
    state: str
    accepted: bool


def enum_name(enum_cls: Any, value: Optional[int]) -> str:
    """A Thrift enum value's name (``LockType`` 1 -> ``SHARED_READ``), or ``str(value)``."""
    if value is None:
        return "UNKNOWN"
    return str(getattr(enum_cls, "_VALUES_TO_NAMES", {}).get(value, value))


#: Hive 4's lock type beyond the 3.x bindings' LockType enum (hive-exec-4.1.0: EXCL_WRITE = 4)
EXTRA_LOCK_TYPES = {"EXCL_WRITE": 4}


def lock_type_name(value: Optional[int]) -> str:
    """``LockType`` value -> name, Hive 4's ``EXCL_WRITE`` included."""
    from ._thrift import bindings

    extra = {v: k for k, v in EXTRA_LOCK_TYPES.items()}
    if value in extra:
        return extra[value]
    return enum_name(bindings()[1].LockType, value)


def lock_type_value(name: str) -> int:
    """``LockType`` name -> value, Hive 4's ``EXCL_WRITE`` included."""
    from ._thrift import bindings

    if name in EXTRA_LOCK_TYPES:
        return EXTRA_LOCK_TYPES[name]
    return int(getattr(bindings()[1].LockType, name))
