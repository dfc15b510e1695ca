"""Compaction and cleaning of full-ACID tables without Spark (docs/compaction.md).

* :func:`~spark_hive_acid.compaction.runner.compact`: minor or major compaction, output exactly
  as Hive's compactor writes it;
* :func:`~spark_hive_acid.compaction.cleaner.vacuum`: removes what compaction (or a newer base)
  made obsolete, and aborted directories, once no reader can need them;
* :func:`~spark_hive_acid.compaction.initiator.decide`: Hive's Initiator rules, per partition.

Layered like ``write/`` and ``txn/``: ``plan`` (what to rewrite) <- ``rewrite`` (one output file)
<- ``runner`` (the transaction around them); ``initiator`` and ``cleaner`` read the table's state.
The Spark glue (units as Spark tasks) is ``spark/compaction.py``.
"""
