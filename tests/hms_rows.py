"""Rows of a metastore table for tests: read them (with ROW__IDs), write them, delete some by id
through the library's own DELETE path (a metastore transaction, without Spark)."""
from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy as np
import pyarrow as pa

from spark_hive_acid.catalog import table_ref
from spark_hive_acid.direct import write_table
from spark_hive_acid.direct import read_table
from spark_hive_acid.txn.committer import commit_write
from spark_hive_acid.write.task_writer import DeleteWriter, TableSpec


def rows_with_ids(uri: str, table: str, **opts: str) -> Counter:
    """``(ROW__ID, id, name, ds)`` of every visible row (tables of columns id, name, ds)."""
    t = read_table("", table=table, metastoreUri=uri, includeRowId="true", **opts)
    return Counter((tuple(r["row__id"].values()), r["id"], r["name"], r.get("ds"))
                   for r in t.to_pylist())


def append(uri: str, table: str, ids: Sequence[int], ds: object = None) -> dict:
    """Append rows ``(id, "n<id>"[, ds])``; ``ds`` a value or a function of the id."""
    data = {"id": pa.array(list(ids), pa.int32()), "name": [f"n{i}" for i in ids]}
    if ds is not None:
        data["ds"] = [ds(i) if callable(ds) else ds for i in ids]
    return write_table(pa.table(data), table=table, options={"metastoreUri": uri})


def delete_ids(uri: str, table: str, ids: Sequence[int]) -> int:
    """DELETE the rows whose id is in ``ids`` (one transaction); returns its write id."""
    ref = table_ref({"table": table, "metastoreuri": uri})
    t = read_table("", table=table, metastoreUri=uri, includeRowId="true")
    keep = np.isin(np.asarray(t.column("id").to_pylist()), list(ids))
    rid = t.column("row__id").combine_chunks()
    fs, loc = ref.location()
    txn = ref.begin("delete")
    spec = TableSpec.of(loc, ref.layout())
    parts = ([pa.array(np.asarray(t.column("ds").to_pylist(), dtype=object)[keep].tolist())]
             if "ds" in t.column_names else [])
    dw = DeleteWriter(fs, spec, txn.write_id, 0,
                      fs.join(loc, "_hiveacid_staging", f"d{txn.write_id}"))
    dw.write(np.asarray(rid.field("writeId"))[keep], np.asarray(rid.field("bucketId"))[keep],
             np.asarray(rid.field("rowId"))[keep], parts)
    staged = dw.close()
    commit_write(fs, spec, txn, staged, dml_partitions=sorted({f.partition for f in staged}))
    return int(txn.write_id)
