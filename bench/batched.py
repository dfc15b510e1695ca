"""A benchmark-only variant of the hiveacid source that re-slices the reader's batches.

The reader yields one record batch per ORC stripe (hundreds of thousands to millions of rows).
``hiveacid_bench_batch`` cuts them into batches of at most ``benchBatchRows`` rows before they go
to the JVM, to measure whether the batch size matters (it needs ``bench`` importable by the
Python workers: run.py puts the repo root on PYTHONPATH before starting Spark).
"""
from __future__ import annotations

from spark_hive_acid.spark.datasource import HiveAcidDataSource, HiveAcidReader


class BatchedReader(HiveAcidReader):
    def __init__(self, scan, schema, batch_rows: int):
        super().__init__(scan, schema)
        self.batch_rows = batch_rows

    def read(self, partition):
        for b in super().read(partition):
            n = b.num_rows
            if n <= self.batch_rows:
                yield b
                continue
            for off in range(0, n, self.batch_rows):
                yield b.slice(off, self.batch_rows)


class BatchedHiveAcidSource(HiveAcidDataSource):
    @classmethod
    def name(cls) -> str:
        return "hiveacid_bench_batch"

    def _scan(self):
        from spark_hive_acid.catalog import open_scan

        scan = getattr(self, "_cached_scan", None)
        if scan is None:
            opts = {k: v for k, v in self.options.items() if k.lower() != "benchbatchrows"}
            scan = open_scan(opts)
            self._cached_scan = scan
        return scan

    def reader(self, schema):
        rows = int({k.lower(): v for k, v in self.options.items()}.get("benchbatchrows", "100000"))
        return BatchedReader(self._scan(), schema, rows)
