"""A GCS server for the tests (fake-gcs-server on 127.0.0.1), see :mod:`gcs_server.server`;
fixtures in :mod:`gcs_server.fixtures` (``gcs_server`` per session, ``gcs`` per test)."""
from .server import GcsServer, GcsServerError

__all__ = ["GcsServer", "GcsServerError"]
