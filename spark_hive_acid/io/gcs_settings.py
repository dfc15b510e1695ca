"""Where a ``gs://`` / ``gcs://`` path's endpoint and credentials come from.

First match wins:

1. options: ``fs.gs.storage.root.url`` (the Hadoop GCS connector's name: the JSON API's root,
   ``http://127.0.0.1:4443`` for an emulator such as fake-gcs-server), ``fs.gs.auth.access.token``
   (an OAuth 2 bearer token, e.g. ``gcloud auth print-access-token``);
2. the environment: ``STORAGE_EMULATOR_HOST`` (what Google's client libraries read: an emulator,
   ``http://host:port`` or ``host:port``), ``GOOGLE_OAUTH_ACCESS_TOKEN`` (a bearer token);
3. nothing: pyarrow's ``FileSystem.from_uri`` and its default credential chain (reads only).

An emulator's endpoint without a token means anonymous requests. Writes need a token on Google's
own endpoint (service-account keys and the metadata server are not implemented for writes).

Reads (pyarrow's ``GcsFileSystem``) give up retrying after ``gcsRetryTimeLimit`` seconds (10 for an
emulator, else 60): pyarrow's own limit is 15 minutes, during which a process that cannot reach
its endpoint (a Spark worker that did not get the emulator's address: ``STORAGE_EMULATOR_HOST``
set in the driver after Spark started never reaches the workers) sleeps between retries and looks
hung (docs/storage.md).
"""
from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from typing import Mapping, Optional
from urllib.parse import urlsplit

from .. import options as opt
from ..exceptions import InvalidOptionError

ENDPOINT_OPTION = "fs.gs.storage.root.url"
TOKEN_OPTION = "fs.gs.auth.access.token"
RETRY_OPTION = "gcsRetryTimeLimit"
EMULATOR_RETRY_SECONDS = 10.0
GOOGLE_RETRY_SECONDS = 60.0
GOOGLE_ENDPOINT = "https://storage.googleapis.com"


@dataclass(frozen=True)
class GcsSettings:
    """The JSON API's root URL and the bearer token (None: anonymous)."""

    endpoint: Optional[str] = None  # "http(s)://host[:port]"; None: Google's
    token: Optional[str] = None
    retry_seconds: Optional[float] = None  # None: 10 s for an emulator, else 60 s

    @property
    def explicit(self) -> bool:
        return self.endpoint is not None or self.token is not None

    @property
    def root(self) -> str:
        return (self.endpoint or GOOGLE_ENDPOINT).rstrip("/")

    @property
    def emulator(self) -> bool:
        return self.endpoint is not None and self.root != GOOGLE_ENDPOINT

    @property
    def retry_time_limit(self) -> dt.timedelta:
        """How long pyarrow's client retries a failing request (its default: 15 minutes)."""
        seconds = self.retry_seconds if self.retry_seconds is not None else (
            EMULATOR_RETRY_SECONDS if self.emulator else GOOGLE_RETRY_SECONDS)
        return dt.timedelta(seconds=seconds)

    def arrow_kwargs(self) -> dict:
        """Keyword arguments of ``pyarrow.fs.GcsFileSystem`` (with nothing explicit: Google's
        endpoint and the default credential chain, as ``FileSystem.from_uri``)."""
        kw: dict = {"retry_time_limit": self.retry_time_limit}
        if self.endpoint:
            parts = urlsplit(self.root)
            kw.update(scheme=parts.scheme, endpoint_override=parts.netloc)
        if self.token:
            kw.update(access_token=self.token, credential_token_expiration=dt.datetime.now(
                dt.timezone.utc) + dt.timedelta(hours=1))
        elif self.emulator:
            kw["anonymous"] = True
        return kw


def _endpoint(value: str, name: str) -> str:
    value = value.strip().rstrip("/")
    if "://" not in value:  # STORAGE_EMULATOR_HOST may be host:port
        value = "http://" + value
    parts = urlsplit(value)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise InvalidOptionError(f"{name}='{value}' must be an http(s) address, e.g. "
                                 "http://127.0.0.1:4443")
    # Hadoop's default root is "https://storage.googleapis.com/" (the API path is added by us)
    return f"{parts.scheme.lower()}://{parts.netloc}"


def resolve(options: Mapping[str, str], environ: Optional[Mapping[str, str]] = None
            ) -> GcsSettings:
    """The settings: options first, then the environment."""
    env = os.environ if environ is None else environ
    endpoint = opt.get_str(options, ENDPOINT_OPTION)
    if endpoint:
        endpoint = _endpoint(endpoint, f"Option {ENDPOINT_OPTION}")
    elif env.get("STORAGE_EMULATOR_HOST", "").strip():
        endpoint = _endpoint(env["STORAGE_EMULATOR_HOST"], "STORAGE_EMULATOR_HOST")
    token = opt.get_str(options, TOKEN_OPTION) or env.get("GOOGLE_OAUTH_ACCESS_TOKEN", "").strip()
    retry = opt.value(options, RETRY_OPTION)
    return GcsSettings(endpoint, token or None, None if retry is None else float(retry))
