"""Spark hands data sources their options as a case-insensitive map of strings; tests and the
in-process API pass plain dicts. One lookup serves both."""
from __future__ import annotations

from typing import Mapping, Optional


def get_option(options: Mapping[str, str], key: str) -> Optional[str]:
    """The value of ``key`` in ``options``, ignoring the case of the key; None when absent."""
    if key in options:
        return options[key]
    lower = key.lower()
    if lower in options:
        return options[lower]
    for k, v in options.items():
        if k.lower() == lower:
            return v
    return None
