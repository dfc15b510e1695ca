"""Random histories of a path-mode table, for the streaming-source and change-feed tests: each
write is laid out the way Hive lays it out (``tests/acid_files.py``, never this library's writer)
and committed, aborted or left open in a real path-mode log (``txn.pathlog``), while a model keeps
every live row by ROW__ID and the changes each write made."""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from acid_files import bp, delta_name, deletes, inserts, write_acid_file
from spark_hive_acid.io.registry import get_filesystem
from spark_hive_acid.txn import pathlog

ROW = "struct<a:int,b:string>"


@dataclass
class History:
    root: Path
    live: dict = field(default_factory=dict)  # (owid, bp, rowId) -> (a, b)
    changes: dict = field(default_factory=dict)  # write id -> [(kind, a, b)]
    inserted: dict = field(default_factory=dict)  # write id -> [a ...] (committed inserts)
    snapshots: dict = field(default_factory=dict)  # write id -> sorted live rows after it
    overwrites: set = field(default_factory=set)  # write ids of INSERT OVERWRITEs
    events: dict = field(default_factory=dict)  # write id -> (insert events, delete events)
    next_a: int = 0

    def __post_init__(self):
        self.root.mkdir(parents=True, exist_ok=True)
        self.fs, self.path = get_filesystem(str(self.root), {})

    def _rows(self, n: int) -> list[tuple]:
        rows = [(self.next_a + i, f"v{self.next_a + i}") for i in range(n)]
        self.next_a += n
        return rows

    def write(self, n_insert: int = 0, delete_keys=(), update_keys=(), outcome: str = "commit",
              bucket: int = 0):
        """One write id: inserts, deletes and updates (delete + insert of new values); committed,
        aborted or left open (returns the open transaction then)."""
        op = "update" if update_keys else ("delete" if delete_keys else "append")
        txn = pathlog.begin(self.fs, self.path, op)
        w = txn.write_id
        prop = bp(bucket)
        new_rows = self._rows(n_insert)
        gone = list(delete_keys) + list(update_keys)
        updated = [(self.live[k][0], f"u{w}-{self.live[k][0]}") for k in update_keys]
        written = new_rows + updated
        events = inserts(w, prop, written)
        if written:
            write_acid_file(self.root / delta_name(w, w, 0) / f"bucket_{bucket:05d}", ROW, events)
        if gone:
            write_acid_file(self.root / delta_name(w, w, 0, delete=True) / f"bucket_{bucket:05d}",
                            ROW, deletes(w, gone))
        if outcome == "open":
            return txn
        if outcome == "abort":
            pathlog.abort(self.fs, self.path, w, "test")
            return None
        self.finish(txn, events, delete_keys, update_keys)
        return None

    def finish(self, txn, events, delete_keys=(), update_keys=()):
        pathlog.commit(self.fs, txn, partitions=[""])  # unpartitioned: the root
        w = txn.write_id
        both = bool(events) and bool(list(delete_keys) + list(update_keys))  # an UPDATE
        ch = []
        for k in list(delete_keys) + list(update_keys):
            ch.append(("update_preimage" if both else "delete",) + self.live.pop(k))
        for e in events:
            self.live[(e[1], e[2], e[3])] = e[5]
            ch.append(("update_postimage" if both else "insert",) + e[5])
        self.changes[w] = ch
        self.inserted[w] = [e[5][0] for e in events]
        self.snapshots[w] = sorted(self.live.values())
        self.events[w] = (events, deletes(w, list(delete_keys) + list(update_keys)))

    def minor_compact(self) -> tuple[int, int]:
        """Hive's minor compaction of the write ids after the last base: one delta_lo_hi and one
        delete_delta_lo_hi holding their events unchanged (aborted ones dropped), sorted by key.
        The directories compacted stay (the Cleaner has not run)."""
        ids = sorted(w for w in self.events if w > max(self.overwrites, default=0))
        lo, hi = ids[0], max(self.changes)
        key = lambda e: (e[1], e[2], e[3])  # noqa: E731
        ins = sorted((e for w in ids for e in self.events[w][0]), key=key)
        dels = sorted((e for w in ids for e in self.events[w][1]), key=key)
        write_acid_file(self.root / delta_name(lo, hi) / "bucket_00000", ROW, ins)
        if dels:
            write_acid_file(self.root / delta_name(lo, hi, delete=True) / "bucket_00000", ROW,
                            dels)
        return lo, hi

    def overwrite(self, n: int) -> None:
        """An INSERT OVERWRITE: a base_W of ``n`` new rows replaces every row."""
        txn = pathlog.begin(self.fs, self.path, "overwrite")
        w = txn.write_id
        events = inserts(w, bp(0), self._rows(n))
        write_acid_file(self.root / f"base_{w:07d}" / "bucket_00000", ROW, events)
        pathlog.commit(self.fs, txn, partitions=[""])
        self.overwrites.add(w)
        ch = [("delete",) + v for v in self.live.values()]
        self.live = {(e[1], e[2], e[3]): e[5] for e in events}
        self.changes[w] = ch + [("insert",) + e[5] for e in events]
        self.inserted[w] = [e[5][0] for e in events]
        self.snapshots[w] = sorted(self.live.values())

    def random_step(self, rnd: random.Random, deletes_too: bool = True) -> None:
        r = rnd.random()
        keys = sorted(self.live)
        if deletes_too and r < 0.08:
            self.overwrite(rnd.randint(1, 3))
        elif deletes_too and keys and r < 0.2:
            self.write(delete_keys=rnd.sample(keys, min(len(keys), rnd.randint(1, 3))))
        elif deletes_too and keys and r < 0.4:
            self.write(n_insert=rnd.randint(0, 2),
                       update_keys=rnd.sample(keys, min(len(keys), rnd.randint(1, 3))))
        elif r < 0.5:
            self.write(n_insert=rnd.randint(1, 4), outcome="abort")
        else:
            self.write(n_insert=rnd.randint(1, 5))

    def snapshot_at(self, w: int) -> list:
        before = [v for k, v in self.snapshots.items() if k <= w]
        return before[-1] if before else []
