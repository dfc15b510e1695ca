"""What every object store's writes share: retries, create-if-absent resolved by a nonce, and
the endpoint probe asked once (docs/storage.md, "Object stores: writes").

A store's client (:class:`~.s3_client.S3Client`, :class:`~.azure_client.AzureClient`) subclasses
:class:`ObjectClient` and supplies how one request is signed and sent (:meth:`ObjectClient.send`),
how a failed answer is worded (:meth:`ObjectClient.error`) and how the answer to a conditional
create reads (:meth:`ObjectClient.create_outcome`). The rest is here, once:

* :meth:`ObjectClient.conditional_create`: a conditional put carrying a random nonce as user
  metadata. "Exists" means the name is taken. An answer that never came (a timeout, a connection
  cut after sending) or a 5xx is resolved by reading the object's metadata back: the nonce says
  whether the object there is this call's; absent, the put is sent again (it is conditional, so a
  late copy of the first one cannot overwrite anything). Never guessed.
* :func:`checked_once`: whether an endpoint honours the condition, asked once per endpoint and
  container in a process; :func:`probe_twice` asks it (a probe object put twice, then deleted).
"""
from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

from ..exceptions import AnswerLostError, StorageError

log = logging.getLogger(__name__)

#: 5xx answers and lost answers are retried this many times (with the nonce check in between).
ATTEMPTS = 6
#: A concurrent conditional put of the key in flight (S3's 409): retried after a pause, then the
#: answer that follows tells who won.
CONFLICT_PAUSE_S = 0.05
#: Where the endpoint probe puts its object, below the table's container/prefix.
PROBE_DIR = "_hiveacid_probe"

CREATED, EXISTS, BUSY, UNSURE = "created", "exists", "busy", "unsure"


def pause(attempt: int) -> None:
    time.sleep(min(0.05 * 2 ** attempt, 2.0))


def never_sent(e: BaseException) -> bool:
    """Whether a connection error happened before the request went out (refused, no route):
    then it was certainly not applied."""
    text = repr(e)
    return any(m in text for m in ("Connection refused", "NewConnectionError",
                                   "Name or service not known", "No route to host"))


class ObjectClient:
    """Signed requests to one object store (see the module docstring). Subclasses are frozen
    dataclasses with a ``timeout`` and a ``_local`` (``threading.local``: a session per thread)."""

    #: the response header holding a create's nonce (user metadata)
    nonce_header: str = ""
    #: how messages name objects: ``f"{scheme}://{container}/{key}"``
    label_scheme: str = ""
    timeout: float
    _local: Any

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_local"}

    def __setstate__(self, state: dict) -> None:
        for k, v in state.items():
            object.__setattr__(self, k, v)
        object.__setattr__(self, "_local", threading.local())

    @property
    def where(self) -> str:
        """The endpoint, for messages."""
        raise NotImplementedError

    def label(self, container: str, key: str) -> str:
        return f"{self.label_scheme}://{container}/{key}"

    def session(self) -> Any:
        s = getattr(self._local, "session", None)
        if s is None:
            import requests

            s = self._local.session = requests.Session()
        return s

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes,
                what: str) -> Any:
        """Send one (signed) request; AnswerLostError when it was sent and no answer came,
        StorageError when the endpoint cannot be reached at all."""
        import requests

        try:
            return self.session().request(method, url, data=body, headers=dict(headers),
                                          timeout=self.timeout)
        except requests.ConnectionError as e:
            if never_sent(e):
                raise StorageError(f"Cannot reach the endpoint {self.where} for {what}: {e}") from e
            raise AnswerLostError(f"{method} {what}: no answer from {self.where} ({e})") from e
        except requests.Timeout as e:
            raise AnswerLostError(f"{method} {what}: no answer from {self.where} within "
                                  f"{self.timeout:.0f} s ({e})") from e

    def send(self, method: str, container: str, key: str, *, query: str = "",
             headers: Optional[Mapping[str, str]] = None, body: bytes = b"") -> Any:
        """One signed request to ``container/key`` (see :meth:`request`)."""
        raise NotImplementedError

    def error(self, what: str, container: str, key: str, res: Any) -> StorageError:
        raise NotImplementedError

    def create_outcome(self, res: Any, container: str, key: str) -> str:
        """The answer to a conditional create: CREATED, EXISTS, BUSY (try again), UNSURE (a 5xx:
        may have been applied); anything else raises (:meth:`error`)."""
        raise NotImplementedError

    # --- shared logic ------------------------------------------------------------------------
    def retried(self, method: str, container: str, key: str, *, query: str = "",
                body: bytes = b"", headers: Optional[Mapping[str, str]] = None) -> Any:
        """An idempotent request, sent again after a lost answer or a 5xx."""
        res = None
        for attempt in range(ATTEMPTS):
            try:
                res = self.send(method, container, key, query=query, body=body, headers=headers)
            except AnswerLostError:
                pause(attempt)
                continue
            if res.status_code < 500:
                return res
            pause(attempt)
        if res is not None:
            return res
        raise StorageError(f"No answer from {self.where} to {method} "
                           f"{self.label(container, key)} after {ATTEMPTS} attempts")

    def head(self, container: str, key: str) -> Optional[Mapping[str, str]]:
        """The object's headers (its user metadata among them), or None when there is none."""
        res = self.retried("HEAD", container, key)
        if res.status_code == 404:
            return None
        if res.ok:
            return {k.lower(): v for k, v in res.headers.items()}
        raise self.error("reading the metadata of", container, key, res)

    def is_ours(self, container: str, key: str, nonce: str) -> Optional[bool]:
        """Whether the object at ``key`` was created with ``nonce``; None when there is none."""
        found = self.head(container, key)
        return None if found is None else found.get(self.nonce_header) == nonce

    def conditional_create(self, container: str, key: str,
                           put: Callable[[dict[str, str]], Any],
                           nonce: Optional[str] = None) -> bool:
        """Create the object only if absent, by ``put(nonce headers)`` (one conditional request);
        False when it existed (see the module docstring). ``nonce``: one the object already
        carries (GCS: given when a resumable upload started), else a new one."""
        nonce = nonce or uuid.uuid4().hex
        headers = {self.nonce_header: nonce}
        unsure = False  # a put of ours may have been applied without our hearing of it
        for attempt in range(ATTEMPTS):
            try:
                res = put(headers)
            except AnswerLostError as e:
                log.warning("%s: resolving by reading the object back", e)
                unsure = True
            else:
                outcome = self.create_outcome(res, container, key)
                if outcome == CREATED:
                    return True
                if outcome == EXISTS:
                    return bool(self.is_ours(container, key, nonce)) if unsure else False
                if outcome == BUSY:  # another conditional put of this key in flight
                    time.sleep(CONFLICT_PAUSE_S * (attempt + 1))
                    continue
                unsure = True  # a 5xx may have been applied
            mine = self.is_ours(container, key, nonce)
            if mine is not None:
                return mine
            pause(attempt)
        raise StorageError(f"Could not create {self.label(container, key)} at {self.where}: no "
                           f"answer after {ATTEMPTS} attempts (nothing is left there)")


