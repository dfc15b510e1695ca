"""An Azure Blob server for the tests (Azurite on 127.0.0.1), see :mod:`azure_server.server`;
fixtures in :mod:`azure_server.fixtures` (``azure_server`` per session, ``azure`` per test)."""
from .server import ACCOUNT, KEY, AzureServer, AzureServerError

__all__ = ["ACCOUNT", "KEY", "AzureServer", "AzureServerError"]
