"""A real HDFS for the tests: Hadoop 3.5.0's MiniDFSCluster (one NameNode, one DataNode, WebHDFS on)
on 127.0.0.1, started from the repository's own files (a Maven pom and a small Java launcher).

Usage::

    from hdfs_cluster import MiniHdfsCluster

    with MiniHdfsCluster(tmp_dir) as cluster:   # ~10 s to start
        cluster.url                              # http://127.0.0.1:PORT  (option webhdfsUrl)
        cluster.rpc_port                         # hdfs://127.0.0.1:PORT

In tests use the fixtures (:mod:`hdfs_cluster.fixtures`): ``hdfs_cluster`` (one per session) and
``hdfs`` (the same cluster, emptied for each test).
"""
from .server import HdfsClusterError, MiniHdfsCluster

__all__ = ["HdfsClusterError", "MiniHdfsCluster"]
