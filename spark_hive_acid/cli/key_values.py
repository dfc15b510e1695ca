"""``KEY=VALUE`` command-line arguments (``-o``, ``--catalog``), parsed once for every command."""
from __future__ import annotations

import argparse
from typing import Iterable

from ..exceptions import InvalidOptionError


def key_values(items: Iterable[str], flag: str) -> dict[str, str]:
    """``["a=1", "b=x=y"]`` -> ``{"a": "1", "b": "x=y"}``; an item without ``=`` or a key is an
    error naming ``flag``."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InvalidOptionError(f"{flag} {item!r}: write KEY=VALUE")
        out[key.strip()] = value
    return out


def command_options(args: argparse.Namespace) -> dict[str, str]:
    """The table options of a command: its ``-o KEY=VALUE`` items and ``--metastore-uri``."""
    out = key_values(args.option, "-o")
    if args.metastore_uri:
        out["metastoreUri"] = args.metastore_uri
    return out
