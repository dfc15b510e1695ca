"""The arguments of ``read_table`` / ``write_table`` (``direct``), checked before anything is read
or written: each mistake a user makes with them is named, with the call to make instead.

The two functions keep one convention each: ``read_table(path, **options)`` takes the options by
their registry names (camelCase, as ``spark.read.option`` does), ``write_table(data, path, ...)``
takes Python keyword arguments (snake_case, as ``deltalake.write_deltalake``) and the registry's
options in ``options={...}``. A name of the other convention is refused with the right spelling.
"""
from __future__ import annotations

import os
import re
from typing import Any, Mapping, Optional, Sequence, Union

from . import options as opt
from .exceptions import InvalidOptionError

Columns = Union[str, Sequence[str], None]
_SNAKE = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)+")


def camel(name: str) -> str:
    """``version_as_of`` -> ``versionAsOf``."""
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def snake(name: str) -> str:
    """``partitionBy`` -> ``partition_by``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def option_text(name: str, value: Any) -> str:
    """A ``read_table`` keyword argument as the string option Spark would be given: ``True`` ->
    ``"true"``, a list of columns -> ``"a,b"``."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        if not all(isinstance(v, str) for v in value):
            raise InvalidOptionError(f"read_table({name}=...): give a list of column names or "
                                     f"'a,b', not {value!r}")
        return ",".join(value)
    return str(value)


def read_options(path: Any, options: Mapping[str, Any]) -> dict[str, str]:
    """``read_table``'s arguments as the options of a read, refusing snake_case names."""
    if not isinstance(path, (str, os.PathLike)):
        raise InvalidOptionError(
            f"read_table(path, **options): the table path first (a string), not "
            f"{type(path).__name__}")
    for name in options:
        if _SNAKE.fullmatch(name) and camel(name).lower() in opt.BY_KEY:
            meant = opt.BY_KEY[camel(name).lower()].name
            raise InvalidOptionError(
                f"read_table takes options by their names, as spark.read.option does: "
                f"read_table(path, {meant}=...), not {name}=")
    out = {"path": os.fspath(path)}
    out.update({k: option_text(k, v) for k, v in options.items() if v is not None})
    return out


def column_list(value: Columns, name: str) -> Optional[list[str]]:
    """``partition_by`` / ``bucket_by``: a list of names, or one string ``"day"`` / ``"a,b"`` (as
    the options take them), never a string split into letters."""
    if value is None:
        return None
    if isinstance(value, str):
        return opt.parse_columns(value)
    names = list(value)
    if not all(isinstance(n, str) for n in names):
        raise InvalidOptionError(f"write_table({name}=...): give column names, not {value!r}")
    return names


def check_write_call(data: Any, path: Any, misspelt: Mapping[str, Any],
                     params: Sequence[str]) -> None:
    """``write_table(path, data)`` (deltalake's order) and keyword arguments it does not have
    (``params``: those it has), such as an option's camelCase name."""
    if isinstance(data, (str, os.PathLike)) and path is not None \
            and not isinstance(path, (str, os.PathLike)):
        raise InvalidOptionError(
            f"write_table(data, path): the arguments are swapped: the data comes first, then "
            f"the table path: write_table(data, {os.fspath(data)!r})")
    for name in misspelt:
        o = opt.BY_KEY.get(name.lower()) or opt.BY_KEY.get(camel(name).lower())
        if o is not None and snake(o.name) in params:
            raise InvalidOptionError(f"write_table takes Python argument names: "
                                     f"{snake(o.name)}=..., not {name}=")
        if o is not None:
            raise InvalidOptionError(f"write_table: give option {o.name} in options="
                                     f"{{'{o.name}': ...}}, not as {name}=")
        raise InvalidOptionError(
            f"write_table() has no argument {name}=; its arguments are {', '.join(params)} "
            "(options: any write option, docs/writing.md)")
