"""The Spark glue, and the only package that imports pyspark: the data source (reader and writer),
DML, the table API and the PySpark internals they rely on (:mod:`._compat`)."""
