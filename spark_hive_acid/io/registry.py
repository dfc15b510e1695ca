"""Which :class:`~.filesystem.FileSystem` serves a URI: the scheme registry.

Local paths and ``file://`` are built in. The remote back-ends live in :mod:`.remote`, which
registers its factories when it is imported; the registry imports it by name the first time it
meets one of its schemes (``KNOWN_MODULES``), so the file-system interface never depends on the
back-ends and a machine without their optional dependencies still reads local tables.
Other schemes can be added with :func:`register_filesystem`.
"""
from __future__ import annotations

import importlib
import logging
import os
from typing import Callable, Mapping, Optional
from urllib.parse import urlparse

from ..exceptions import InvalidOptionError
from .filesystem import FileSystem, LocalFileSystem

log = logging.getLogger(__name__)

Factory = Callable[[str, Mapping[str, str]], tuple[FileSystem, str]]
"""``(uri, options) -> (FileSystem, path in that file system's own form)``."""

_REMOTE = "spark_hive_acid.io.remote"
#: scheme -> the module whose import registers its factory
KNOWN_MODULES: dict[str, str] = {s: _REMOTE for s in (
    "hdfs", "webhdfs", "swebhdfs", "s3", "s3a", "s3n", "gs", "gcs", "abfs", "abfss")}

_FACTORIES: dict[str, Factory] = {}


def register_filesystem(scheme: str, factory: Factory) -> None:
    """Serve URIs of ``scheme`` with ``factory``."""
    _FACTORIES[scheme.lower()] = factory


def _factory(scheme: str) -> Optional[Factory]:
    factory = _FACTORIES.get(scheme)
    if factory is None and scheme in KNOWN_MODULES:
        try:
            importlib.import_module(KNOWN_MODULES[scheme])
        except ImportError as e:
            log.warning("file system back-end for %s:// unavailable: %s", scheme, e)
        factory = _FACTORIES.get(scheme)
    return factory


def get_filesystem(uri: str, options: Optional[Mapping[str, str]] = None) -> tuple[FileSystem, str]:
    """The file system serving ``uri`` and the path in that file system's own form."""
    if not uri:
        raise InvalidOptionError("No table path given: use .load('/path/to/table') or option 'path'")
    parsed = urlparse(uri)
    scheme = parsed.scheme.lower()
    if scheme in ("", "file") or (len(scheme) == 1 and os.name == "nt"):
        path = parsed.path if scheme == "file" else uri
        return LocalFileSystem(), os.path.abspath(path)
    factory = _factory(scheme)
    if factory is None:
        supported = sorted(set(_FACTORIES) | set(KNOWN_MODULES))
        raise InvalidOptionError(
            f"Unsupported file system scheme '{scheme}' in path {uri}: supported are local paths "
            "and file://" + "".join(f", {s}://" for s in supported))
    return factory(uri, options or {})