@dataclass(frozen=True)
class ConditionalCreateCheck:
    """The answer: ``supported`` and, either way, what the endpoint did (``detail``)."""

    supported: bool
    endpoint: str
    detail: str

    def __bool__(self) -> bool:
        return self.supported


_checked: dict[tuple[str, Optional[str], str], ConditionalCreateCheck] = {}
_checked_lock = threading.Lock()


def checked_once(key: tuple[str, Optional[str], str],
                 probe: Callable[[], ConditionalCreateCheck]) -> ConditionalCreateCheck:
    """``probe()``, asked once per ``key`` (store, endpoint, container) in this process (writers
    ask before their first write; the answer does not change while a process runs)."""
    with _checked_lock:
        found = _checked.get(key)
    if found is None:
        found = probe()
        with _checked_lock:
            _checked[key] = found
    return found


def forget_checks() -> None:
    """Forget every endpoint's answer (tests)."""
    with _checked_lock:
        _checked.clear()


def probe_key(prefix: str) -> str:
    """A fresh probe object's key below ``prefix``."""
    return "/".join(p for p in (prefix.strip("/"), PROBE_DIR, uuid.uuid4().hex) if p)


def probe_twice(put: Callable[[], Any], delete: Callable[[], Any], where: str, request: str,
                condition: str, refused: tuple[int, ...],
                not_implemented: Callable[[Any], bool], name: str) -> ConditionalCreateCheck:
    """Put a probe object twice with ``put`` (a conditional create: ``request`` with
    ``condition``) and
    ``delete`` it: supported when the first put succeeds and the second answers one of
    ``refused``. StorageError when the endpoint refuses the first put itself (credentials,
    permissions, a missing container); ``name`` names the object in that message."""
    first = put()
    try:
        if not_implemented(first):
            return ConditionalCreateCheck(False, where, "the endpoint does not implement "
                                          f"{condition} on {request} ({first.status_code})")
        if not first.ok:
            raise StorageError(f"The endpoint {where} refused a {request} to {name}: "
                               f"HTTP {first.status_code} {first.text[:300]}")
        second = put()
        if second.status_code in refused:
            return ConditionalCreateCheck(True, where, f"a second conditional {request} of the "
                                          f"same name was refused ({second.status_code})")
        if second.ok:
            return ConditionalCreateCheck(False, where, f"the endpoint ignored {condition} (a "
                                          f"second {request} of the same name succeeded): two "
                                          "writers could both create one log record")
        return ConditionalCreateCheck(False, where, f"unexpected answer to a second conditional "
                                      f"{request}: HTTP {second.status_code} {second.text[:200]}")
    finally:
        if first.ok:
            gone = delete()
            if not gone.ok:
                log.warning("Could not delete the probe object %s: HTTP %d", name,
                            gone.status_code)
