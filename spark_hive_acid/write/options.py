"""Write options, parsed once from Spark's case-insensitive string options (the registry,
``spark_hive_acid.options``, declares each one; docs/writing.md lists them)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

from .. import options as opt
from ..exceptions import InvalidOptionError
from .acid_file import orc_codec
from .plain_file import check_format


DEFAULT_TXN_TIMEOUT_S: float = opt.default("txnTimeoutSeconds")


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
        bucket_by = opt.value(options, "bucketBy") or []
        num_buckets = opt.value(options, "numBuckets")
        if bucket_by and not num_buckets:
            raise InvalidOptionError("Option bucketBy needs numBuckets (a positive integer)")
        if num_buckets is not None and (num_buckets <= 0 or num_buckets > 4096):
            raise InvalidOptionError(f"Option numBuckets must be in 1..4096, not {num_buckets}")
        if num_buckets and not bucket_by:
            raise InvalidOptionError("Option numBuckets needs bucketBy (the CLUSTERED BY columns)")
        version = opt.value(options, "bucketingVersion")
        if version is not None and version not in (1, 2):
            raise InvalidOptionError(f"Option bucketingVersion must be 1 or 2, not {version}")
        file_format = opt.value(options, "fileFormat")
        if file_format is not None:
            file_format = check_format(file_format)
        compression = opt.value(options, "compression")
        if compression is not None and file_format != "parquet":
            orc_codec(compression)  # validates (Parquet codecs: write.plain_file.parquet_codec)
        if compression is not None:
            compression = compression.upper()
        return cls(path=path, partition_by=opt.value(options, "partitionBy") or [],
                   bucket_by=bucket_by, num_buckets=num_buckets,
                   bucketing_version=version,
                   compression=compression,
                   table_properties=opt.value(options, "tableProperties") or {},
                   dynamic_overwrite=opt.value(options, "partitionOverwriteMode") == "dynamic",
                   txn_timeout_s=opt.value(options, "txnTimeoutSeconds"),
                   file_format=file_format, raw=opt.lowered(options))
