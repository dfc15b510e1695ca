"""Metastore layer pieces that need no server: URIs, names, filters, snapshot derivation, locks."""
from __future__ import annotations

import pytest

from spark_hive_acid.acid.snapshot import LONG_MAX, ValidIdList
from spark_hive_acid.exceptions import (
    HiveAcidError,
    InvalidOptionError,
    MetastoreError,
    NotAnAcidTableError,
)
from spark_hive_acid.metastore import (
    MetastoreNotConfiguredError,
    OpenTxnsInfo,
    Operation,
    PartitionFilter,
    TableInfo,
    TxnStatus,
    WriteConflictError,
    lock_specs,
    make_partition_name,
    parse_hive_time,
    parse_partition_name,
    parse_table_name,
    resolve_metastore_uris,
    txn_list_from_open_txns,
    write_ids_from_table_valid_write_ids,
    write_ids_from_txn_list,
)
from spark_hive_acid.metastore._thrift import AddDynamicPartitionsV2, decode_java_bitset
from spark_hive_acid.metastore.client import check_acid

# -- URI resolution -------------------------------------------------------------------------------


def _hive_site(tmp_path, uris):
    (tmp_path / "hive-site.xml").write_text(
        "<?xml version='1.0'?><configuration><property><name>hive.metastore.uris</name>"
        f"<value>{uris}</value></property></configuration>")
    return str(tmp_path)


def test_uri_option_wins_over_spark_conf_and_hive_site(tmp_path, monkeypatch):
    monkeypatch.setenv("HIVE_CONF_DIR", _hive_site(tmp_path, "thrift://site:9083"))
    conf = {"spark.hadoop.hive.metastore.uris": "thrift://conf:9083"}
    assert resolve_metastore_uris({"metastoreuri": "thrift://opt:1234"}, conf) == [
        "thrift://opt:1234"]
    assert resolve_metastore_uris({}, conf) == ["thrift://conf:9083"]
    assert resolve_metastore_uris({}, None) == ["thrift://site:9083"]


def test_uri_lists_are_split_and_normalised():
    got = resolve_metastore_uris({"metastoreUri": " thrift://a:1 , thrift://b ,"})
    assert got == ["thrift://a:1", "thrift://b:9083"]
    assert resolve_metastore_uris({}, {"spark.hive.metastore.uris": "thrift://h:2"}) == [
        "thrift://h:2"]


def test_no_metastore_configured_says_where_to_configure(monkeypatch):
    monkeypatch.delenv("HIVE_CONF_DIR", raising=False)
    with pytest.raises(MetastoreNotConfiguredError) as ei:
        resolve_metastore_uris({}, {})
    assert "metastoreUri" in str(ei.value) and "spark.hadoop.hive.metastore.uris" in str(ei.value)
    assert isinstance(ei.value, MetastoreError) and isinstance(ei.value, InvalidOptionError)


def test_no_metastore_reaching_a_worker_says_what_works(monkeypatch):
    """A Spark worker never sees the Spark conf: telling its user to set it (already set) does
    not help; the message names what reaches the read (issue 14 §6)."""
    monkeypatch.delenv("HIVE_CONF_DIR", raising=False)
    with pytest.raises(MetastoreNotConfiguredError) as ei:
        resolve_metastore_uris({}, None)
    msg = str(ei.value)
    assert "option metastoreUri" in msg and "hive-site.xml" in msg
    assert "HiveAcidTable.forName" in msg and "or the Spark conf" not in msg


@pytest.mark.parametrize("bad", ["http://h:1", "thrift://", "h:9083", "thrift://h:notaport"])
def test_malformed_uri(bad):
    with pytest.raises(InvalidOptionError):
        resolve_metastore_uris({"metastoreUri": bad})


@pytest.mark.parametrize("text,expected", [
    ("db.t", ("db", "t")), ("T", ("default", "t")), ("`Db`.`T`", ("db", "t"))])
def test_parse_table_name(text, expected):
    assert parse_table_name(text) == expected


@pytest.mark.parametrize("bad", ["", "a.b.c", ".t", "db."])
def test_parse_table_name_rejects(bad):
    with pytest.raises(InvalidOptionError):
        parse_table_name(bad)


