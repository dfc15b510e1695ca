"""Finding (or creating) the table a write goes to, and its layout."""
from __future__ import annotations

import logging
from dataclasses import replace
from typing import Callable, Optional, Sequence

import pyarrow as pa

from ..acid.layout import LAYOUT_FILE, TableLayout, load_layout
from ..acid.names import ROW_ID_COLUMN, is_hidden
from ..acid.partition_tree import PartitionTree, walk_partitions
from ..acid.types import arrow_to_hive, hive_to_arrow
from ..exceptions import CommitConflictError, InvalidOptionError, NotAnAcidTableError
from ..io.filesystem import FileSystem
from .options import WriteOptions
from .plain_file import DEFAULT_COMPRESSION, ORC, PARQUET, check_codec, detect_insert_only
from .schema import check_names

TXN_PROPERTIES = ("default", "split_update", "insert_only")

log = logging.getLogger(__name__)


#: The columns of a table Hive wrote, as its reader sees them (data columns as the files hold
#: them, partition columns as the directories name them), given whether it is insert-only; None
#: when it has no data file to take them from. The catalog, which reads, provides it.
ColumnsOfTable = Callable[[bool], Optional[pa.Schema]]


def layout_from_schema(opts: WriteOptions, schema: pa.Schema,
                       partition_by: Optional[list[str]] = None) -> TableLayout:
    """A new table's layout from the DataFrame's schema and the creation options."""
    partition_by = opts.partition_by if partition_by is None else partition_by
    check_names(partition_by, schema.names, "Option partitionBy")
    check_reserved_names(schema.names, partition_by)
    check_names(opts.bucket_by, schema.names, "Option bucketBy")
    part_low = {p.lower() for p in partition_by}
    if part_low and {b.lower() for b in opts.bucket_by} & part_low:
        raise InvalidOptionError("A column cannot be both a partition and a bucketing column")
    if part_low and len(part_low) == len(schema.names):
        raise InvalidOptionError("A table needs at least one column that is not a partition column")
    by_low = {f.name.lower(): f for f in schema}
    columns = [(f.name, arrow_to_hive(f.type, f.name)) for f in schema if f.name.lower() not in part_low]
    partitions = [(by_low[p.lower()].name, arrow_to_hive(by_low[p.lower()].type, p)) for p in partition_by]
    version = opts.bucketing_version or 2
    props = {"transactional": "true", "transactional_properties": "default",
             "bucketing_version": str(version)}
    props.update(opts.table_properties)
    fmt = _check_kind(props, opts.file_format or ORC)
    compression = opts.compression or DEFAULT_COMPRESSION[fmt]
    check_codec(fmt, compression)
    return TableLayout(columns=columns, partition_columns=partitions,
                       bucket_columns=[by_low[b.lower()].name for b in opts.bucket_by],
                       num_buckets=opts.num_buckets or 0, bucketing_version=version,
                       compression=compression, properties=props, file_format=fmt)


def layout_from_columns(opts: WriteOptions, columns: Sequence[tuple[str, str]]) -> TableLayout:
    """A new table's layout from declared (name, Hive type) columns, partition columns included:
    the types are kept as declared (``char(5)``, ``varchar(20)``, which Arrow cannot tell from
    ``string``)."""
    schema = pa.schema([pa.field(n, hive_to_arrow(t, n)) for n, t in columns])
    layout = layout_from_schema(opts, schema)
    declared = {n.lower(): t.strip().lower() for n, t in columns}
    layout.columns = [(n, declared[n.lower()]) for n, _ in layout.columns]
    layout.partition_columns = [(n, declared[n.lower()]) for n, _ in layout.partition_columns]
    return layout


def create_layout(fs: FileSystem, path: str, layout: TableLayout) -> bool:
    """Create a table at ``path`` with ``layout`` (the directory may exist, empty but for hidden
    names); False when a table already exists there (the layout file, or ACID directories)."""
    st = fs.status(path)
    if st is not None and not st.is_dir:
        raise NotAnAcidTableError(f"{path} is a file, not a table directory")
    if st is not None and any(not is_hidden(c.name) for c in fs.list_dir(path)):
        return False
    fs.mkdirs(path)
    return fs.create_exclusive(fs.join(path, LAYOUT_FILE), layout.to_json().encode("utf-8"))


