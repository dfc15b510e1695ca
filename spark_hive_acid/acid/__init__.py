"""Pure Hive ACID format logic: names, snapshots, directory state, codecs. Never imports Spark."""
