"""The option registry's entries: every option, declared once (name, scopes, kind, default, the
docs' wording). Read through :mod:`spark_hive_acid.options`; the option tables of docs/*.md are
generated from here (``make docs``)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional

# scopes: where an option may be given. READ: a batch read (spark.read, read_table); STREAM:
# readStream; WRITE: df.write, writeStream, write_table; TABLE: the options HiveAcidTable keeps for
# every read and DML transaction of the table; INSPECT: `hiveacid -o`; METASTORE and STORAGE: how
# to reach the table, taken everywhere. ENTRY_POINTS says which scopes each entry point takes.
READ, WRITE, METASTORE, STORAGE = "read", "write", "metastore", "storage"
STREAM, TABLE, INSPECT = "stream", "table", "inspect"
# kinds: how a value is parsed (value())
STR, RAW, BOOL, INT, SECONDS, COLUMNS, PROPERTIES, CHOICE = (
    "str", "raw", "bool", "int", "seconds", "columns", "properties", "choice")


@dataclass(frozen=True)
class Option:
    """One option: its canonical (camelCase) name, the scopes that accept it, how its value is
    parsed, its default, and what it does (docs' wording)."""

    name: str
    scopes: frozenset[str]
    doc: str
    kind: str = STR
    default: Any = None
    default_doc: Optional[str] = None  # how docs state the default when it is not a plain value
    choices: tuple[str, ...] = ()
    minimum: Optional[int] = None
    maximum: Optional[int] = None

    @property
    def key(self) -> str:
        return self.name.lower()

    @property
    def default_text(self) -> str:
        if self.default_doc is not None:
            return self.default_doc
        if self.default is None:
            return "–"
        if isinstance(self.default, bool):
            return f"`{str(self.default).lower()}`"
        if isinstance(self.default, float) and self.default.is_integer():
            return str(int(self.default))
        return f"`{self.default}`" if isinstance(self.default, str) else str(self.default)


def _opt(name: str, scopes: Iterable[str], doc: str, kind: str = STR, default: Any = None,
         **extra: Any) -> Option:
    return Option(name, frozenset(scopes), doc, kind, default, **extra)



#: an option also given with a suffix: ``fs.azure.account.key.<account>.<host>`` (Hadoop ABFS)
AZURE_KEY = "fs.azure.account.key"
SUFFIXED = (AZURE_KEY,)

_BOTH = (READ, WRITE, STREAM)
_STORE = (READ, WRITE, STORAGE)
_HMS = (READ, WRITE, METASTORE)
MIB = 1024 * 1024

OPTIONS: tuple[Option, ...] = (
    # --- the table ---
    _opt("path", _BOTH, "the table directory: a local path or `file://` URI (remote schemes: see "
         "`docs/storage.md`); `load(path)` / `save(path)` set it", RAW),
    _opt("paths", (READ,), "set by Spark for `load([...])`; one table per load", RAW),
    _opt("table", _BOTH, "`db.table` in the Hive Metastore (instead of a path)"),
    # --- reading ---
    _opt("validWriteIds", (READ, INSPECT), "a `ValidReaderWriteIdList` string "
         "`db.table:HWM:minOpenWriteId:open,...:aborted,...` (or a `ValidTxnWriteIdList` naming "
         "one table) fixing the snapshot", RAW,
         default_doc="the table's path-mode transaction log if it has one, else \"everything "
         "present is committed\""),
    _opt("validTxns", (READ,), "a `ValidTxnList` (`HWM:minOpenTxn:open,...:aborted,...`; Hive 2's "
         "`HWM:minOpen:exc:exc` too), used only to judge `_vNNN` compactor directories", RAW,
         default_doc="all committed"),
    _opt("includeRowId", (READ, STREAM), "adds a first column `row__id struct<writeId:bigint,"
         "bucketId:int,rowId:bigint>`: the original write id, the full bucket property, the row "
         "id; synthetic for original (pre-ACID) files", BOOL, False),
    _opt("columns", (READ, STREAM), "comma-separated columns to read (data, partition, `row__id`). "
         "PySpark 4.3 gives Python sources no column pruning, so this (or a user `.schema(...)` "
         "naming a subset, or an empty `.schema(StructType([]))`) is how to avoid reading what "
         "you do not need. Example: `df.count()` reads and ships every column; "
         "`.option(\"columns\", \"id\").load(p).count()` decodes one column plus the ACID keys "
         "(about 4x faster on the benchmark table, docs/benchmarks.md)", COLUMNS,
         default_doc="all"),
    _opt("countRows", (READ,), "`true`: the DataFrame has one column `row_count bigint` and one "
         "row per Spark task, the number of visible rows that task read (sum them; "
         "`HiveAcidTable.count()` does). Deletes and the snapshot apply as in a normal read, but "
         "only the ACID keys the deletes need are decoded (none where stripe statistics prove "
         "them) and no row crosses to the JVM. Not combinable with `columns`, `includeRowId` or a "
         "user schema", BOOL, False),
    _opt("readLock", (READ, TABLE), "metastore tables: before planning, open a read-only "
         "transaction holding a SHARED_READ lock that every task heartbeats while it reads, so "
         "Hive's Cleaner (and `vacuum()`) keep the files the read planned; it ends "
         "`hive.txn.timeout` after the last heartbeat (docs/compaction.md)", BOOL, False),
    _opt("transactionalProperties", (READ, STREAM, TABLE), "`insert_only` for insert-only (MM) "
         "tables: plain ORC/Parquet files in `delta_*`/`base_*`", CHOICE, None,
         choices=("insert_only", "default", "split_update"),
         default_doc="from the table layout file, else full ACID"),
    _opt("splitSize", (READ, STREAM, TABLE), "target bytes per Spark task; larger files are split "
         "by stripe ranges", INT, 128 * MIB, minimum=1, default_doc="134217728 (128 MiB)"),
    _opt("rebaseDatetime", (READ, STREAM, TABLE), "dates and timestamps before 1582-10-15 in ORC "
         "files on the hybrid Julian/Gregorian calendar (Hive 2, Spark 2) read as their writer "
         "meant them; `false` reads every file's stored values as proleptic Gregorian, as pyarrow "
         "and Hive 3.1 do. See "
         "[Dates and timestamps before 1582](#dates-and-timestamps-before-1582)",
         BOOL, True),
    _opt("versionAsOf", (READ, INSPECT), "time travel: the table as of write id W (every committed "
         "write id up to W; W must be committed). See [Time travel](#time-travel)", INT),
    _opt("timestampAsOf", (READ, INSPECT), "time travel (path mode): the table as it was after the "
         "last commit at or before this time (`2026-11-25`, `2026-11-25 10:00:00` in UTC, or ISO "
         "8601 with an offset)"),
    _opt("maxDeleteEventsInMemory", (READ, STREAM, TABLE), "above this many delete events for one "
         "task, delete deltas are merged as sorted streams with bounded memory instead of loaded "
         "as one set (Hive's `hive.transactional.events.mem` fallback)", INT, 10_000_000,
         minimum=1),
    # --- streaming and the change feed (docs/streaming.md) ---
    _opt("startingVersion", (READ, STREAM), "a stream: start with the rows this write id inserted "
         "(`latest`: only write ids after the current version; without it, the current snapshot "
         "first). The change feed (batch, required): the first write id whose changes are "
         "returned",
         default_doc="– (a stream: the current snapshot first)"),
    _opt("endingVersion", (READ,), "the change feed (batch reads only): the last write id whose "
         "changes are returned; must not be above the current version",
         default_doc="the current version"),
    _opt("readChangeFeed", (READ, STREAM), "`true`: return the changes of a range of write ids, "
         "with "
         "`_change_type`, `_commit_version` and `_commit_timestamp`", BOOL, False),
    _opt("maxWriteIdsPerTrigger", (STREAM,), "a stream: at most this many write ids (that left "
         "files) per micro-batch", INT, minimum=1),
    _opt("maxFilesPerTrigger", (STREAM,), "a stream: about this many data files per micro-batch "
         "(always at least one write id)", INT, minimum=1),
    _opt("skipChangeCommits", (STREAM,), "a stream: skip write ids that delete or replace rows "
         "instead of failing", BOOL, False),
    # --- writing ---
    _opt("partitionBy", (WRITE,), "comma-separated partition columns (table creation)", COLUMNS,
         default_doc="none"),
    _opt("bucketBy", (WRITE,), "CLUSTERED BY columns (table creation); needs `numBuckets`",
         COLUMNS, default_doc="none"),
    _opt("numBuckets", (WRITE,), "bucket count 1..4096 (table creation); needs `bucketBy`", INT,
         default_doc="none"),
    _opt("bucketingVersion", (WRITE,), "Hive's bucket hash, 1 (Hive ≤ 2) or 2 (Hive 3+)", INT,
         default_doc="2"),
    _opt("compression", (WRITE,), "`NONE`, `ZLIB`, `SNAPPY`, `LZ4`, `ZSTD` (table creation; "
         "Parquet tables: Parquet's codecs)", default_doc="`ZLIB`"),
    _opt("tableProperties", (WRITE,), "`k=v,k2=v2` or a JSON object, e.g. `{\"owner\": \"etl\"}` "
         "(table creation)", PROPERTIES, default_doc="none"),
    _opt("partitionOverwriteMode", (WRITE,), "`static` (replace the table) or `dynamic` (only "
         "the partitions in the data)", CHOICE, "static", choices=("static", "dynamic")),
    _opt("replaceWhere", (WRITE,), "with `mode(\"overwrite\")`: replace exactly the partitions "
         "this condition on partition columns selects (`\"day >= '2024-01-01'\"`), also those "
         "that get no rows (they become empty); every row written must satisfy it. See [Static "
         "partition overwrite](#static-partition-overwrite)", default_doc="none"),
    _opt("partitionSpec", (WRITE,), "with `mode(\"overwrite\")`: Hive's `INSERT OVERWRITE ... "
         "PARTITION (day='a')`: `day=a` or `{\"day\": \"a\"}` replaces that partition (with "
         "some of the partition columns: every partition matching them), which becomes empty "
         "when no row arrives; the data may leave the spec's columns out", PROPERTIES,
         default_doc="none"),
    _opt("mergeSchema", (WRITE,), "`true`: data columns the table does not have are added to it "
         "first, at the end, as `HiveAcidTable.addColumns` does (older rows read NULL), and data "
         "columns the data lacks are written as NULL; without it either is an error", BOOL,
         False),
    _opt("txnTimeoutSeconds", (WRITE, TABLE), "idle time after which another writer may abort "
         "this write (path mode; a compaction's is 5 minutes)", SECONDS, 3600.0),
    _opt("fileFormat", (WRITE,), "`orc` or `parquet`: the data files of a new table; Parquet "
         "only for insert-only tables (table creation)", default_doc="`orc`"),
    # --- the Hive Metastore ---
    _opt("metastoreUri", _HMS, "`thrift://host:port[,...]`, else the Spark conf "
         "`spark.hadoop.hive.metastore.uris`, else `hive.metastore.uris` in "
         "`$HIVE_CONF_DIR/hive-site.xml`", default_doc="see the text"),
    _opt("metastoreTimeout", _HMS, "socket timeout for connecting and each call, in seconds",
         SECONDS, 60.0),
    _opt("lockWaitTimeout", (WRITE, METASTORE), "seconds a writer waits for a lock", SECONDS,
         300.0),
    _opt("heartbeatInterval", (WRITE, METASTORE), "seconds between transaction heartbeats",
         SECONDS, default_doc="`hive.txn.timeout` / 3"),
    # --- storage ---
    _opt("hdfsClient", _STORE, "for `hdfs://`: `libhdfs`, `webhdfs`, or `auto` = libhdfs when the "
         "machine has a usable Hadoop client (below) *and* it connects, else WebHDFS", CHOICE,
         "auto", choices=("auto", "libhdfs", "webhdfs")),
    _opt("webhdfsUrl", _STORE, "the NameNode's HTTP address; several separated by `;` for "
         "NameNode HA (`http://nn1:9870;http://nn2:9870`). Needed for `hdfs://` paths whose "
         "authority is a logical HA nameservice or missing (`hdfs:///…`)",
         default_doc="`http://host:9870` for `hdfs://host…`; `http://host:port` for "
         "`webhdfs://host:port` (`https` for `swebhdfs`)"),
    _opt("hdfsUser", _STORE, "simple-auth user (`user.name`); under Kerberos the proxy user "
         "(`doas`) when given. Decided on the driver, so every executor acts as the same user",
         default_doc="`HADOOP_USER_NAME`, else the login name of the driver"),
    _opt("webhdfsAuth", _STORE, "`simple` or `kerberos` (`hdfs.ext.kerberos.KerberosClient`; "
         "needs `pip install 'hdfs[kerberos]'` and a ticket on every executor)", CHOICE,
         "simple", choices=("simple", "kerberos")),
    _opt("webhdfsTimeout", _STORE, "seconds to wait for an answer (connecting: at most 10)",
         SECONDS, 60.0),
    # S3 (s3://, s3a://, s3n://) under Hadoop S3A's names: io/s3_settings.py, docs/storage.md
    _opt("fs.s3a.endpoint", _STORE, "S3 endpoint, `http(s)://host:port`", default_doc="unset"),
    _opt("fs.s3a.endpoint.region", _STORE, "S3 signing region", default_doc="unset"),
    _opt("fs.s3a.access.key", _STORE, "S3 access key id", default_doc="unset"),
    _opt("fs.s3a.secret.key", _STORE, "S3 secret key", default_doc="unset"),
    _opt("fs.s3a.session.token", _STORE, "S3 session token", default_doc="unset"),
    _opt("fs.s3a.path.style.access", _STORE, "`true`: `endpoint/bucket/key` URLs", BOOL,
         default_doc="unset"),
    _opt("fs.s3a.connection.ssl.enabled", _STORE, "`false`: http for an endpoint given without "
         "a scheme", BOOL, default_doc="unset"),
    _opt("fs.s3a.anonymous", _STORE, "`true`: unsigned requests (public buckets)", BOOL,
         default_doc="unset"),
    # Azure Blob (abfs://, abfss://): io/azure_settings.py, docs/storage.md
    _opt(AZURE_KEY, _STORE, "Azure storage account key (Shared Key, base64); Hadoop ABFS's "
         "`fs.azure.account.key.<account>.dfs.core.windows.net` is taken too, for that account",
         default_doc="unset"),
    _opt("fs.azure.blob.endpoint", _STORE, "the account's Blob service URL, "
         "`http(s)://host:port/account` for an emulator (Azurite)",
         default_doc="`https://<account>.blob.core.windows.net`"),
    # GCS (gs://, gcs://): io/gcs_settings.py, docs/storage.md
    _opt("fs.gs.storage.root.url", _STORE, "the GCS JSON API's root URL (the Hadoop GCS "
         "connector's name), `http://host:port` for an emulator (fake-gcs-server: anonymous "
         "requests); else `STORAGE_EMULATOR_HOST`", default_doc="`https://storage.googleapis.com`"),
    _opt("fs.gs.auth.access.token", _STORE, "GCS OAuth 2 access token, sent as a bearer token "
         "(`gcloud auth print-access-token`); else `GOOGLE_OAUTH_ACCESS_TOKEN`. Writes to Google's "
         "endpoint need one", default_doc="unset"),
    _opt("gcsRetryTimeLimit", _STORE, "seconds pyarrow's GCS client (reads) retries a failing "
         "request before the error is raised (pyarrow's own limit is 15 minutes, a process that "
         "cannot reach its endpoint looking hung)", SECONDS,
         default_doc="10 for an emulator's endpoint, else 60"),
)

#: Options that name the table (checked by ``options.path_or_table`` where they meet), taken by
#: every entry point.
IDENTITY = frozenset({"path", "paths", "table"})

#: The scopes each entry point takes (``options.check_entry``): an option of no scope listed is
#: refused there, naming the entry points that take it, instead of being silently ignored.
ENTRY_POINTS: dict[str, tuple[str, ...]] = {
    "spark.read": (READ, METASTORE, STORAGE),
    "read_table": (READ, METASTORE, STORAGE),
    "readStream": (STREAM, METASTORE, STORAGE),
    "df.write": (WRITE, METASTORE, STORAGE),
    "writeStream": (WRITE, METASTORE, STORAGE),
    "write_table": (WRITE, METASTORE, STORAGE),
    "HiveAcidTable": (TABLE, METASTORE, STORAGE),
    # a view's options go to both its reads and its INSERTs
    "register_view": (METASTORE, STORAGE),
    "hiveacid -o": (INSPECT, METASTORE, STORAGE),
}
#: Options of the change feed that a batch read takes only with ``readChangeFeed=true``.
CHANGE_FEED_ONLY = ("startingVersion", "endingVersion")
