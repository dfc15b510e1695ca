"""The few S3 calls pyarrow cannot make: conditional creates, and uploads that can be abandoned.

pyarrow's S3 file system sends no ``If-None-Match`` header, and its output stream completes a
multipart upload whenever it is closed, also when the writer failed half way (its destructor
closes it too), which would leave a partial object at the name. Writes on object stores need
both (docs/storage.md, "Object stores: writes"), so this module sends them itself: signed with
AWS Signature Version 4 (:func:`.s3_conditional.sign`), over ``requests``, with the settings of
:mod:`.s3_settings` (``fs.s3a.*`` options, the URI's query, the environment).

* :meth:`S3Client.create_exclusive`: ``PutObject`` with ``If-None-Match: *`` carrying a random
  nonce as user metadata (``x-amz-meta-hiveacid-nonce``); 412 means the object exists, a lost
  answer is resolved by the nonce (:meth:`.object_client.ObjectClient.conditional_create`).
* the calls of :class:`.object_upload.WholeUpload`: one ``PutObject`` for a small object, a
  multipart upload above its part size; completing it conditionally when ``exclusive``.
"""
from __future__ import annotations

import base64
import hashlib
import logging
import threading
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional
from urllib.parse import quote
from xml.etree import ElementTree
from xml.sax.saxutils import escape

from ..exceptions import AnswerLostError, PathExistsError, StorageError
from .object_client import ATTEMPTS, BUSY, CREATED, EXISTS, UNSURE, ObjectClient, pause
from .s3_conditional import object_url, sign
from .s3_settings import S3Settings

log = logging.getLogger(__name__)

#: User metadata holding a create's nonce (``x-amz-meta-hiveacid-nonce``).
NONCE_HEADER = "x-amz-meta-hiveacid-nonce"


