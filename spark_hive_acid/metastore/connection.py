"""The connection half of the Hive Metastore client: sockets, retries, error translation, what the
server supports.

Thrift over ``TSocket`` / ``TBufferedTransport`` / ``TBinaryProtocol`` (no SASL/Kerberos), using the
Hive 3.x bindings of the PyPI package ``hive-metastore-client``. Every call is serialised by a lock,
so one connection can be shared with a heartbeat thread. Thrift errors become
:mod:`spark_hive_acid.exceptions` errors that name the metastore URI.
"""
from __future__ import annotations

import getpass
import logging
import os
import re
import socket
import threading
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence

if TYPE_CHECKING:  # typing.Self is 3.11+; mypy knows typing_extensions
    from typing_extensions import Self

from .. import options as opt
from ..acid.snapshot import ValidIdList
from ..exceptions import (
    HiveAcidError,
    InvalidOptionError,
    MetastoreError,
    MetastoreUnavailableError,
    TableNotFoundError,
    TransactionAbortedError,
    UnknownMethodError,
    WriteConflictError,
)
from ._thrift import bindings, thrift_module
from .uris import parse_uri, resolve_metastore_uris

log = logging.getLogger(__name__)

DEFAULT_TXN_TIMEOUT_S = 300.0
DEFAULT_TIMEOUT_S: float = opt.default("metastoreTimeout")  # connecting and each call
_UNKNOWN_METHOD = 1  # TApplicationException.UNKNOWN_METHOD
_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0, "secs": 1.0,
               "m": 60.0, "min": 60.0, "mins": 60.0, "h": 3600.0, "hour": 3600.0,
               "hours": 3600.0, "d": 86400.0, "day": 86400.0, "days": 86400.0}


def default_user() -> str:
    """``$HADOOP_USER_NAME``, else the OS user (what Hive records as the txn/lock owner)."""
    return os.environ.get("HADOOP_USER_NAME") or getpass.getuser()