def test_parse_hive_time():
    assert parse_hive_time("300") == 300.0
    assert parse_hive_time("300s") == 300.0
    assert parse_hive_time("5m") == 300.0
    assert parse_hive_time("1500ms") == 1.5
    with pytest.raises(ValueError):
        parse_hive_time("soon")


# -- partition names and filters ----------------------------------------------------------------


def test_partition_names_escape_like_hive():
    assert make_partition_name(["ds", "hr"], ["2024-01-01", "1"]) == "ds=2024-01-01/hr=1"
    assert make_partition_name(["p"], ["a/b:c=d"]) == "p=a%2Fb%3Ac%3Dd"
    assert make_partition_name(["p"], [None]) == "p=__HIVE_DEFAULT_PARTITION__"
    assert parse_partition_name("p=a%2Fb%3Ac%3Dd/q=1") == {"p": "a/b:c=d", "q": "1"}


def test_partition_filter_renders_hive_filter_language():
    types = {"ds": "string", "hr": "int"}
    f = PartitionFilter.of(("ds", "=", "2024-01-01"), ("hr", ">=", 2), ("hr", "in", [3, 4]))
    assert f.to_hive(types) == "ds = '2024-01-01' and hr >= 2 and (hr = 3 or hr = 4)"
    assert PartitionFilter.of(("ds", "!=", "it's")).to_hive(types) == 'ds <> "it\'s"'
    assert PartitionFilter.of(("ds", "=", "'\"")).to_hive(types) is None  # not expressible


def test_partition_filter_client_side_uses_key_types():
    types = {"ds": "string", "hr": "int"}
    f = PartitionFilter.of(("hr", ">", 9))
    assert f.matches({"ds": "x", "hr": "10"}, types)  # 10 > 9 as ints, not as strings
    assert not f.matches({"ds": "x", "hr": "__HIVE_DEFAULT_PARTITION__"}, types)
    assert PartitionFilter.equals({"ds": "x"}).matches({"ds": "x", "hr": "1"}, types)
    with pytest.raises(InvalidOptionError):
        PartitionFilter.of(("hr", "like", "1%"))


# -- snapshots (hand-written server answers -> hand-written expected lists) ------------------------


def _txns(hwm, **states):
    return OpenTxnsInfo(hwm, tuple(TxnStatus(int(k[1:]), v) for k, v in states.items()))


def test_txn_list_from_open_and_aborted_txns():
    info = _txns(12, t5="OPEN", t7="ABORTED", t9="OPEN", t3="ABORTED")
    txns = txn_list_from_open_txns(info)
    assert txns.to_string() == "12:5:5,9:3,7"
    assert txns == ValidIdList.of(12, [5, 9], [3, 7])
    assert write_ids_from_txn_list(txns, "DB.T").to_string() == "db.t:12:5:5,9:3,7"


def test_txn_list_inside_a_transaction_sees_itself_and_nothing_later():
    info = _txns(12, t5="OPEN", t7="ABORTED", t9="OPEN", t11="OPEN")
    txns = txn_list_from_open_txns(info, current_txn=9)
    assert txns.to_string() == "9:5:5:7"  # 9 valid (own), 11 above the high watermark
    assert txns.is_valid(9) and not txns.is_valid(11) and not txns.is_valid(5)


def test_nothing_open():
    txns = txn_list_from_open_txns(_txns(4))
    assert txns.to_string() == f"4:{LONG_MAX}::"


class _TVW:  # the shape of Thrift TableValidWriteIds (Hive 3)
    def __init__(self, name, hwm, invalid, min_open, bits):
        self.fullTableName, self.writeIdHighWaterMark = name, hwm
        self.invalidWriteIds, self.minOpenWriteId, self.abortedBits = invalid, min_open, bits


