"""Tables written by Hive's own SQL engine (tests/hive_jvm/sql.py: Hive's embedded driver in local
mode, as Hive's qtests run it), read by the library; then written by the library, read by Hive.

A full-ACID table, partitioned and bucketed, starts as a plain table whose rows Hive wrote as
original files and is converted with ``ALTER TABLE ... SET TBLPROPERTIES ('transactional'='true')``;
a seeded random history of INSERT, INSERT OVERWRITE, UPDATE, DELETE, MERGE and
``ALTER TABLE ... COMPACT`` (run by Hive's compactor Worker) follows. After every statement the
library reads the table at Hive's snapshot (the metastore's ValidWriteIdList) and returns exactly
the rows and ROW__IDs of Hive's own ``SELECT ROW__ID, ...``; at the end every recorded snapshot
reads the same again (time travel over Hive's directories), and the change feed of each
range of write ids turns the rows at its start into the rows at its end. An insert-only table
gets appends, overwrites and compactions the same way.

Then the library appends, updates, deletes, merges and compacts (minor, major) the Hive-written
full-ACID table in path mode (it adopts it), and Hive's own readers (row by row and vectorized,
tests/hive_jvm/oracle.py) read what it wrote, at the library's snapshots.
"""
from __future__ import annotations

import random
from collections import Counter

import pytest

from compaction_ops import ModelTable
from hive_jvm.sql import HiveSql
from spark_hive_acid.exceptions import NotEnoughHistoryError, StreamingError
from spark_hive_acid.read.changes import read_changes
from spark_hive_acid.direct import read_table
from spark_hive_acid.stream.changefeed import batch_change_feed

pytestmark = pytest.mark.hive_sql
ROW = ("json", "int", "str", "int")


def _hive_rows(sql: HiveSql, table: str) -> Counter:
    """Hive's own SELECT: {((writeId, bucketProperty, rowId), (id, v), p): count}."""
    rows = sql.query(f"SELECT ROW__ID, id, v, p FROM {table}", ROW)
    return Counter((rid, (i, v), p) for rid, i, v, p in rows)


def _ours(path: str, snapshot: str) -> Counter:
    t = read_table(path, includeRowId="true", validWriteIds=snapshot)
    rid = t.column("row__id").to_pylist()
    return Counter(((r["writeId"], r["bucketId"], r["rowId"]), (i, v), p) for r, i, v, p in zip(
        rid, t.column("id").to_pylist(), t.column("v").to_pylist(), t.column("p").to_pylist()))


def _values(rows: Counter) -> Counter:
    return Counter({(k[1][0], k[1][1], k[2]): n for k, n in rows.items()})


def _hwm(snapshot: str) -> int:
    return int(snapshot.split(":")[1])


class _History:
    """A random history of Hive statements on ``default.t``, with the model of its ids."""

    def __init__(self, sql: HiveSql, rng: random.Random):
        self.sql, self.rng = sql, rng
        self.next_id = 100
        self.log: list[str] = []

    def _rows(self, n: int, p=None) -> list[tuple]:
        out = []
        for _ in range(n):
            out.append((self.next_id, f"v{self.rng.randrange(1000)}",
                        self.rng.randrange(3) if p is None else p))
            self.next_id += 1
        return out

    def _values(self, n: int) -> str:
        return ", ".join(f"({i}, '{v}', {p})" for i, v, p in self._rows(n))

    def step(self, op: str) -> str:
        rng, sql = self.rng, self.sql
        if op == "insert":
            stmt = f"INSERT INTO t PARTITION (p) VALUES {self._values(rng.randint(1, 6))}"
        elif op == "overwrite":
            p = rng.randrange(3)
            vals = ", ".join(f"({i}, '{v}')" for i, v, _ in self._rows(rng.randint(1, 3), p))
            stmt = f"INSERT OVERWRITE TABLE t PARTITION (p={p}) VALUES {vals}"
        elif op == "update":
            stmt = (f"UPDATE t SET v = concat(v, 'u') WHERE id % {rng.randint(2, 4)} = "
                    f"{rng.randrange(2)}")
        elif op == "delete":
            stmt = f"DELETE FROM t WHERE id % {rng.randint(3, 6)} = {rng.randrange(3)}"
        elif op == "merge":
            live = sorted((r[1][0], r[2]) for r in _hive_rows(sql, "t"))
            picked = rng.sample(live, min(len(live), rng.randint(1, 3)))  # (id, its partition)
            rows = [f"({i}, '{rng.choice(['del', 'm'])}{rng.randrange(9)}', {p})"
                    for i, p in picked] + [self._values(rng.randint(1, 2))]
            sql.run(f"INSERT OVERWRITE TABLE s VALUES {', '.join(rows)}")
            stmt = ("MERGE INTO t USING s ON t.id = s.id AND t.p = s.p "
                    "WHEN MATCHED AND s.v LIKE 'del%' THEN DELETE "
                    "WHEN MATCHED THEN UPDATE SET v = s.v "
                    "WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v, s.p)")
        else:  # minor / major compaction of a partition
            p = rng.randrange(3)
            state = sql.compact("default.t", op, f"p={p}")
            self.log.append(f"{op} p={p}: {state}")
            assert state in ("ready for cleaning", "succeeded"), self.log
            return op
        sql.run(stmt)
        self.log.append(stmt)
        return op


