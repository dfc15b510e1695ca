"""Strict parsing of the ``validWriteIds`` / ``validTxns`` snapshot strings (issue 13, item 11).

Python's ``int()`` takes ``1_0``, full-width digits, signs and surrounding spaces, and has no upper
bound; the parser used to accept all of them, plus negative ids and a minOpen that no Hive writer
can produce, and read a snapshot nobody meant. Every number must be ASCII digits within Java's long
range, and minOpen must be one Hive writes: Long.MAX_VALUE, one of the listed ids, or above the
high watermark (``GetValidWriteIdsForTableFunction`` keeps its minOpen when it cuts the list down to
the lowest invalid id). storage-api's own ``ValidReaderWriteIdList`` is the oracle for valid
strings: it reads them exactly as we do.
"""
from __future__ import annotations

import random
import re

import pytest

from spark_hive_acid.acid.snapshot import LONG_MAX, ValidIdList, parse_txns, parse_write_ids
from spark_hive_acid.exceptions import InvalidSnapshotError
from test_read_errors import naming

FULL_WIDTH = str.maketrans("0123456789", "\uff10\uff11\uff12\uff13\uff14\uff15\uff16\uff17\uff18\uff19")


# --- the inputs, one by one -----------------------------------------------------------------
@pytest.mark.parametrize("raw, field", [
    (f"db.t:{2 ** 63}:{LONG_MAX}::", "high watermark"),
    (f"db.t:10:{2 ** 64 + 5}:5:", "minOpen"),
    (f"db.t:10:5:5,{2 ** 63}:", "open id"),
    ("db.t:10:9223372036854775807:1_0:", "open id"),
    ("db.t:1_0:9223372036854775807::", "high watermark"),
    ("db.t:\uff11\uff10:9223372036854775807::", "high watermark"),
    ("db.t:10:9223372036854775807::\uff13", "aborted id"),
    ("db.t:10:-1::", "minOpen"),
    ("db.t:10:5:5,-5:", "open id"),
    ("db.t:10:9223372036854775807::-2", "aborted id"),
    ("db.t:+10:9223372036854775807::", "high watermark"),
    ("db.t: 10:9223372036854775807::", "high watermark"),
    ("db.t:10:5:5, 6:", "open id"),
    ("db.t:10:5:5,,6:", "open id"),
    ("db.t:10:5:5,:", "open id"),
    ("db.t:10:5:5:0x1", "aborted id"),
    ("db.t:10:9223372036854775807:1:2:3e0", "exception id"),
    ("db.t:10:3::", "minOpen"),
    ("db.t:10:4:5,6:", "minOpen"),
    ("db.t:10:5:5:5", "listed twice"),
    ("db.t:10:5:5,5:", "listed twice"),
    ("-7$db.t:10:9223372036854775807::", "transaction id"),
])
def test_lenient_write_ids_are_refused(raw, field):
    with pytest.raises(InvalidSnapshotError, match=naming("validWriteIds", raw, field)):
        parse_write_ids(raw, "validWriteIds")


@pytest.mark.parametrize("raw, field", [
    ("10:-1::", "minOpen"),
    ("-10:9223372036854775807::", "high watermark"),
    (f"10:{2 ** 63}::", "minOpen"),
    ("10:9223372036854775807:1_0:", "open id"),
    ("\uff11\uff10:9223372036854775807::", "high watermark"),
    ("10:9223372036854775807::-3", "aborted id"),
    ("10:9223372036854775807:3:4:+5", "exception id"),
    ("10:2:3:", "minOpen"),
])
def test_lenient_txns_are_refused(raw, field):
    with pytest.raises(InvalidSnapshotError, match=naming("validTxns", raw, field)):
        parse_txns(raw, "validTxns")


@pytest.mark.parametrize("raw, hwm, min_open, exceptions, aborted", [
    ("db.t:0:9223372036854775807::", 0, LONG_MAX, (), set()),
    (f"db.t:{LONG_MAX}:{LONG_MAX}::", LONG_MAX, LONG_MAX, (), set()),
    ("db.t:5:7::5", 5, 7, (5,), {5}),  # metastore: lowest invalid id kept, minOpen above it
    ("db.t:10:4:3:4", 10, 4, (3, 4), {4}),  # Hive 2 txn list read as Hive 3 (minOpen aborted)
    ("db.t:3:9223372036854775807:3", 3, LONG_MAX, (3,), set()),  # Hive 2: '3' open or aborted
    ("db.t:10:9223372036854775807:1:2:3", 10, LONG_MAX, (1, 2, 3), set()),  # Hive 2 form
    ("10:9223372036854775807:0:", 10, LONG_MAX, (0,), set()),  # no table name
    ("1001$db.t:10:9223372036854775807::", 10, LONG_MAX, (), set()),
])
def test_what_hive_writes_is_accepted(raw, hwm, min_open, exceptions, aborted):
    w = parse_write_ids(raw)
    assert (w.high_watermark, w.min_open, w.exceptions, set(w.aborted)) == \
        (hwm, min_open, exceptions, aborted)


# --- randomized: valid strings round-trip, mutated ones are refused ---------------------------------
def random_snapshot(rng: random.Random, table: str = "") -> ValidIdList:
    hwm = rng.choice([0, 1, 7, 100, 10 ** 6, 2 ** 40, LONG_MAX - 1, LONG_MAX])
    ids = sorted(rng.sample(range(0, min(hwm, 10 ** 6) + 1), k=min(hwm + 1, rng.choice([0, 1, 2, 5]))))
    if hwm > 10 ** 6 and ids and rng.random() < 0.5:
        ids[-1] = hwm  # a big id too
    aborted = [i for i in ids if rng.random() < 0.4]
    open_ids = [i for i in ids if i not in aborted]
    return ValidIdList.of(hwm, open_ids, aborted, table_name=table)


