"""A benchmark-only Python data source whose writer consumes the Arrow batches and writes nothing.

Appending a DataFrame to it costs what every Python data source write pays before encoding a
single byte: Spark converting rows to Arrow, the transfer to the Python workers, the job and the
commit. The harness measures it next to ``df.write.orc`` and the hiveacid append, so the share of
an append that the connector itself adds is visible (it needs ``bench`` importable by the Python
workers: run.py puts the repo root on PYTHONPATH before starting Spark).
"""
from __future__ import annotations

from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, WriterCommitMessage

FORMAT = "hiveacid_bench_null"


class NullArrowWriter(DataSourceArrowWriter):
    def write(self, iterator) -> WriterCommitMessage:
        for _ in iterator:  # receive every batch, as a real writer would
            pass
        return WriterCommitMessage()


class NullSinkSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return FORMAT

    def writer(self, schema, overwrite: bool) -> NullArrowWriter:
        return NullArrowWriter()
