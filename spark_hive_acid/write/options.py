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
| ``fileFormat`` | ``orc`` or ``parquet`` (table creation; Parquet: insert-only tables only) | orc |
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

from .. import options as opt
from ..exceptions import InvalidOptionError
from .acid_file import orc_codec
from .plain_file import check_format


DEFAULT_TXN_TIMEOUT_S = 3600.0


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
    txn_timeout_s: float = DEFAULT_TXN_TIMEOUT_S
    file_format: Optional[str] = None  # orc | parquet (a new table's data files)
    raw: dict[str, str] = field(default_factory=dict)  # every option, for the file system

    @classmethod
    def parse(cls, options: Mapping[str, str], *, require_path: bool = True) -> "WriteOptions":
        opt.check_known(options, "hiveacid write", (opt.WRITE, opt.METASTORE, opt.STORAGE))
        path = opt.get_str(options, "path") or ""
        if not path and require_path:
            raise InvalidOptionError(
                "No table path given: use df.write.format('hiveacid').save('/path/to/table')")
        bucket_by = opt.get_columns(options, "bucketBy")
        num_buckets = opt.get_int(options, "numBuckets", None)
        if bucket_by and not num_buckets:
            raise InvalidOptionError("Option bucketBy needs numBuckets (a positive integer)")
        if num_buckets is not None and (num_buckets <= 0 or num_buckets > 4096):
            raise InvalidOptionError(f"Option numBuckets must be in 1..4096, not {num_buckets}")
        if num_buckets and not bucket_by:
            raise InvalidOptionError("Option numBuckets needs bucketBy (the CLUSTERED BY columns)")
        version = opt.get_int(options, "bucketingVersion", None)
        if version is not None and version not in (1, 2):
            raise InvalidOptionError(f"Option bucketingVersion must be 1 or 2, not {version}")
        file_format = opt.get_str(options, "fileFormat")
        if file_format is not None:
            file_format = check_format(file_format)
        compression = opt.get_str(options, "compression")
        if compression is not None and file_format != "parquet":
            orc_codec(compression)  # validates (Parquet codecs: write.plain_file.parquet_codec)
        if compression is not None:
            compression = compression.upper()
        mode = (opt.get_str(options, "partitionOverwriteMode") or "static").lower()
        if mode not in ("static", "dynamic"):
            raise InvalidOptionError(
                f"Option partitionOverwriteMode must be 'static' or 'dynamic', not '{mode}'")
        timeout_s = opt.get_seconds(options, "txnTimeoutSeconds", DEFAULT_TXN_TIMEOUT_S)
        return cls(path=path, partition_by=opt.get_columns(options, "partitionBy"),
                   bucket_by=bucket_by, num_buckets=num_buckets, bucketing_version=version,
                   compression=compression,
                   table_properties=opt.parse_properties(opt.get_str(options, "tableProperties")),
                   dynamic_overwrite=mode == "dynamic", txn_timeout_s=timeout_s,
                   file_format=file_format, raw=opt.lowered(options))
