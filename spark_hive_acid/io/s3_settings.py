"""Where an ``s3://`` / ``s3a://`` / ``s3n://`` path's endpoint and credentials come from.

Spark users set S3 up with Hadoop's S3A keys; the connector takes the same keys as options
(``.option("fs.s3a.endpoint", ...)``), then the URI's query (pyarrow's names, e.g.
``?endpoint_override=…&region=…``), then the environment (``AWS_ENDPOINT_URL_S3`` /
``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``,
``AWS_REGION`` / ``AWS_DEFAULT_REGION``), then pyarrow's own defaults (``~/.aws``, instance
metadata). Options win over the query, the query over the environment.

=================================== ============================================================
option (Hadoop S3A key)              meaning
=================================== ============================================================
``fs.s3a.endpoint``                  ``http(s)://host:port`` or ``host[:port]`` (then
                                     ``fs.s3a.connection.ssl.enabled`` picks the scheme)
``fs.s3a.endpoint.region``           the signing region (default ``us-east-1``)
``fs.s3a.access.key``                access key id
``fs.s3a.secret.key``                secret key
``fs.s3a.session.token``             session token (temporary credentials)
``fs.s3a.path.style.access``         ``true``: ``endpoint/bucket/key``; ``false``: virtual hosts
``fs.s3a.connection.ssl.enabled``    ``false``: ``http`` for an endpoint given without a scheme
``fs.s3a.anonymous``                 ``true``: unsigned requests (public buckets)
=================================== ============================================================
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Mapping, Optional
from urllib.parse import parse_qsl, urlsplit

from .. import options as opt
from ..exceptions import InvalidOptionError

S3A_KEYS = ("fs.s3a.endpoint", "fs.s3a.endpoint.region", "fs.s3a.access.key",
            "fs.s3a.secret.key", "fs.s3a.session.token", "fs.s3a.path.style.access",
            "fs.s3a.connection.ssl.enabled", "fs.s3a.anonymous")
#: URI query keys pyarrow's ``FileSystem.from_uri`` takes for s3 that we map
_QUERY_KEYS = {"endpoint_override", "region", "scheme", "access_key", "secret_key",
               "session_token", "anonymous", "force_virtual_addressing"}
DEFAULT_REGION = "us-east-1"


@dataclass(frozen=True)
class S3Settings:
    """One S3 service and the credentials to use there; None = not given (pyarrow's default)."""

    endpoint: Optional[str] = None  # "http://host:port" (scheme included)
    region: Optional[str] = None
    access_key: Optional[str] = None
    secret_key: Optional[str] = None
    session_token: Optional[str] = None
    path_style: Optional[bool] = None
    anonymous: bool = False

    @property
    def explicit(self) -> bool:
        """Whether anything was given (else pyarrow's own resolution, region lookup included)."""
        return any(v is not None for v in (self.endpoint, self.region, self.access_key,
                                           self.secret_key, self.session_token, self.path_style)) \
            or self.anonymous

    @property
    def signing_region(self) -> str:
        return self.region or DEFAULT_REGION

    def arrow_kwargs(self) -> dict:
        """Keyword arguments of ``pyarrow.fs.S3FileSystem``."""
        kw: dict = {"region": self.signing_region}
        if self.endpoint:
            parts = urlsplit(self.endpoint)
            kw["endpoint_override"] = parts.netloc + parts.path.rstrip("/")
            kw["scheme"] = parts.scheme
        if self.anonymous:
            kw["anonymous"] = True
        else:
            for name in ("access_key", "secret_key", "session_token"):
                if getattr(self, name):
                    kw[name] = getattr(self, name)
        if self.path_style is not None:
            kw["force_virtual_addressing"] = not self.path_style
        return kw


def _bool(name: str, value: Optional[str]) -> Optional[bool]:
    if value is None or not value.strip():
        return None
    v = value.strip().lower()
    if v in ("true", "1", "yes"):
        return True
    if v in ("false", "0", "no"):
        return False
    raise InvalidOptionError(f"Option {name}='{value}' must be true or false")


def _endpoint(value: str, ssl: Optional[bool], name: str) -> str:
    value = value.strip().rstrip("/")
    if "://" in value:
        scheme = value.split("://", 1)[0].lower()
        if scheme not in ("http", "https"):
            raise InvalidOptionError(f"Option {name}='{value}' must be an http(s) address")
        return value
    return ("http" if ssl is False else "https") + "://" + value


def from_options(options: Mapping[str, str]) -> S3Settings:
    """The S3A options given (case-insensitive keys)."""
    ssl = _bool("fs.s3a.connection.ssl.enabled", opt.get(options, "fs.s3a.connection.ssl.enabled"))
    endpoint = opt.get_str(options, "fs.s3a.endpoint")
    return S3Settings(
        endpoint=_endpoint(endpoint, ssl, "fs.s3a.endpoint") if endpoint else None,
        region=opt.get_str(options, "fs.s3a.endpoint.region"),
        access_key=opt.get_str(options, "fs.s3a.access.key"),
        secret_key=opt.get_str(options, "fs.s3a.secret.key"),
        session_token=opt.get_str(options, "fs.s3a.session.token"),
        path_style=_bool("fs.s3a.path.style.access", opt.get(options, "fs.s3a.path.style.access")),
        anonymous=bool(_bool("fs.s3a.anonymous", opt.get(options, "fs.s3a.anonymous"))))


def from_query(query: str) -> S3Settings:
    """pyarrow's URI query keys (``s3://bucket/t?endpoint_override=host:9000&scheme=http``)."""
    q = dict(parse_qsl(query, keep_blank_values=True))
    unknown = sorted(set(q) - _QUERY_KEYS)
    if unknown:
        raise InvalidOptionError(f"Unsupported S3 URI parameter(s) {', '.join(unknown)}: use "
                                 f"{', '.join(sorted(_QUERY_KEYS))}, or the fs.s3a.* options")
    endpoint = q.get("endpoint_override")
    if endpoint and "://" not in endpoint:
        endpoint = f"{q.get('scheme') or 'https'}://{endpoint}"
    virtual = _bool("force_virtual_addressing", q.get("force_virtual_addressing"))
    return S3Settings(endpoint=endpoint or None, region=q.get("region") or None,
                      access_key=q.get("access_key") or None, secret_key=q.get("secret_key") or None,
                      session_token=q.get("session_token") or None,
                      path_style=None if virtual is None else not virtual,
                      anonymous=bool(_bool("anonymous", q.get("anonymous"))))


def from_environment(environ: Optional[Mapping[str, str]] = None) -> S3Settings:
    """The AWS SDK's variables (endpoint, keys, region)."""
    env = os.environ if environ is None else environ
    endpoint = env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL")
    return S3Settings(endpoint=endpoint.rstrip("/") if endpoint else None,
                      region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None,
                      access_key=env.get("AWS_ACCESS_KEY_ID") or None,
                      secret_key=env.get("AWS_SECRET_ACCESS_KEY") or None,
                      session_token=env.get("AWS_SESSION_TOKEN") or None)


def merged(*layers: S3Settings) -> S3Settings:
    """The first layer that gives a field wins (options, then query, then environment)."""
    out = S3Settings()
    for layer in reversed(layers):
        changes = {k: v for k, v in layer.__dict__.items()
                   if v is not None and not (k == "anonymous" and v is False)}
        out = replace(out, **changes)
    return out


def resolve(uri: str, options: Mapping[str, str],
            environ: Optional[Mapping[str, str]] = None) -> S3Settings:
    """The settings for ``uri``: options, then its query, then the environment."""
    return merged(from_options(options), from_query(urlsplit(uri).query), from_environment(environ))


def given_as_options(options: Mapping[str, str]) -> bool:
    """Whether any ``fs.s3a.*`` option is set. Without one, pyarrow's ``FileSystem.from_uri``
    reads the URI's query and the environment itself (and looks an AWS bucket's region up)."""
    return from_options(options).explicit
