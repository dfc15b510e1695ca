"""Which tables a warehouse-wide command looks at: paths, a warehouse directory, table names, a
database (a glob), or every ACID table of a metastore. Every one becomes a ``catalog.TableRef``."""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence

from .. import options as opt
from ..acid.layout import LAYOUT_FILE
from ..acid.names import ACID_DIR_PREFIXES, is_hidden
from ..catalog import MetastoreTable, PathTable, TableRef
from ..exceptions import InvalidOptionError, NotAnAcidTableError, PathNotFoundError, \
    TableNotFoundError
from ..io.filesystem import FileSystem
from ..io.registry import get_filesystem
from ..metastore.api import client_from_options, parse_table_name
from ..metastore.inventory import acid_tables, databases
from ..metastore.uris import OPTION_URI, resolve_metastore_uris

log = logging.getLogger(__name__)


@dataclass
class Targets:
    """What to look at (any combination)."""

    paths: Sequence[str] = ()  # table directories
    warehouses: Sequence[str] = ()  # directories of table directories (and of ``*.db`` ones)
    tables: Sequence[str] = ()  # db.table names in the metastore
    databases: Sequence[str] = ()  # database names or globs (sales_*)
    all_databases: bool = False
    options: Mapping[str, str] = field(default_factory=dict)

    def empty(self) -> bool:
        return not (self.paths or self.warehouses or self.tables or self.databases
                    or self.all_databases)


def resolve(targets: Targets) -> list[TableRef]:
    """The tables, each once, in a stable order (paths first, then metastore tables by name)."""
    if targets.empty():
        raise InvalidOptionError(
            "Nothing to look at: give table paths, --warehouse DIR, table names (db.t), "
            "--database DB or --all (the last three need a metastore: --metastore-uri)")
    options = opt.lowered(targets.options)
    refs: dict[str, TableRef] = {}
    for p in targets.paths:
        ref = PathTable(p, options)
        fs, path = ref.location()
        st = fs.status(path)
        if st is None or not st.is_dir:
            raise TableNotFoundError(f"No table at {p}: the path does not exist or is a file")
        if not _is_table(fs, path):
            raise NotAnAcidTableError(
                f"{p} holds no Hive ACID table (no base_/delta_ or k=v directory, no "
                f"{LAYOUT_FILE}); if it is a directory of tables, use --warehouse {p}")
        refs.setdefault(p, ref)
    for w in targets.warehouses:
        for p in warehouse_tables(w, options):
            refs.setdefault(p, PathTable(p, options))
    named = list(targets.tables)
    if targets.databases or targets.all_databases:
        named.extend(_database_tables(targets, options))
    if named:
        uri = ",".join(resolve_metastore_uris(options))
        for n in named:
            db, name = parse_table_name(n)
            refs.setdefault(f"{db}.{name}", MetastoreTable(db, name, {**options,
                                                                    OPTION_URI.lower(): uri}))
    return list(refs.values())


def _database_tables(targets: Targets, options: dict[str, str]) -> list[str]:
    with client_from_options(options) as c:
        if targets.all_databases:
            dbs = databases(c)
        else:
            dbs = []
            for pattern in targets.databases:
                found = databases(c, pattern)
                if not found:
                    raise TableNotFoundError(f"No database matches '{pattern}' in the Hive "
                                             f"Metastore {c.uri}")
                dbs.extend(found)
        out: list[str] = []
        for db in dict.fromkeys(dbs):
            tables = acid_tables(c, db)
            log.info("database %s: %d ACID table(s)", db, len(tables))
            out.extend(f"{t.db}.{t.name}" for t in tables)
        return out


def warehouse_tables(root: str, options: Optional[Mapping[str, str]] = None) -> list[str]:
    """The table directories below ``root``: children that hold the layout file, ACID
    directories or ``k=v`` partition directories; ``*.db`` children are searched one level down
    (Hive's warehouse layout). One listing per directory looked at."""
    fs, path = get_filesystem(root, dict(options or {}))
    try:
        children = fs.list_dir(path)
    except PathNotFoundError:
        raise TableNotFoundError(f"No warehouse directory at {root}") from None
    found: list[str] = []
    for c in sorted(children, key=lambda c: c.name):
        if not c.is_dir or is_hidden(c.name):
            continue
        if c.name.endswith(".db"):
            found.extend(warehouse_tables(_child_uri(root, c.name), options))
        elif _is_table(fs, c.path):
            found.append(_child_uri(root, c.name))
    if not found:
        raise NotAnAcidTableError(f"{root} holds no Hive ACID table directory")
    return found


def _child_uri(root: str, name: str) -> str:
    return root.rstrip("/") + "/" + name


def _is_table(fs: FileSystem, path: str) -> bool:
    names = [c.name for c in fs.list_dir(path)]
    return LAYOUT_FILE in names or any(
        n.startswith(ACID_DIR_PREFIXES) or ("=" in n and not is_hidden(n)) for n in names)
