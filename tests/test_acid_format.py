"""Unit tests of the format logic without Spark: names, snapshots, BucketCodec."""
import numpy as np
import pytest

from spark_hive_acid.acid import bucket_codec, names
from spark_hive_acid.acid.snapshot import LONG_MAX, RangeResponse, ValidIdList, parse_txns, parse_write_ids
from spark_hive_acid.exceptions import InvalidSnapshotError


class TestNames:
    def test_base_with_and_without_visibility(self):
        b = names.parse_acid_dir("base_0000010")
        assert (b.kind, b.write_id, b.visibility_txn) == ("base", 10, 0)
        b = names.parse_acid_dir("base_0000005_v0000120")
        assert (b.write_id, b.visibility_txn) == (5, 120)

    def test_deltas(self):
        d = names.parse_acid_dir("delta_0000011_0000011_0001")
        assert (d.kind, d.min_write_id, d.max_write_id, d.statement_id) == ("delta", 11, 11, 1)
        d = names.parse_acid_dir("delete_delta_0000006_0000008_v0000130")
        assert (d.kind, d.min_write_id, d.max_write_id, d.statement_id, d.visibility_txn) == \
            ("delete_delta", 6, 8, -1, 130)
        # widths are minimums: wider numbers parse too
        d = names.parse_acid_dir("delta_12345678_12345679_12345")
        assert (d.min_write_id, d.max_write_id, d.statement_id) == (12345678, 12345679, 12345)

    def test_not_acid_dirs(self):
        for n in ("base_x", "delta_1", "deltas_1_1", "k=v", "HIVE_UNION_SUBDIR_1", "delta_1_2_3_4"):
            assert names.parse_acid_dir(n) is None, n

    def test_bucket_and_original_files(self):
        assert names.parse_bucket_file("bucket_00003") == 3
        assert names.parse_bucket_file("bucket_00000_3") == 0  # direct-insert attempt suffix
        assert names.parse_bucket_file("bucket_00000_flush_length") is None
        assert names.parse_original_file("000003_0") == 3
        assert names.parse_original_file("000001_0_copy_12") == 1
        assert names.parse_original_file("part-0000.orc") is None

    def test_hidden(self):
        for n in ("_tmp.x", ".hive-staging_1", "_SUCCESS", ".bucket_00000.crc"):
            assert names.is_hidden(n)
        assert not names.is_hidden("delta_1_1_0000")

    def test_formatting_round_trips(self):
        assert names.delta_dir_name(7, 7, 0) == "delta_0000007_0000007_0000"
        assert names.delta_dir_name(6, 8, visibility_txn=130, delete=True) == \
            "delete_delta_0000006_0000008_v0000130"
        assert names.base_dir_name(5, 120) == "base_0000005_v0000120"
        assert names.base_dir_name(5) == "base_0000005"
        assert names.bucket_file_name(1) == "bucket_00001"

    def test_sort_order_of_candidates(self):
        dirs = [names.parse_acid_dir(n, "/t/" + n) for n in (
            "delta_0000011_0000011_0001", "delete_delta_0000011_0000011_0001",
            "delta_0000011_0000011_0000", "delta_0000006_0000008", "delta_0000006_0000006_0000")]
        ordered = [d.name for d in sorted(dirs, key=names.ParsedDir.sort_key)]
        assert ordered == ["delta_0000006_0000008", "delta_0000006_0000006_0000",
                           "delta_0000011_0000011_0000", "delete_delta_0000011_0000011_0001",
                           "delta_0000011_0000011_0001"]


