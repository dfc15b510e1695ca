"""Several operations in one metastore transaction (issue 26): two tables written by one
``transaction(metastoreUri=...)`` (appends, a partition overwrite, a delete) are committed by one
``commit_txn``, readable by our reader (and Hive 2.3's); a failure inside the block leaves nothing
visible and no transaction open; a concurrent writer's lock makes the whole transaction fail."""
from __future__ import annotations

import os
import uuid

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import spark_hive_acid as sha
from hive_ref.fixtures import hive_ref  # noqa: F401
from spark_hive_acid.exceptions import LockTimeoutError, UnsupportedOperationError
from spark_hive_acid.txn.hms import write_transaction


def _create(metastore, tmp_path, partitioned):
    name = f"m_{uuid.uuid4().hex[:8]}"
    with metastore.client() as c:
        c.create_table("default", name, [("id", "int"), ("name", "string")],
                       partition_keys=[("ds", "string")] if partitioned else (),
                       bucket_cols=["id"], num_buckets=2, location=f"file:{tmp_path / name}")
    return f"default.{name}", tmp_path / name


def _rows(ids, ds=None):
    cols = {"id": pa.array(ids, pa.int32()), "name": pa.array([f"n{i}" for i in ids])}
    if ds is not None:
        cols["ds"] = pa.array([ds] * len(ids))
    return pa.table(cols)


def _state(metastore, table):
    t = sha.read_table("", table=table, metastoreUri=metastore.uri)
    ds = t.column("ds").to_pylist() if "ds" in t.schema.names else [None] * t.num_rows
    return sorted(zip(t.column("id").to_pylist(), ds))


def _leftovers(location):
    """Staging directories anywhere under a table (none after any end of a transaction)."""
    return [d for d, _, _ in os.walk(location) if os.path.basename(d) == "_hiveacid_staging"]


@pytest.fixture
def hive_ref_if_hive23(metastore, request):
    """Hive 2.3's reader, for tables of the 2.3 metastore (its write ids are txn ids)."""
    if metastore.version != "hive23":
        return None
    return request.getfixturevalue("hive_ref")


@pytest.fixture
def two_tables(metastore, tmp_path):
    t, t_loc = _create(metastore, tmp_path, partitioned=True)
    u, u_loc = _create(metastore, tmp_path, partitioned=False)
    sha.write_table(pa.concat_tables([_rows([1, 2], "a"), _rows([3, 4], "b")]), table=t,
                    options=metastore.options())
    sha.write_table(_rows(list(range(20))), table=u, options=metastore.options())
    return t, t_loc, u, u_loc


def test_two_tables_commit_together(metastore, two_tables, hive_ref_if_hive23):
    t, t_loc, u, u_loc = two_tables
    before_t = _state(metastore, t)
    with sha.transaction(metastoreUri=metastore.uri) as tx:
        assert tx.append(t, _rows([5], "a")) == 1
        assert tx.overwrite(t, _rows([6, 7]), partition={"ds": "b"}) == 2
        assert tx.delete(u, pc.field("id") < 10) == 10
        assert tx.append(u, _rows([100])) == 1
        # inside the block, readers (ours included) see nothing of it yet
        assert _state(metastore, t) == before_t
        assert sorted(tx.read(u).column("id").to_pylist()) == list(range(20))
        txn_id = tx.group.txn_id
        write_ids = {m.full_name: m.write_id for m in tx.group.members}
    # the model: what each statement does, applied in order
    assert _state(metastore, t) == [(1, "a"), (2, "a"), (5, "a"), (6, "b"), (7, "b")]
    assert _state(metastore, u) == [(i, None) for i in [*range(10, 20), 100]]
    assert set(write_ids) == {t, u}
    if metastore.major < 3:  # Hive 2.x: the write id is the transaction id
        assert set(write_ids.values()) == {txn_id}
    assert txn_id not in metastore.our_open_txns()
    assert not _leftovers(t_loc) and not _leftovers(u_loc)
    # one snapshot across both tables
    both = sha.read_tables([t, u], metastoreUri=metastore.uri)
    assert sorted(both[u].column("id").to_pylist()) == [*range(10, 20), 100]
    assert sorted(both[t].column("id").to_pylist()) == [1, 2, 5, 6, 7]
    if hive_ref_if_hive23 is not None:  # Hive 2.3's own reader (write ids = txn ids there)
        cols = [("id", "int"), ("name", "string")]
        got = sorted(v[0] for _, v in hive_ref_if_hive23.read(u_loc, cols, bucket_count=2))
        assert got == [*range(10, 20), 100]
        got = sorted(v[0] for _, v in hive_ref_if_hive23.read(t_loc / "ds=b", cols,
                                                               bucket_count=2))
        assert got == [6, 7]


