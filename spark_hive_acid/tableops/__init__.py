"""Operations on a whole table that write no data of their own, without Spark: truncate, drop
partitions (ACID: a new empty base), add columns, create an empty table. ``HiveAcidTable`` and
``write_table`` users reach them through :mod:`spark_hive_acid.direct` and the table API."""