def _check_kind(props: dict[str, str], fmt: str) -> str:
    """The file format of a new table with TBLPROPERTIES ``props``: full-ACID tables are ORC
    (Hive's rule); insert-only tables ORC or Parquet."""
    kind = props.get("transactional_properties", "").strip().lower()
    if kind not in TXN_PROPERTIES:
        raise InvalidOptionError(
            f"tableProperties transactional_properties='{kind}' is not a Hive value: use "
            "insert_only (an insert-only table) or default (full ACID)")
    props["transactional_properties"] = kind
    if fmt == PARQUET and kind != "insert_only":
        raise InvalidOptionError(
            "Option fileFormat=parquet needs an insert-only table: full-ACID tables are always "
            "ORC in Hive. Add .option('tableProperties', 'transactional_properties=insert_only'), "
            "or drop fileFormat")
    return fmt


#: Column names a table may not have: the ROW__ID column readers add, and the DML plan's own.
RESERVED_COLUMN = ROW_ID_COLUMN
RESERVED_PREFIX = "__hiveacid_"


def check_reserved_names(columns: Sequence[str], partition_by: Sequence[str]) -> None:
    """Refuse, before anything is written, names a table could not read back: a column named like
    the ROW__ID column or our DML's internal columns, and partition columns whose directories
    would be hidden (Hive, Trino and this library skip names starting with '_' or '.')."""
    for name in columns:
        if name.lower() == RESERVED_COLUMN or name.lower().startswith(RESERVED_PREFIX):
            raise InvalidOptionError(
                f"Column '{name}' has a reserved name: {RESERVED_COLUMN} is the ROW__ID column "
                f"readers add, and names starting with {RESERVED_PREFIX} are the DML's own; "
                f"rename it (df.withColumnRenamed('{name}', ...)). Nothing was written.")
    for name in partition_by:
        if is_hidden(name):
            raise InvalidOptionError(
                f"Partition column '{name}' starts with '{name[0]}': its directories "
                f"('{name}=...') would be hidden from Hive, Trino and every reader, so its rows "
                "could never be read. Rename the column. Nothing was written.")


def _check_against(layout: TableLayout, opts: WriteOptions, path: str) -> None:
    """Creation options given again must agree with the saved layout."""
    saved = [n.lower() for n, _ in layout.partition_columns]
    if opts.partition_by and [p.lower() for p in opts.partition_by] != saved:
        raise InvalidOptionError(
            f"Table {path} is partitioned by ({', '.join(n for n, _ in layout.partition_columns)}), "
            f"not ({', '.join(opts.partition_by)}); drop the partitionBy option")
    if opts.bucket_by and [b.lower() for b in opts.bucket_by] != [b.lower() for b in layout.bucket_columns]:
        raise InvalidOptionError(
            f"Table {path} is bucketed by ({', '.join(layout.bucket_columns) or 'nothing'}), "
            f"not ({', '.join(opts.bucket_by)}); drop the bucketBy option")
    if opts.num_buckets and opts.num_buckets != layout.num_buckets:
        raise InvalidOptionError(
            f"Table {path} has {layout.num_buckets} buckets, not {opts.num_buckets}")
    if opts.file_format and opts.file_format != layout.file_format:
        raise InvalidOptionError(
            f"Table {path} stores {layout.file_format} files, not {opts.file_format}; drop the "
            "fileFormat option")
    kind = opts.table_properties.get("transactional_properties", "").strip().lower()
    if kind and (kind == "insert_only") != layout.insert_only:
        raise InvalidOptionError(
            f"Table {path} is {'an insert-only' if layout.insert_only else 'a full-ACID'} table, "
            f"not transactional_properties={kind}; drop it from tableProperties (a table's kind "
            "cannot change)")


def _save_new(fs: FileSystem, path: str, layout: TableLayout) -> TableLayout:
    """Save the layout unless a concurrent creator won; then use theirs."""
    fs.mkdirs(path)
    if fs.create_exclusive(fs.join(path, LAYOUT_FILE), layout.to_json().encode("utf-8")):
        log.info("Created Hive ACID table at %s", path)
        return layout
    theirs = load_layout(fs, path)
    if theirs is None:
        raise CommitConflictError(
            f"Table {path} was created by a concurrent writer, but its {LAYOUT_FILE} is gone now "
            "(the table was dropped or its layout is being replaced); nothing was written. Retry "
            "the write.")
    return theirs