def test_a_failure_inside_the_block_leaves_nothing(metastore, two_tables):
    t, t_loc, u, u_loc = two_tables
    before = (_state(metastore, t), _state(metastore, u))
    with pytest.raises(RuntimeError, match="boom"):
        with sha.transaction(metastoreUri=metastore.uri) as tx:
            tx.append(t, _rows([50], "a"))
            tx.overwrite(t, _rows([51]), partition={"ds": "c"})
            tx.delete(u, pc.field("id") >= 0)
            txn_id = tx.group.txn_id
            raise RuntimeError("boom")
    assert (_state(metastore, t), _state(metastore, u)) == before
    assert txn_id not in metastore.our_open_txns()
    assert not _leftovers(t_loc) and not _leftovers(u_loc)
    assert not (t_loc / "ds=c").exists() or not any((t_loc / "ds=c").iterdir())


def test_a_concurrent_writer_makes_it_fail_whole(metastore, two_tables):
    t, _, u, u_loc = two_tables
    before = (_state(metastore, t), _state(metastore, u))
    db, name = t.split(".")
    other = write_transaction(metastore.options(), db, name, "insert_overwrite").begin()
    try:
        with pytest.raises(LockTimeoutError):
            with sha.transaction(metastoreUri=metastore.uri, lockWaitTimeout=2) as tx:
                tx.append(u, _rows([200]))
                tx.append(t, _rows([201], "a"))  # t is locked EXCLUSIVE by the other writer
        assert (_state(metastore, t), _state(metastore, u)) == before
        assert set(metastore.our_open_txns()) == {other.txn_id}
        assert not _leftovers(u_loc)
    finally:
        other.abort("test over")
    assert not metastore.our_open_txns()


def test_refusals(metastore, two_tables, tmp_path):
    t, _, u, _ = two_tables
    before = (_state(metastore, t), _state(metastore, u))
    with pytest.raises(UnsupportedOperationError, match="already written"):
        with sha.transaction(metastoreUri=metastore.uri) as tx:
            tx.append(u, _rows([300]))
            tx.delete(u, pc.field("id") == 300)
    with pytest.raises(UnsupportedOperationError, match="is a path"):
        with sha.transaction(metastoreUri=metastore.uri) as tx:
            tx.append(t, _rows([301], "a"))
            tx.append(str(tmp_path / "p"), _rows([302]))
    with pytest.raises(UnsupportedOperationError, match="overwrite"):
        with sha.transaction(metastoreUri=metastore.uri) as tx:
            tx.overwrite(t, _rows([303]), partition={"ds": "a"})
            tx.append(t, _rows([304], "a"))
    assert (_state(metastore, t), _state(metastore, u)) == before
    assert not metastore.our_open_txns()


def test_an_update_and_an_append_on_two_tables_commit_together(metastore, two_tables):
    t, _, u, _ = two_tables
    before_t = _state(metastore, t)
    with sha.transaction(metastoreUri=metastore.uri) as tx:
        assert tx.update(u, pc.field("id") >= 15, {"name": "upd"}) == 5
        assert tx.append(t, _rows([8], "a")) == 1
    got = sha.read_table("", table=u, metastoreUri=metastore.uri)
    assert sorted(zip(got.column("id").to_pylist(), got.column("name").to_pylist())) == [
        (i, "upd" if i >= 15 else f"n{i}") for i in range(20)]
    assert _state(metastore, t) == sorted(before_t + [(8, "a")])
    assert metastore.our_open_txns() == []
