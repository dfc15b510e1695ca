"""Writing Hive ACID tables: ACID ORC files, task writers, the commit protocol, Spark glue and DML.

Modules, lowest layer first:

* ``orc_tail`` – append footer user metadata to a finished ORC file;
* ``acid_file`` – one ``bucket_N`` file of insert or delete events with Hive's metadata;
* ``partitioning`` – Hive partition directory names, grouping rows by partition/bucket;
* ``options`` / ``schema`` / ``table_setup`` – write options, column matching, table creation;
* ``task_writer`` – a task's rows to staged files; ``commit`` – publish staged files and commit;
* ``spark_writer`` – ``create_writer`` for the data source; ``dml`` – DELETE/UPDATE/MERGE jobs.
"""