def _check_feed(path: str, snapshots: list) -> int:
    """The change feed of each range (A, B] of Hive's write ids, applied to the rows at A, gives
    the rows at B; a range whose events a major compaction erased is refused. Returns how many
    ranges were checked."""
    checked = 0
    for (a, rows_a), (b, rows_b) in zip(snapshots, snapshots[1:]):
        lo, hi = _hwm(a), _hwm(b)
        if hi == lo:
            continue
        try:
            fs, pairs = batch_change_feed({"path": path, "readChangeFeed": "true",
                                           "startingVersion": str(lo + 1),
                                           "endingVersion": str(hi)})
            changes = [r for spec, t in pairs for batch in read_changes(fs, spec, t)
                       for r in batch.to_pylist()]
        except StreamingError as e:
            assert "compact" in str(e).lower() or "oldest" in str(e).lower(), e
            continue
        rows = Counter(_values(rows_a))
        for c in changes:
            key = (c["id"], c["v"], c["p"])
            if c["_change_type"] in ("insert", "update_postimage"):
                rows[key] += 1
            else:
                rows[key] -= 1
        assert +rows == _values(rows_b) and not -rows, f"feed ({lo}, {hi}]"
        checked += 1
    return checked


def test_hive_written_acid_table_read_then_written_by_us(hive_sql, tmp_path):
    sql: HiveSql = hive_sql
    rng = random.Random(f"acid/{sql.version}")
    sql.run("DROP TABLE IF EXISTS t", "DROP TABLE IF EXISTS s",
            "CREATE TABLE t (id bigint, v string) PARTITIONED BY (p int) "
            "CLUSTERED BY (id) INTO 2 BUCKETS STORED AS ORC TBLPROPERTIES ('transactional'='false')",
            "CREATE TABLE s (id bigint, v string, p int) STORED AS ORC",
            "INSERT INTO t PARTITION (p) VALUES " + ", ".join(
                f"({i}, 'o{i}', {i % 2})" for i in range(12)),
            "ALTER TABLE t SET TBLPROPERTIES ('transactional'='true')")
    path = str(sql.table_dir("t"))
    history = _History(sql, rng)
    ops = ["update", "delete", "insert", "merge", "overwrite", "minor", "insert", "delete",
           "major", "update", "merge", "insert"]
    snapshots = []
    for op in ["original"] + ops:
        if op != "original":
            history.step(op)
        snap = sql.write_ids("default.t")
        hive = _hive_rows(sql, "t")
        assert _ours(path, snap) == hive, f"after {op}: {history.log}"
        snapshots.append((snap, hive))
    assert any(k[0][0] == 0 for k in snapshots[0][1]), "no original file was read"
    # time travel: every snapshot again, now that later writes and compactions are on disk
    refused = 0
    for snap, hive in snapshots:
        try:
            assert _ours(path, snap) == hive, f"snapshot {snap}"
        except NotEnoughHistoryError:
            refused += 1  # a later major compaction erased the history it needs, as in Hive
    assert refused < len(snapshots) // 2
    assert _check_feed(path, snapshots[1:]) >= 4

    # the library writes the Hive-written table; Hive's readers read it
    final = snapshots[-1][1]
    assert len({i for (_, (i, _), _) in final}) == sum(final.values()), "ids are unique"
    table = ModelTable(path, random.Random(5), partitioned=True, buckets=2)
    table.model = {i: (v, p) for (_, (i, v), p) in final}
    table.next_id = history.next_id + 1000
    for op in ("append", "update", "delete", "merge", "append"):
        getattr(table, op)()
        assert table.values(table.ours()) == table.expected(), table.log
    for kind in ("minor", "major"):
        table.compact(kind)
    got = table.ours()
    assert table.values(got) == table.expected(), table.log
    for vectorized in (False, True):
        assert table.hive3_rows(sql.oracle, vectorized=vectorized) == got, table.log


