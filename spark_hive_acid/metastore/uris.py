"""Where the Hive Metastore is: option, Spark conf, or ``hive-site.xml``.

Resolution order (first one set wins):

1. the data source option ``metastoreUri`` (keys are matched case-insensitively);
2. the Spark conf ``spark.hadoop.hive.metastore.uris`` (then ``spark.hive.metastore.uris``, which
   Spark also copies into the Hadoop conf);
3. ``hive.metastore.uris`` in ``$HIVE_CONF_DIR/hive-site.xml``.

Each value is a comma-separated list of ``thrift://host:port`` URIs; a client tries them in turn.
"""
from __future__ import annotations

import logging
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Mapping, NamedTuple, Optional
from urllib.parse import urlsplit

from ..exceptions import InvalidOptionError
from .. import options as opt
from ..exceptions import MetastoreNotConfiguredError

log = logging.getLogger(__name__)

OPTION_URI = "metastoreUri"
SPARK_CONF_KEYS = ("spark.hadoop.hive.metastore.uris", "spark.hive.metastore.uris")
HIVE_SITE_KEY = "hive.metastore.uris"
DEFAULT_PORT = 9083


class MetastoreAddress(NamedTuple):
    """One ``thrift://host:port`` endpoint."""

    host: str
    port: int

    @property
    def uri(self) -> str:
        return f"thrift://{self.host}:{self.port}"


def split_uris(value: str, where: str) -> list[str]:
    """Split a comma-separated URI list, validating each entry; returns normalised URIs."""
    uris = [parse_uri(part.strip(), where).uri for part in value.split(",") if part.strip()]
    if not uris:
        raise InvalidOptionError(f"{where} is empty; expected thrift://host:port[,thrift://...]")
    return uris


def parse_uri(uri: str, where: str = "metastore URI") -> MetastoreAddress:
    """Parse ``thrift://host[:port]`` (port defaults to 9083)."""
    parts = urlsplit(uri)
    if parts.scheme.lower() != "thrift" or not parts.hostname:
        raise InvalidOptionError(
            f"Malformed metastore URI '{uri}' in {where}: expected thrift://host:port")
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError as e:
        raise InvalidOptionError(f"Malformed port in metastore URI '{uri}' ({where})") from e
    return MetastoreAddress(parts.hostname, port)


def read_hive_site(path: Path) -> dict[str, str]:
    """The ``name -> value`` pairs of a Hadoop configuration XML file."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        raise InvalidOptionError(f"Cannot read {path}: {e}") from e
    conf: dict[str, str] = {}
    for prop in root.iter("property"):
        name = prop.findtext("name")
        if name:
            conf[name.strip()] = (prop.findtext("value") or "").strip()
    return conf


def resolve_metastore_uris(options: Mapping[str, str],
                           spark_conf: Optional[Mapping[str, str]] = None) -> list[str]:
    """The metastore URIs to try, in order, from the option, the Spark conf or hive-site.xml.

    Raises:
        MetastoreNotConfiguredError: none of the three places names a metastore.
        InvalidOptionError: a URI is malformed.
    """
    value = opt.get(options, OPTION_URI)
    if value and value.strip():
        return split_uris(value, f"option {OPTION_URI}")
    for key in SPARK_CONF_KEYS:
        value = (spark_conf or {}).get(key)
        if value and value.strip():
            return split_uris(value, f"Spark conf {key}")
    conf_dir = os.environ.get("HIVE_CONF_DIR")
    if conf_dir:
        site = Path(conf_dir) / "hive-site.xml"
        if site.is_file():
            value = read_hive_site(site).get(HIVE_SITE_KEY)
            if value and value.strip():
                return split_uris(value, f"{HIVE_SITE_KEY} in {site}")
        else:
            log.debug("HIVE_CONF_DIR=%s holds no hive-site.xml", conf_dir)
    where = f" (HIVE_CONF_DIR={conf_dir})" if conf_dir else " (HIVE_CONF_DIR is not set)"
    if spark_conf is None:  # a data source read/write in a Spark worker, or no Spark at all
        raise MetastoreNotConfiguredError(
            f"No Hive Metastore URI reached this read or write: pass the option "
            f"{OPTION_URI}=thrift://host:9083, or put {HIVE_SITE_KEY} in "
            f"$HIVE_CONF_DIR/hive-site.xml{where}, or use HiveAcidTable.forName(spark, 'db.table'), "
            f"which reads the Spark conf {SPARK_CONF_KEYS[0]}. That conf alone does not reach "
            "spark.read/df.write.format('hiveacid'): Spark's Python workers do not see it")
    raise MetastoreNotConfiguredError(
        f"No Hive Metastore configured: set the option {OPTION_URI}=thrift://host:9083, or the "
        f"Spark conf {SPARK_CONF_KEYS[0]}, or {HIVE_SITE_KEY} in $HIVE_CONF_DIR/hive-site.xml"
        + where)