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
    replace_where: Optional[str] = None  # an overwrite replaces the partitions this selects
    partition_spec: dict[str, str] = field(default_factory=dict)  # ... or those of this spec
    merge_schema: bool = False  # add the data's new columns to the table first
    raw: dict[str, str] = field(default_factory=dict)  # every option, for the file system

    @classmethod
    def parse(cls, options: Mapping[str, str], *, require_path: bool = True) -> "WriteOptions":
        opt.check_known(options, "hiveacid write", (opt.WRITE, opt.METASTORE, opt.STORAGE))
        path = opt.get_str(options, "path") or ""
        if not path and require_path:
            raise InvalidOptionError(
                "No table path given: use "
                "df.write.format('hiveacid').mode('append').save('/path/to/table')")
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
        replace_where = opt.value(options, "replaceWhere")
        partition_spec = opt.value(options, "partitionSpec") or {}
        dynamic = opt.value(options, "partitionOverwriteMode") == "dynamic"
        if replace_where is not None and partition_spec:
            raise InvalidOptionError(
                "Options replaceWhere and partitionSpec both say which partitions an overwrite "
                "replaces: give one of them")
        if dynamic and (replace_where is not None or partition_spec):
            raise InvalidOptionError(
                f"Option {'replaceWhere' if replace_where is not None else 'partitionSpec'} "
                "replaces the partitions it selects, partitionOverwriteMode=dynamic those the "
                "data has: give one of them")
        return cls(path=path, partition_by=opt.value(options, "partitionBy") or [],
                   bucket_by=bucket_by, num_buckets=num_buckets,
                   bucketing_version=version,
                   compression=compression,
                   table_properties=opt.value(options, "tableProperties") or {},
                   dynamic_overwrite=dynamic,
                   txn_timeout_s=opt.value(options, "txnTimeoutSeconds"),
                   file_format=file_format, replace_where=replace_where,
                   partition_spec=partition_spec,
                   merge_schema=bool(opt.value(options, "mergeSchema")),
                   raw=opt.lowered(options))
