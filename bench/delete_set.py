"""Section 6: the delete-event set's size per event and build time."""
from __future__ import annotations

import numpy as np

from .gen import BP
from .timing import measure


def events(n: int, files: int = 20, write_ids: int = 11, rows_per_wid: int | None = None,
           seed: int = 1):
    """``n`` distinct delete keys shaped like the reference table's: rows of write ids 1..k,
    dealt to ``files`` delete files, each file sorted, the files concatenated (as the reader
    concatenates them before building)."""
    rng = np.random.default_rng(seed)
    rows_per_wid = rows_per_wid or max(n * 10 // write_ids, 1)
    chosen = np.sort(rng.choice(rows_per_wid * write_ids, size=n, replace=False))
    owid = (chosen // rows_per_wid + 1).astype(np.int64)
    rid = (chosen % rows_per_wid).astype(np.int64)
    which = rng.integers(0, files, n)
    order = np.argsort(which, kind="stable")  # file by file, each file's events sorted
    return owid[order], np.full(n, BP, np.int32), rid[order]


def run(sizes=(1_000_000, 10_000_000), reps: int = 3, warmup: int = 1, log=None) -> dict:
    from spark_hive_acid.read.delete_events import DeleteEventSet

    out = {}
    for n in sizes:
        owid, bp, rid = events(n)
        res = measure({"build": lambda: DeleteEventSet.build(owid, bp, rid)},
                      reps=reps, warmup=warmup, log=log)["build"]
        s = res.pop("result", None)
        if s is not None:
            res["events"] = len(s)
            res["nbytes"] = int(s.nbytes)
            res["bytes_per_event"] = round(s.nbytes / max(len(s), 1), 3)
            # lookup speed: one 1M-row probe batch against the set
            probe_n = 1_000_000
            rng = np.random.default_rng(3)
            pw = np.full(probe_n, 3, np.int64)
            pr = np.sort(rng.integers(0, n, probe_n)).astype(np.int64)
            pb = np.full(probe_n, BP, np.int32)
            lk = measure({"lookup": lambda: s.deleted_mask(pw, pb, pr)}, reps=reps, warmup=1)
            res["lookup_1M_rows_s"] = lk["lookup"].get("median_s")
        out[str(n)] = res
    return out
