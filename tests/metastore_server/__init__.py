"""A real Hive Metastore 2.3.10 (from the pyspark jars) for tests: server.py and fixtures.py."""
