"""Thrift structures -> the plain value objects of :mod:`.model` (and back for storage)."""
from __future__ import annotations

from typing import Any, Sequence

from ..exceptions import NotAnAcidTableError
from ._thrift import bindings
from .model import PartitionInfo, TableInfo
from .partitions import make_partition_name


def check_acid(info: TableInfo) -> None:
    """Raise NotAnAcidTableError unless ``info`` is a transactional table."""
    if (info.table_type or "").upper() == "VIRTUAL_VIEW":
        raise NotAnAcidTableError(f"{info.full_name} is a view, not a Hive ACID table; read it "
                                  f"with spark.read.table('{info.full_name}')")
    if not info.is_transactional:
        raise NotAnAcidTableError(
            f"Table {info.full_name} is not a Hive ACID table (TBLPROPERTIES 'transactional' is "
            f"{info.parameters.get('transactional', 'not set')!r}); read it with "
            f"spark.read.table('{info.full_name}')")


def table_info_from_thrift(t: Any) -> TableInfo:
    sd = t.sd
    serde = sd.serdeInfo if sd is not None else None
    return TableInfo(
        db=t.dbName, name=t.tableName, location=(sd.location if sd else None) or "",
        columns=tuple((c.name, c.type) for c in (sd.cols if sd else None) or []),
        partition_keys=tuple((c.name, c.type) for c in t.partitionKeys or []),
        bucket_cols=tuple(sd.bucketCols or []) if sd else (),
        num_buckets=int(sd.numBuckets) if sd and sd.numBuckets is not None else -1,
        parameters=dict(t.parameters or {}),
        input_format=sd.inputFormat if sd else None,
        output_format=sd.outputFormat if sd else None,
        serde=serde.serializationLib if serde else None,
        serde_parameters=dict(serde.parameters or {}) if serde else {},
        table_type=t.tableType, owner=t.owner)


def partition_info_from_thrift(p: Any, keys: Sequence[str]) -> PartitionInfo:
    values = tuple(p.values or [])
    return PartitionInfo(values, make_partition_name(keys, list(values)),
                         (p.sd.location if p.sd else None) or "", dict(p.parameters or {}))


def copy_storage_descriptor(sd: Any, location: str) -> Any:
    _, tt = bindings()
    serde = sd.serdeInfo
    return tt.StorageDescriptor(
        cols=list(sd.cols or []), location=location, inputFormat=sd.inputFormat,
        outputFormat=sd.outputFormat, compressed=sd.compressed, numBuckets=sd.numBuckets,
        serdeInfo=tt.SerDeInfo(name=serde.name, serializationLib=serde.serializationLib,
                               parameters=dict(serde.parameters or {})) if serde else None,
        bucketCols=list(sd.bucketCols or []), sortCols=list(sd.sortCols or []),
        parameters=dict(sd.parameters or {}), skewedInfo=sd.skewedInfo,
        storedAsSubDirectories=sd.storedAsSubDirectories)