def test_hive_written_insert_only_table(hive_sql):
    sql: HiveSql = hive_sql
    rng = random.Random(f"mm/{sql.version}")
    sql.run("DROP TABLE IF EXISTS m",
            "CREATE TABLE m (id bigint, v string) PARTITIONED BY (p int) STORED AS ORC "
            "TBLPROPERTIES ('transactional'='true', 'transactional_properties'='insert_only')")
    path = str(sql.table_dir("m"))
    next_id = 0
    log = []
    for op in ["insert", "insert", "overwrite", "insert", "minor", "insert", "major", "insert"]:
        if op in ("minor", "major"):
            state = sql.compact("default.m", op, f"p={rng.randrange(2)}")
            assert state in ("ready for cleaning", "succeeded"), state
        else:
            n = rng.randint(1, 5)
            vals = [(next_id + i, f"w{rng.randrange(99)}", rng.randrange(2)) for i in range(n)]
            next_id += n
            if op == "overwrite":
                p = vals[0][2]
                sql.run(f"INSERT OVERWRITE TABLE m PARTITION (p={p}) VALUES "
                        + ", ".join(f"({i}, '{v}')" for i, v, _ in vals))
            else:
                sql.run("INSERT INTO m PARTITION (p) VALUES "
                        + ", ".join(f"({i}, '{v}', {p})" for i, v, p in vals))
        log.append(op)
        snap = sql.write_ids("default.m")
        hive = Counter(sql.query("SELECT id, v, p FROM m", ("int", "str", "int")))
        t = read_table(path, validWriteIds=snap)
        ours = Counter(zip(t.column("id").to_pylist(), t.column("v").to_pylist(),
                           t.column("p").to_pylist()))
        assert ours == hive, f"after {log} at {snap}"
    assert sum(hive.values()) > 0


def test_which_hash_buckets_hives_inserts(hive_sql):
    """Into a table with bucketing_version 2 (what Hive 3+ stamps on new tables), INSERT puts
    each row in the bucket of version 2's hash in both Hives; so does the insert branch of a
    MERGE in Hive 4.1, but Hive 3.1.3's uses version 1's hash: its bucket files then hold rows of
    other buckets (the readers do not mind; bucket pruning and bucketed joins would). The
    library routes by the table's version (tests/write/test_bucketing_hive.py)."""
    import pyarrow as pa
    from spark_hive_acid.acid.bucketing import bucket_ids

    sql: HiveSql = hive_sql
    sql.run("DROP TABLE IF EXISTS b", "DROP TABLE IF EXISTS bs",
            "CREATE TABLE b (id bigint, v string) CLUSTERED BY (id) INTO 4 BUCKETS STORED AS ORC "
            "TBLPROPERTIES ('transactional'='true')",
            "CREATE TABLE bs (id bigint, v string) STORED AS ORC",
            "INSERT INTO b VALUES " + ", ".join(f"({i}, 'i')" for i in range(40)),
            "INSERT OVERWRITE TABLE bs VALUES " + ", ".join(f"({i}, 'm')" for i in range(40, 80)),
            "MERGE INTO b USING bs ON b.id = bs.id WHEN NOT MATCHED THEN INSERT VALUES (bs.id, bs.v)")
    shown = sql.run("SHOW TBLPROPERTIES b('bucketing_version')")[0][0]  # 3.1: "2", 4.1: "key\t2"
    assert [x for x in shown.split("\t") if x.strip()][-1] == "2"
    rows = sql.query("SELECT ROW__ID, id, v FROM b", ("json", "int", "str"))
    for kind in ("i", "m"):
        ids = [i for _, i, v in rows if v == kind]
        writers = [(rid[1] >> 16) & 0xFFF for rid, _, v in rows if v == kind]
        v1, v2 = (bucket_ids([pa.array(ids, pa.int64())], ["bigint"], 4, ver).tolist()
                  for ver in (1, 2))
        assert len(ids) == 40 and v1 != v2
        want = v1 if (kind == "m" and sql.version.startswith("3.")) else v2
        assert writers == want, (kind, sql.version)


@pytest.fixture(scope="module", params=[pytest.param("hive31", marks=pytest.mark.hive31),
                                        pytest.param("hive41", marks=pytest.mark.hive41)])
def hive_sql(request, tmp_path_factory):
    """Hive's SQL engine (a JVM of its own) for this module's tests."""
    from hive_jvm.fixtures import unavailable

    try:
        sql = HiveSql.start(request.param, tmp_path_factory.mktemp(f"sql-{request.param}"))
    except Exception as e:  # noqa: BLE001 - skip / fail with the reason
        unavailable(request.param, e)
    try:
        yield sql
    finally:
        sql.close()