def parse_hive_time(text: str, default_unit: str = "s") -> float:
    """Seconds in a Hive time setting such as ``300``, ``300s``, ``5m`` or ``500ms``."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", text or "")
    if not m:
        raise ValueError(f"not a Hive time value: {text!r}")
    unit = (m.group(2) or default_unit).lower()
    if unit not in _TIME_UNITS:
        raise ValueError(f"unknown time unit in {text!r}")
    return float(m.group(1)) * _TIME_UNITS[unit]


class MetastoreConnection:
    """A connection to one Hive Metastore (the first of ``uris`` that answers); the calls it makes
    live in :class:`~spark_hive_acid.metastore.client.MetastoreClient`.

    Use as a context manager, or call :meth:`open` / :meth:`close`.

    Args:
        uris: ``thrift://host:port`` or a list of them (tried in turn), or a comma-separated string.
        timeout: socket timeout for connecting and for each call, in seconds.
        user, hostname: recorded by the metastore as the owner of transactions and locks.
    """

    def __init__(self, uris: str | Sequence[str], *, timeout: float = DEFAULT_TIMEOUT_S,
                 user: Optional[str] = None, hostname: Optional[str] = None) -> None:
        raw = [u.strip() for u in uris.split(",")] if isinstance(uris, str) else list(uris)
        self.addresses = [parse_uri(u) for u in raw if u]
        if not self.addresses:
            raise InvalidOptionError("MetastoreClient needs at least one thrift://host:port URI")
        self.uris = [a.uri for a in self.addresses]
        self.timeout = timeout
        self.user = user or default_user()
        self.hostname = hostname or socket.gethostname()
        self.agent_info = f"spark-hive-acid pid={os.getpid()}"
        self.uri: Optional[str] = None  # the URI currently connected
        self._lock = threading.RLock()
        self._transport: Any = None
        self._client: Any = None
        self._has_write_ids: Optional[bool] = None
        self._version: Optional[str] = None

    @classmethod
    def from_options(cls, options: Mapping[str, str],
                     spark_conf: Optional[Mapping[str, str]] = None,
                     **kwargs: Any) -> "Self":
        """A client for the metastore named by :func:`resolve_metastore_uris`."""
        return cls(resolve_metastore_uris(options, spark_conf), **kwargs)

    # -- connection -------------------------------------------------------------------------
    def open(self) -> "Self":
        """Connect to the first URI that accepts a connection."""
        with self._lock:
            if self._transport is not None:
                return self
            _, TBinaryProtocol, TSocket, TTransport = thrift_module()
            hms, _ = bindings()
            errors = []
            for addr in self.addresses:
                # Connect ourselves (clean OSError, no logging from TSocket), then hand the
                # connected socket to TSocket.
                try:
                    conn = socket.create_connection((addr.host, addr.port), timeout=self.timeout)
                except OSError as e:
                    errors.append(f"{addr.uri}: {e}")
                    log.debug("metastore %s unreachable: %s", addr.uri, e)
                    continue
                sock = TSocket.TSocket(addr.host, addr.port)
                sock.setTimeout(int(self.timeout * 1000))
                sock.handle = conn
                transport = TTransport.TBufferedTransport(sock)
                self._transport = transport
                self._client = hms.Client(TBinaryProtocol.TBinaryProtocol(transport))
                self.uri = addr.uri
                log.debug("connected to Hive Metastore %s", addr.uri)
                return self
            raise MetastoreUnavailableError(
                "Cannot reach the Hive Metastore at " + ", ".join(self.uris) + " ("
                + "; ".join(errors) + "). Check the metastoreUri option / hive.metastore.uris "
                "and that the metastore is running.")

    def close(self) -> None:
        with self._lock:
            transport, self._transport, self._client = self._transport, None, None
            if transport is not None:
                try:
                    transport.close()
                except Exception:  # noqa: BLE001 - closing a broken socket may fail; ignore
                    log.debug("error closing metastore transport", exc_info=True)

    def __enter__(self) -> "Self":
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def is_open(self) -> bool:
        return self._transport is not None

    def __getstate__(self) -> dict[str, Any]:
        raise TypeError("A MetastoreClient holds a socket and cannot be pickled: send the URIs "
                        "to executors and connect there")

    def _call(self, method: str | Callable[[Any], Any], *args: Any, what: str = "",
              retry: bool = False, table: Optional[str] = None) -> Any:
        """Call a Thrift method, translating errors; ``retry`` reconnects once if the socket broke.

        ``method`` is the name of a method of the bindings, or ``fn(thrift_client)`` for a call
        they lack (:mod:`._wire`). Only idempotent calls pass ``retry=True``: a broken connection
        during e.g. ``commit_txn`` leaves the outcome unknown, so it is reported, not retried.
        """
        Thrift, _, _, TTransport = thrift_module()
        what = what or getattr(method, "__name__", str(method))
        attempts = 2 if retry else 1
        with self._lock:
            for attempt in range(attempts):
                self.open()
                try:
                    if callable(method):
                        return method(self._client)
                    return getattr(self._client, method)(*args)
                except Thrift.TApplicationException as e:
                    if e.type == _UNKNOWN_METHOD:
                        raise UnknownMethodError(
                            f"Hive Metastore {self.uri} does not implement {method}: {e}") from e
                    raise MetastoreError(
                        f"Hive Metastore {self.uri} failed {what}: {e} (see the metastore log)"
                    ) from e
                except (TTransport.TTransportException, OSError, EOFError) as e:
                    uri = self.uri
                    self.close()
                    if attempt + 1 < attempts:
                        log.warning("connection to %s broke during %s (%s); reconnecting", uri,
                                    what, e)
                        continue
                    raise MetastoreUnavailableError(
                        f"Connection to the Hive Metastore {uri} failed during {what}: {e}") from e
                except Thrift.TException as e:
                    if type(e).__name__ == "TProtocolException":  # the stream may be out of step
                        self.close()
                    raise self._translate(e, what, table) from e
        raise AssertionError("unreachable")

    def _translate(self, e: Exception, what: str, table: Optional[str]) -> HiveAcidError:
        kind = type(e).__name__
        message = getattr(e, "message", None) or str(e)
        where = f"Hive Metastore {self.uri}"
        if kind == "NoSuchObjectException" and table:
            return TableNotFoundError(f"Table {table} not found in the {where} ({message})")
        if kind == "TxnAbortedException":
            if "write conflict" in message.lower():
                return WriteConflictError(
                    f"{what} refused by the {where}: {message}. A concurrent transaction "
                    "committed a conflicting UPDATE/DELETE/MERGE first; nothing was committed, "
                    "retry the operation.")
            return TransactionAbortedError(f"{what}: the transaction was aborted ({message}; "
                                           f"{where})")
        if kind == "NoSuchTxnException":
            return TransactionAbortedError(
                f"{what}: {message} ({where}); it may have timed out and been removed")
        return MetastoreError(f"{where} refused {what}: {kind}: {message}")

    # -- server capabilities ----------------------------------------------------------------
    @property
    def supports_write_ids(self) -> bool:
        """True on Hive 3+ (per-table write ids); False on Hive 2.x. Probed once per client."""
        if self._has_write_ids is None:
            _, tt = bindings()
            probe = tt.GetValidWriteIdsRequest(fullTableNames=[],
                                               validTxnList=ValidIdList().to_string())
            try:
                self._call("get_valid_write_ids", probe, what="probing for Hive 3 write ids")
                self._has_write_ids = True
            except UnknownMethodError:
                self._has_write_ids = False
            except MetastoreUnavailableError:
                raise
            except MetastoreError as e:  # the method exists; it just disliked the empty probe
                log.debug("write id probe answered with an error (so it exists): %s", e)
                self._has_write_ids = True
            log.info("Hive Metastore %s: %s", self.uri,
                     "Hive 3+ (table write ids)" if self._has_write_ids
                     else "Hive 2.x (transaction id = write id)")
        return self._has_write_ids

    @property
    def server_version(self) -> str:
        """The server's Hive version (``getVersion``, e.g. ``"4.1.0"``) on Hive 3+; ``"2"`` on
        Hive 2.x, whose answer is meaningless (2.3.10 says ``"3.0"``). Asked once per client."""
        if self._version is None:
            if not self.supports_write_ids:
                self._version = "2"
            else:
                try:
                    self._version = str(self._call("getVersion", what="getVersion", retry=True))
                except MetastoreUnavailableError:
                    raise
                except MetastoreError as e:
                    log.debug("getVersion failed (%s); assuming Hive 3", e)
                    self._version = "3"
        return self._version

    @property
    def server_kind(self) -> str:
        """``"hive2"`` (txn id = write id), ``"hive3"`` or ``"hive4"`` (EXCL_WRITE locks, processor
        capabilities for ACID tables): what the client adapts to."""
        if not self.supports_write_ids:
            return "hive2"
        major = re.match(r"\s*(\d+)", self.server_version)
        return "hive4" if major and int(major.group(1)) >= 4 else "hive3"

    def get_config_value(self, name: str, default: str) -> str:
        """A server-side configuration value (only ``hive.*``-style names are allowed by Hive)."""
        return str(self._call("get_config_value", name, default, what=f"get_config_value({name})",
                              retry=True))

    def txn_timeout_seconds(self) -> float:
        """The server's ``hive.txn.timeout`` (default 300 s) in seconds."""
        try:
            return parse_hive_time(self.get_config_value("hive.txn.timeout", "300s"))
        except (MetastoreError, ValueError) as e:
            if isinstance(e, MetastoreUnavailableError):
                raise
            log.debug("cannot read hive.txn.timeout (%s); assuming %.0f s", e,
                      DEFAULT_TXN_TIMEOUT_S)
            return DEFAULT_TXN_TIMEOUT_S