def _numbers(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"[0-9]+", text)]


def mutate(rng: random.Random, text: str, first: int) -> str | None:
    """One kind of damage to a valid snapshot string (numbers at or after ``first``: the table
    name is left alone); None when this string offers the chosen kind nothing to damage."""
    spans = [s for s in _numbers(text) if s[0] >= first]
    a, b = rng.choice(spans)
    number = text[a:b]
    kind = rng.choice(["underscore", "full_width", "sign", "overflow", "space", "junk", "empty_entry",
                       "min_open", "duplicate"])
    if kind == "underscore":
        cut = rng.randint(1, len(number) - 1) if len(number) > 1 else 1
        new = number[:cut] + "_" + number[cut:] + ("0" if len(number) == 1 else "")
    elif kind == "full_width":
        i = rng.randrange(len(number))
        new = number[:i] + number[i].translate(FULL_WIDTH) + number[i + 1:]
    elif kind == "sign":
        new = rng.choice("+-") + number
    elif kind == "overflow":
        new = str(int(number) + 2 ** 63)
    elif kind == "space":  # inside the string: surrounding whitespace is stripped, harmlessly
        new = rng.choice([w for w, ok in ((" " + number, a > 0), (number + " ", b < len(text)),
                                          (number[:1] + " " + number[1:], len(number) > 1)) if ok])
    elif kind == "junk":
        new = rng.choice([number + "x", "0x" + number, number + ".0", number + "e0"])
    elif kind == "empty_entry":
        fields = text[first:].split(":")
        lists = [i for i in (2, 3) if i < len(fields) and fields[i]]
        if not lists:
            return None
        i = rng.choice(lists)
        fields[i] = rng.choice(["," + fields[i], fields[i] + ",", fields[i].replace(",", ",,", 1)
                                if "," in fields[i] else fields[i] + ","])
        return text[:first] + ":".join(fields)
    elif kind == "min_open":
        fields = text[first:].split(":")
        hwm = int(fields[0])
        listed = {int(x) for f in fields[2:] for x in f.split(",") if x}
        free = [w for w in (0, 1, 2, 3, hwm // 2, hwm) if w <= hwm and w < LONG_MAX and w not in listed]
        if not free:
            return None
        fields[1] = str(rng.choice(free))
        return text[:first] + ":".join(fields)
    else:  # duplicate: an open id also aborted, or listed twice
        fields = text[first:].split(":")
        if len(fields) < 4 or not fields[2]:
            return None
        dup = fields[2].split(",")[0]
        fields[3] = ",".join(x for x in (fields[3], dup) if x)
        return text[:first] + ":".join(fields)
    return text[:a] + new + text[b:]


@pytest.mark.parametrize("option", ["validWriteIds", "validTxns"])
def test_random_snapshots_round_trip_and_mutations_are_refused(option):
    rng = random.Random(1311)
    parse = parse_write_ids if option == "validWriteIds" else parse_txns
    refused = 0
    for _ in range(600):
        table = rng.choice(["db.t", "default.orders_2", ""]) if option == "validWriteIds" else ""
        snap = random_snapshot(rng, table)
        text = snap.to_string()
        assert parse(text, option) == snap, text
        assert parse(text, option).to_string() == text
        bad = mutate(rng, text, len(table) + 1 if table else 0)
        if bad is None or bad == text:
            continue
        with pytest.raises(InvalidSnapshotError, match=naming(option, bad)):
            parse(bad, option)
        refused += 1
    assert refused > 400


@pytest.mark.hive
def test_valid_strings_read_as_storage_api_reads_them(hive_ref):
    """Randomized differential: storage-api's ValidReaderWriteIdList and our parser agree on
    every valid string (so strictness refuses nothing Hive writes)."""
    rng = random.Random(1312)
    texts = [random_snapshot(rng, "db.t").to_string() for _ in range(150)]
    texts += ["db.t:5:7::5", "db.t:10:4:3:4", "db.t:0:9223372036854775807::"]
    for text in texts:
        java, ours = hive_ref.parse_write_id_list(text), parse_write_ids(text)
        assert java["table"] == ours.table_name
        assert java["hwm"] == ours.high_watermark, text
        assert (java["min_open"] if java["min_open"] is not None else LONG_MAX) == ours.min_open, text
        assert java["invalid"] == list(ours.exceptions), text
        assert java["aborted"] == sorted(ours.aborted), text


@pytest.mark.hive
@pytest.mark.parametrize("text", ["db.t:\uff11\uff10:9223372036854775807::", "db.t:+10:9223372036854775807::",
                                  "db.t:10:-1::", "db.t:10:5:5,-5:", "db.t:10:3::", "db.t:10:5:5,:"])
def test_what_java_accepts_and_we_refuse(hive_ref, text):
    """Recorded facts: Long.parseLong takes non-ASCII digits and a sign, and readFromString checks
    neither sign nor minOpen; we refuse these (no Hive writes them)."""
    hive_ref.parse_write_id_list(text)  # no error
    with pytest.raises(InvalidSnapshotError):
        parse_write_ids(text)