@dataclass(frozen=True)
class S3Client(ObjectClient):
    """Signed requests to one S3 service (picklable: its settings; a session per thread)."""

    settings: S3Settings
    timeout: float = 60.0
    _local: Any = field(default_factory=threading.local, compare=False, repr=False)

    nonce_header = NONCE_HEADER
    label_scheme = "s3"

    @property
    def where(self) -> str:
        return self.settings.endpoint or "AWS S3"

    def url(self, bucket: str, key: str, query: str = "") -> str:
        return object_url(self.settings, bucket, key) + (f"?{query}" if query else "")

    def send(self, method: str, bucket: str, key: str, *, query: str = "",
             headers: Optional[Mapping[str, str]] = None, body: bytes = b"") -> Any:
        url = self.url(bucket, key, query)
        signed = sign(method, url, dict(headers or {}), body, self.settings)
        return self.request(method, url, signed, body, self.label(bucket, key))

    def error(self, what: str, bucket: str, key: str, res: Any) -> StorageError:
        code = _error_code(res)
        if res.status_code == 403:
            return StorageError(f"Permission denied {what} s3://{bucket}/{key} at {self.where}: "
                                f"{code or res.status_code}")
        return StorageError(f"{what.capitalize()} s3://{bucket}/{key} failed at {self.where}: "
                            f"HTTP {res.status_code} {code or res.text[:200]}")

    # --- create if absent ------------------------------------------------------------------
    def create_outcome(self, res: Any, bucket: str, key: str) -> str:
        if res.ok:
            return CREATED
        if res.status_code == 412:
            return EXISTS
        if res.status_code == 409:  # ConditionalRequestConflict: another put of the key in flight
            return BUSY
        if res.status_code < 500:
            raise self.error("creating", bucket, key, res)
        return UNSURE

    def create_exclusive(self, bucket: str, key: str, data: bytes) -> bool:
        """Create the object only if absent; False when it existed (see the module docstring)."""
        def put(nonce: dict[str, str]) -> Any:
            return self.send("PUT", bucket, key, headers={"If-None-Match": "*", **nonce},
                             body=data)
        return self.conditional_create(bucket, key, put)

    # --- objects and multipart uploads -------------------------------------------------------
    def put(self, bucket: str, key: str, data: bytes, *, exclusive: bool = False) -> None:
        """One ``PutObject``; with ``exclusive``, PathExistsError when the object exists."""
        if exclusive:
            if not self.create_exclusive(bucket, key, data):
                raise PathExistsError(f"s3://{bucket}/{key} exists")
            return
        res = self.retried("PUT", bucket, key, body=data)
        if not res.ok:
            raise self.error("writing", bucket, key, res)

    def start_upload(self, bucket: str, key: str, *, exclusive: bool = False) -> str:
        res = self.retried("POST", bucket, key, query="uploads=")
        if not res.ok:
            raise self.error("starting an upload of", bucket, key, res)
        return _xml_text(res.content, "UploadId")

    def upload_part(self, bucket: str, key: str, upload_id: str, number: int,
                    data: bytes) -> str:
        res = self.retried("PUT", bucket, key,
                            query=f"partNumber={number}&uploadId={quote(upload_id, safe='')}",
                            body=data)
        if not res.ok:
            raise self.error(f"uploading part {number} of", bucket, key, res)
        return res.headers["ETag"]

    def finish_upload(self, bucket: str, key: str, upload_id: str, etags: list[str], *,
                      exclusive: bool = False) -> None:
        """``CompleteMultipartUpload``; with ``exclusive``, ``If-None-Match: *`` (PathExistsError
        when the object exists; the upload is then aborted)."""
        body = ("<CompleteMultipartUpload>" + "".join(
            f"<Part><PartNumber>{n}</PartNumber><ETag>{e}</ETag></Part>"
            for n, e in enumerate(etags, 1)) + "</CompleteMultipartUpload>").encode("utf-8")
        query = f"uploadId={quote(upload_id, safe='')}"
        headers = {"If-None-Match": "*"} if exclusive else {}
        for attempt in range(ATTEMPTS):
            try:
                res = self.send("POST", bucket, key, query=query, headers=headers, body=body)
            except AnswerLostError:
                res = None
            if res is not None and res.status_code == 412:
                self.abort_upload(bucket, key, upload_id)
                raise PathExistsError(f"s3://{bucket}/{key} exists")
            # S3 may answer 200 with an error document; a lost answer or a 5xx may have applied:
            # completing the same upload again is idempotent, and a gone upload means it was done
            if res is not None and res.ok and b"<Error>" not in res.content:
                return
            if res is not None and res.status_code == 404 and b"NoSuchUpload" in res.content:
                if self.head(bucket, key) is not None:
                    return
            if res is not None and 400 <= res.status_code < 500:
                raise self.error("completing the upload of", bucket, key, res)
            pause(attempt)
        raise StorageError(f"Could not complete the upload of s3://{bucket}/{key} at "
                           f"{self.where} after {ATTEMPTS} attempts")

    def abort_upload(self, bucket: str, key: str, upload_id: str) -> None:
        """Abandon a multipart upload (best effort: a bucket lifecycle rule reclaims any left)."""
        try:
            res = self.retried("DELETE", bucket, key, query=f"uploadId={quote(upload_id, safe='')}")
            if not res.ok and res.status_code != 404:
                log.warning("Could not abort the upload of s3://%s/%s: HTTP %d", bucket, key,
                            res.status_code)
        except StorageError as e:
            log.warning("Could not abort the upload of s3://%s/%s: %s", bucket, key, e)

    def delete(self, bucket: str, key: str) -> None:
        """``DeleteObject`` (a missing key is no error in S3)."""
        res = self.retried("DELETE", bucket, key)
        if not res.ok and res.status_code != 404:
            raise self.error("deleting", bucket, key, res)

    def delete_many(self, bucket: str, keys: list[str]) -> None:
        """``DeleteObjects``, 1,000 keys a request (S3's limit)."""
        for i in range(0, len(keys), 1000):
            body = ("<Delete><Quiet>true</Quiet>" + "".join(
                f"<Object><Key>{escape(k)}</Key></Object>" for k in keys[i:i + 1000])
                + "</Delete>").encode("utf-8")
            md5 = base64.b64encode(hashlib.md5(body).digest()).decode("ascii")
            res = self.retried("POST", bucket, "", query="delete=", body=body,
                                headers={"Content-MD5": md5})
            if not res.ok or b"<Error>" in res.content:
                raise self.error("deleting objects under", bucket, keys[i], res)


def _error_code(res: Any) -> str:
    try:
        return _xml_text(res.content, "Code")
    except (StorageError, ValueError):
        return ""


def _xml_text(content: bytes, tag: str) -> str:
    try:
        root = ElementTree.fromstring(content)
    except ElementTree.ParseError as e:
        raise StorageError(f"Unexpected answer from S3: {content[:200]!r}") from e
    for el in root.iter():
        if el.tag.rsplit("}", 1)[-1] == tag and el.text:
            return el.text
    raise StorageError(f"No {tag} in S3's answer: {content[:200]!r}")