def test_hive3_write_ids_use_the_aborted_bitset():
    # invalid [3, 5, 8]; bits 0 and 2 set (0b101) -> 3 and 8 aborted, 5 open
    w = write_ids_from_table_valid_write_ids(_TVW("db.t", 10, [3, 5, 8], 5, b"\x05"))
    assert w.to_string() == "db.t:10:5:5:3,8"
    w = write_ids_from_table_valid_write_ids(_TVW("db.t", 10, [], None, b""))
    assert w.to_string() == f"db.t:10:{LONG_MAX}::"


def test_java_bitset_decoding():
    assert decode_java_bitset(b"\x01\x80") == {0, 15}
    assert decode_java_bitset(None) == set()


# -- locks per operation --------------------------------------------------------------------------


def _table(partitioned=False):
    return TableInfo("db", "t", "/w/t", (("id", "int"),),
                     (("ds", "string"),) if partitioned else (), ("id",), 2,
                     {"transactional": "true"})


@pytest.mark.parametrize("op,lock,optype", [
    ("read", "SHARED_READ", "SELECT"), ("insert", "SHARED_READ", "INSERT"),
    ("insert overwrite", "EXCLUSIVE", "UPDATE"), ("update", "SHARED_WRITE", "UPDATE"),
    ("delete", "SHARED_WRITE", "DELETE"), ("merge", "SHARED_WRITE", "UPDATE")])
def test_lock_per_operation(op, lock, optype):
    (spec,) = lock_specs(op, _table())
    assert (spec.lock_type, spec.operation_type, spec.partition) == (lock, optype, None)
    assert not spec.dynamic_partition_write
    thrift = spec.to_thrift()
    assert thrift.operationType != 5 and thrift.isTransactional  # never UNSET (hive.in.test)


def test_partitioned_writes_lock_partitions_or_are_dynamic():
    specs = lock_specs(Operation.INSERT, _table(True), ["ds=a", "ds=b"])
    assert [s.partition for s in specs] == ["ds=a", "ds=b"]
    (dyn,) = lock_specs(Operation.UPDATE, _table(True))
    assert dyn.dynamic_partition_write and dyn.partition is None
    (read,) = lock_specs(Operation.READ, _table(True))
    assert not read.dynamic_partition_write
    merge = lock_specs("merge", _table(), read_tables=[TableInfo("db", "src", "", ())])
    assert [(s.table, s.lock_type) for s in merge] == [("t", "SHARED_WRITE"),
                                                       ("src", "SHARED_READ")]


def test_unknown_operation():
    with pytest.raises(ValueError):
        Operation("upsert")


# -- wire shim and errors -------------------------------------------------------------------------


def test_hive2_add_dynamic_partitions_layout():
    from thrift.protocol import TBinaryProtocol
    from thrift.transport import TTransport

    buf = TTransport.TMemoryBuffer()
    AddDynamicPartitionsV2(7, "db", "t", ["p=1", "p=2"], 2).write(
        TBinaryProtocol.TBinaryProtocol(buf))
    proto = TBinaryProtocol.TBinaryProtocol(TTransport.TMemoryBuffer(buf.getvalue()))
    proto.readStructBegin()
    fields = []
    while True:
        _, ftype, fid = proto.readFieldBegin()
        if ftype == 0:
            break
        if fid == 4:
            _, n = proto.readListBegin()
            value = [proto.readString() for _ in range(n)]
            proto.readListEnd()
        else:
            value = {10: proto.readI64, 11: proto.readString, 8: proto.readI32}[ftype]()
        fields.append((fid, value))
    assert fields == [(1, 7), (2, "db"), (3, "t"), (4, ["p=1", "p=2"]), (5, 2)]


def test_table_info_flags_and_acid_check():
    t = _table()
    assert t.is_full_acid and not t.is_insert_only and t.bucketing_version == 1
    mm = TableInfo("db", "mm", "/w", (), parameters={
        "transactional": "true", "transactional_properties": "insert_only",
        "bucketing_version": "2"})
    assert mm.is_insert_only and not mm.is_full_acid and mm.bucketing_version == 2
    plain = TableInfo("db", "plain", "/w", ())
    with pytest.raises(NotAnAcidTableError, match=r"spark\.read\.table\('db\.plain'\)"):
        check_acid(plain)
    assert issubclass(WriteConflictError, HiveAcidError)
