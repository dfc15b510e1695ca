"""Streaming without Spark: the exactly-once sink's commit (:mod:`.sink`), the source's offsets
and micro-batch plans (:mod:`.source`). ``spark/streaming.py`` is the thin Spark glue."""
