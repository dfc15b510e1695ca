"""Build ValidTxnList / ValidWriteIdList snapshots from metastore answers (pure functions).

docs/format.md §3.3: the txn list comes from the open and aborted transactions
(``TxnCommonUtils.createValidReadTxnList``); on Hive 3+ the per-table write id list comes from
``get_valid_write_ids`` for that txn list; on Hive 2.x a transaction id *is* the write id, so the
table's list is the txn list with the table's name.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Optional

from ..acid.snapshot import LONG_MAX, ValidIdList
from ._thrift import decode_java_bitset
from .model import OpenTxnsInfo, TxnStatus


def txn_list_from_open_txns(info: OpenTxnsInfo, current_txn: Optional[int] = None) -> ValidIdList:
    """The ValidTxnList a reader (or the transaction ``current_txn``) sees.

    Without a current transaction the high watermark is the global one and every open or
    aborted transaction is an exception. Inside a transaction (Hive 3 rule) the high watermark
    is ``min(current_txn, global HWM)``: later transactions are invisible, the current one is
    valid (it sees its own writes).
    """
    hwm = info.high_watermark
    if current_txn is not None and current_txn > 0:
        hwm = min(current_txn, hwm)
    open_ids = [t for t in info.open_ids if t <= hwm and t != current_txn]
    aborted = [t for t in info.aborted_ids if t <= hwm and t != current_txn]
    return ValidIdList.of(hwm, open_ids, aborted)


def open_txns_from_response(resp: Any) -> OpenTxnsInfo:
    """A Thrift ``GetOpenTxnsResponse`` (Hive 3+) -> OpenTxnsInfo: ``abortedBits`` is a Java
    BitSet over the positions in ``open_txns`` marking the aborted ones (no user, host or times)."""
    ids = [int(t) for t in resp.open_txns or []]
    aborted_pos = decode_java_bitset(resp.abortedBits)
    return OpenTxnsInfo(int(resp.txn_high_water_mark), tuple(
        TxnStatus(t, "ABORTED" if i in aborted_pos else "OPEN") for i, t in enumerate(ids)))


def write_ids_from_txn_list(txns: ValidIdList, full_table_name: str) -> ValidIdList:
    """Hive 2.x: write id == txn id, so the table's write id list is the txn list itself."""
    return dataclasses.replace(txns, table_name=full_table_name.lower())


def write_ids_from_table_valid_write_ids(tvw: Any) -> ValidIdList:
    """Hive 3+: a Thrift ``TableValidWriteIds`` -> ValidIdList.

    ``abortedBits`` is a Java BitSet over the positions in ``invalidWriteIds``: a set bit marks
    an aborted write id, the others are open (``TxnCommonUtils.createValidReaderWriteIdList``).
    """
    invalid = list(tvw.invalidWriteIds or [])
    aborted_pos = decode_java_bitset(tvw.abortedBits)
    aborted = frozenset(w for i, w in enumerate(invalid) if i in aborted_pos)
    open_ids = [w for w in invalid if w not in aborted]
    min_open = tvw.minOpenWriteId if tvw.minOpenWriteId is not None else (
        min(open_ids) if open_ids else LONG_MAX)
    return ValidIdList(int(tvw.writeIdHighWaterMark), int(min_open), tuple(sorted(set(invalid))),
                       aborted, (tvw.fullTableName or "").lower())