def resolve_table(fs: FileSystem, path: str, opts: WriteOptions, schema: pa.Schema,
                  columns_of_table: ColumnsOfTable) -> tuple[TableLayout, bool]:
    """The layout of the table at ``path``, creating the table when it does not exist.

    Returns (layout, created). A directory that exists but is not a Hive ACID table is refused.
    A Hive-written table without our layout file gets one, with the columns its files hold
    (``columns_of_table``), the written data's where it has none.
    """
    layout = load_layout(fs, path)
    if layout is not None:
        _check_against(layout, opts, path)
        return layout, False
    st = fs.status(path)
    if st is not None and not st.is_dir:
        raise NotAnAcidTableError(f"{path} is a file, not a table directory")
    children = fs.list_dir(path) if st is not None else []
    visible = [c for c in children if not is_hidden(c.name)]
    if not visible:  # new or empty directory (hidden leftovers such as a log are fine)
        return _save_new(fs, path, layout_from_schema(opts, schema)), True
    tree = walk_partitions(fs, path, children)
    if not any(True for _ in tree.acid_dirs()):
        raise NotAnAcidTableError(
            f"{path} exists and is not a Hive ACID table (no base_*/delta_* directories and no "
            f"{LAYOUT_FILE}); refusing to write into it. Choose an empty or new directory.")
    on_disk = tree.names
    if opts.partition_by and [p.lower() for p in opts.partition_by] != [p.lower() for p in on_disk]:
        raise InvalidOptionError(
            f"Table {path} is partitioned by ({', '.join(on_disk)}) on disk, not "
            f"({', '.join(opts.partition_by)})")
    opts = _adopted_kind(fs, path, tree, opts)
    log.info("Adopting the Hive ACID table at %s (partitions: %s, %s)", path, on_disk or "none",
             "insert-only " + (opts.file_format or ORC)
             if opts.table_properties.get("transactional_properties") == "insert_only"
             else "full ACID")
    insert_only = opts.table_properties.get("transactional_properties") == "insert_only"
    adopted = _adopted_schema(path, schema, columns_of_table(insert_only))
    return _save_new(fs, path, layout_from_schema(opts, adopted, on_disk)), False


def _adopted_kind(fs: FileSystem, path: str, tree: PartitionTree,
                  opts: WriteOptions) -> WriteOptions:
    """The creation options of a Hive-written table being adopted, with its kind (full ACID or
    insert-only, and the file format) as its files show it. Writing ACID files into an insert-only
    table, or plain files into a full-ACID one, would make Hive misread it."""
    found = detect_insert_only(fs, tree.acid_dirs())
    given = opts.table_properties.get("transactional_properties", "").strip().lower()
    if found is None:
        return opts
    insert_only, fmt = found
    if given and (given == "insert_only") != insert_only:
        raise InvalidOptionError(
            f"Table {path} holds {'plain' if insert_only else 'ACID (bucket_N)'} data files: it is "
            f"{'an insert-only' if insert_only else 'a full-ACID'} table, not "
            f"transactional_properties={given}; drop it from tableProperties")
    if opts.file_format and insert_only and opts.file_format != fmt:
        raise InvalidOptionError(
            f"Table {path} holds {fmt} files, not {opts.file_format}; drop the fileFormat option")
    if not insert_only:
        return opts
    props = {**opts.table_properties, "transactional_properties": "insert_only"}
    return replace(opts, table_properties=props, file_format=fmt)


def _adopted_schema(path: str, incoming: pa.Schema, found: Optional[pa.Schema]) -> pa.Schema:
    """The columns of a table written without this library's layout file (by Hive): the data
    columns as its files hold them (names, order and types: the DataFrame is then matched to them
    by name, never the other way round), the partition columns as the directories name them (typed
    like the incoming column of that name, else as the reader infers them)."""
    if found is None:
        log.warning("%s has no data file to take its columns from; using the written data's", path)
        return incoming
    by_low = {f.name.lower(): f for f in incoming}
    fields = []
    for f in found:
        given = by_low.get(f.name.lower()) if f.metadata and f.metadata.get(b"partition") else None
        fields.append(pa.field(f.name, given.type if given is not None else f.type))
    return pa.schema(fields)
