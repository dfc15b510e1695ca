"""Auto-registration: PySpark imports every top-level ``pyspark_*`` module and registers its
``DefaultSource``, so ``spark.read.format("hiveacid")`` works with no ``register()`` call."""
from spark_hive_acid.spark.datasource import HiveAcidDataSource as DefaultSource

__all__ = ["DefaultSource"]
