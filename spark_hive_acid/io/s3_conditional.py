"""Does an S3 endpoint honour conditional creates (``PutObject`` with ``If-None-Match: *``)?

Object-store writes commit by creating log records only if absent, which S3 offers
as ``PutObject`` with ``If-None-Match: *``: the first such put of a key succeeds, every later one
answers ``412 Precondition Failed``. An endpoint that ignores the header (older S3-compatible
servers and gateways) would let two writers both "win", so writes must refuse it.
:func:`supports_conditional_create` asks the endpoint: it puts a probe object twice under the given
prefix and removes it again.

pyarrow cannot send that header, so the probe signs its own requests (AWS Signature Version 4,
:func:`sign`) and sends them with ``requests``. Endpoint and credentials come from the same places
as for reading (:mod:`.s3_settings`: ``fs.s3a.*`` options, the URI's query, the environment).
"""
from __future__ import annotations

import datetime as dt
import hashlib
import hmac
from typing import Mapping, Optional
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from ..exceptions import InvalidOptionError, StorageError
from . import object_client, s3_settings
from .object_client import ConditionalCreateCheck
from .s3_settings import S3Settings

__all__ = ["ConditionalCreateCheck", "checked_once", "object_url", "probe", "sign",
           "supports_conditional_create"]
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode("utf-8"), hashlib.sha256).digest()


def sign(method: str, url: str, headers: Mapping[str, str], payload: bytes,
         settings: S3Settings, now: Optional[dt.datetime] = None) -> dict[str, str]:
    """``headers`` plus the AWS Signature Version 4 headers (``Authorization``,
    ``x-amz-date``, ``x-amz-content-sha256``, ``x-amz-security-token``) for an S3 request.

    Signed: ``host``, the content hash, the date, the token and every ``x-amz-*`` header given
    (user metadata ``x-amz-meta-*``, which S3 requires to be signed); other headers
    (``If-None-Match``, ``Content-Type``) are sent unsigned, as S3 allows.
    """
    if not (settings.access_key and settings.secret_key):
        raise InvalidOptionError("Signing S3 requests needs fs.s3a.access.key and fs.s3a.secret.key "
                                 "(or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)")
    now = now or dt.datetime.now(dt.timezone.utc)
    amz_date = now.strftime("%Y%m%dT%H%M%SZ")
    day = amz_date[:8]
    parts = urlsplit(url)
    payload_hash = hashlib.sha256(payload).hexdigest()
    signed = {"host": parts.netloc, "x-amz-content-sha256": payload_hash, "x-amz-date": amz_date}
    if settings.session_token:
        signed["x-amz-security-token"] = settings.session_token
    signed.update({k.lower(): v for k, v in headers.items() if k.lower().startswith("x-amz-")})
    names = sorted(signed)
    query = "&".join(sorted(f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}"
                            for k, v in parse_qsl(parts.query, keep_blank_values=True)))
    canonical = "\n".join([method.upper(), quote(unquote(parts.path) or "/", safe="/-_.~"), query,
                           "".join(f"{n}:{signed[n].strip()}\n" for n in names),
                           ";".join(names), payload_hash])
    scope = f"{day}/{settings.signing_region}/s3/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                         hashlib.sha256(canonical.encode("utf-8")).hexdigest()])
    key = _hmac(_hmac(_hmac(_hmac(("AWS4" + settings.secret_key).encode("utf-8"), day),
                            settings.signing_region), "s3"), "aws4_request")
    signature = hmac.new(key, to_sign.encode("utf-8"), hashlib.sha256).hexdigest()
    out = {**{k: v for k, v in headers.items() if not k.lower().startswith("x-amz-")},
           **{k: v for k, v in signed.items() if k != "host"}}
    out["Authorization"] = (f"AWS4-HMAC-SHA256 Credential={settings.access_key}/{scope}, "
                            f"SignedHeaders={';'.join(names)}, Signature={signature}")
    return out


def object_url(settings: S3Settings, bucket: str, key: str) -> str:
    """The URL of ``bucket/key``: path style under a custom endpoint unless
    ``fs.s3a.path.style.access=false``; AWS's regional endpoint with virtual hosts otherwise."""
    endpoint = settings.endpoint or f"https://s3.{settings.signing_region}.amazonaws.com"
    path_style = settings.path_style if settings.path_style is not None \
        else settings.endpoint is not None
    key = quote(key, safe="/-_.~")
    if path_style:
        return f"{endpoint.rstrip('/')}/{bucket}/{key}"
    parts = urlsplit(endpoint)
    return f"{parts.scheme}://{bucket}.{parts.netloc}/{key}"


def supports_conditional_create(uri: str, options: Optional[Mapping[str, str]] = None,
                                environ: Optional[Mapping[str, str]] = None,
                                timeout: float = 30.0) -> ConditionalCreateCheck:
    """Put a probe object under ``uri`` (``s3a://bucket/prefix``) twice with
    ``If-None-Match: *`` and delete it: supported when the first put succeeds and the second is
    refused (412, or 409 for a concurrent one). StorageError when the endpoint cannot be reached or
    refuses the request itself (credentials, permissions, missing bucket)."""
    parts = urlsplit(uri)
    if parts.scheme.lower() not in ("s3", "s3a", "s3n") or not parts.netloc:
        raise InvalidOptionError(f"Not an S3 location: {uri} (use s3a://bucket/prefix)")
    settings = s3_settings.resolve(uri, options or {}, environ)
    return probe(settings, parts.netloc, parts.path.strip("/"), uri, timeout)


def checked_once(settings: S3Settings, bucket: str, prefix: str,
                 uri: str) -> ConditionalCreateCheck:
    """:func:`probe`, asked once per endpoint and bucket in this process."""
    return object_client.checked_once(("s3", settings.endpoint, bucket),
                                      lambda: probe(settings, bucket, prefix, uri))


def probe(settings: S3Settings, bucket: str, prefix: str, uri: str,
          timeout: float = 30.0) -> ConditionalCreateCheck:
    """The probe of :func:`supports_conditional_create` on ``bucket`` under ``prefix``."""
    import requests

    key = object_client.probe_key(prefix)
    url = object_url(settings, bucket, key)
    where = settings.endpoint or "AWS S3"
    body = b"conditional create probe"
    session = requests.Session()

    def send(method: str, extra: Mapping[str, str], payload: bytes = b"") -> "requests.Response":
        try:
            return session.request(method, url, data=payload, timeout=timeout,
                                   headers=sign(method, url, extra, payload, settings))
        except requests.RequestException as e:
            raise StorageError(f"Cannot reach the S3 endpoint {where} for {uri}: {e}") from e

    return object_client.probe_twice(
        lambda: send("PUT", {"If-None-Match": "*"}, body), lambda: send("DELETE", {}), where,
        "PutObject", "If-None-Match: *", (412, 409),
        lambda first: first.status_code in (400, 501) and "NotImplemented" in first.text,
        f"{bucket}/{key}")