class TestSnapshot:
    def test_examples_from_spec(self):
        w = parse_write_ids("default.orders:42:9223372036854775807::")
        assert w.table_name == "default.orders" and w.high_watermark == 42
        assert w.is_valid(42) and not w.is_valid(43) and w.min_open_or_none is None
        w = parse_write_ids("default.orders:42:40:40:37")
        assert not w.is_valid(40) and not w.is_valid(37) and w.is_valid(39)
        assert w.is_aborted(37) and not w.is_aborted(40) and w.is_open(40)
        assert w.min_open == 40

    def test_txn_wide_list_picks_the_table(self):
        raw = "1001$sales.t:100:95:95,99:12,50$default.orders:42:9223372036854775807::"
        w = parse_write_ids(raw, table_name="sales.t")
        assert w.exceptions == (12, 50, 95, 99) and w.aborted == {12, 50}
        with pytest.raises(InvalidSnapshotError, match="2 tables"):
            parse_write_ids(raw)

    def test_txn_lists_hive3_and_hive2(self):
        t = parse_txns("1000:990:990,995:800")
        assert t.exceptions == (800, 990, 995) and t.is_aborted(800) and t.is_open(995)
        t2 = parse_txns("1000:990:990:995:800")  # Hive 2: one exception per field
        assert t2.exceptions == (800, 990, 995) and not t2.is_valid(800)

    def test_empty_means_everything_valid(self):
        assert parse_write_ids("").everything_valid and parse_txns(None).everything_valid

    @pytest.mark.parametrize("raw", ["t:abc:1::", "db.t:5", "db.t:5:x::", "db.t:5:7:1,a:", "db.t:-1:5::"])
    def test_malformed_write_ids_name_the_option(self, raw):
        with pytest.raises(InvalidSnapshotError, match="validWriteIds"):
            parse_write_ids(raw)

    def test_malformed_txns_name_the_option(self):
        with pytest.raises(InvalidSnapshotError, match="validTxns"):
            parse_txns("db.t:5:5::")

    def test_range_responses(self):
        w = parse_write_ids("db.t:13:12:12:13")
        assert w.range_valid(14, 20) is RangeResponse.NONE  # above the HWM
        assert w.range_valid(1, 11) is RangeResponse.ALL
        assert w.range_valid(11, 12) is RangeResponse.SOME
        assert w.range_valid(12, 12) is RangeResponse.NONE
        assert w.range_aborted(13, 13) is RangeResponse.ALL
        assert w.range_aborted(12, 13) is RangeResponse.SOME
        assert w.range_aborted(1, 11) is RangeResponse.NONE

    def test_valid_base_and_vector_mask(self):
        w = parse_write_ids("db.t:13:12:12:13")
        assert w.is_valid_base(11) and not w.is_valid_base(12)
        mask = w.valid_mask(np.array([1, 11, 12, 13, 14], dtype=np.int64))
        assert mask.tolist() == [True, True, False, False, False]

    def test_to_string_round_trip(self):
        w = ValidIdList.of(42, open_ids=[40], aborted_ids=[37], table_name="db.t")
        assert w.to_string() == "db.t:42:40:40:37"
        assert parse_write_ids(w.to_string()) == w
        assert ValidIdList.all_valid().to_string() == f"{LONG_MAX}:{LONG_MAX}::"


class TestBucketCodec:
    @pytest.mark.parametrize("n,s,bp", [(0, 0, 536870912), (1, 0, 536936448), (3, 2, 537067522),
                                        (7, 1, 537329665), (4095, 4095, 805244927)])
    def test_spec_table(self, n, s, bp):
        assert bucket_codec.encode(n, s) == bp
        assert bucket_codec.decode_writer_id(bp) == n
        assert bucket_codec.decode_statement_id(bp) == s

    def test_v0_is_the_plain_bucket(self):
        assert bucket_codec.decode_writer_id(3) == 3 and bucket_codec.version_of(3) == 0
        assert bucket_codec.decode_writer_ids(np.array([3, 537067522], np.int32)).tolist() == [3, 3]

    def test_statement_minus_one_encodes_as_zero(self):
        assert bucket_codec.encode(1, -1) == 536936448

    def test_out_of_range(self):
        with pytest.raises(ValueError):
            bucket_codec.encode(4096, 0)
