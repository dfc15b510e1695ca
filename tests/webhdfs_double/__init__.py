"""A WebHDFS protocol double: a small HTTP server speaking the NameNode/DataNode REST protocol.

Usage::

    from webhdfs_double import WebHdfsDouble

    with WebHdfsDouble(root_dir) as srv:
        srv.url                      # http://127.0.0.1:PORT (the "NameNode" HTTP address)
        srv.uri("/warehouse/t")      # webhdfs://127.0.0.1:PORT/warehouse/t -> root_dir/warehouse/t
        srv.request_count            # HTTP requests served so far (NameNode and DataNode steps)

See :mod:`webhdfs_double.server` for what it implements and what it does not.
"""
from .server import RecordedRequest, WebHdfsDouble

__all__ = ["WebHdfsDouble", "RecordedRequest"]
