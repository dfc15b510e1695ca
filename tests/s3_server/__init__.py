"""An S3 server for the tests (moto's ``moto_server`` on 127.0.0.1), see :mod:`s3_server.server`;
fixtures in :mod:`s3_server.fixtures` (``s3_server`` per session, ``s3`` per test)."""
from .server import ACCESS_KEY, REGION, SECRET_KEY, LoggedRequest, S3Server, S3ServerError

__all__ = ["ACCESS_KEY", "REGION", "SECRET_KEY", "LoggedRequest", "S3Server", "S3ServerError"]
