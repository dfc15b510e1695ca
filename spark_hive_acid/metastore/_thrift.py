"""Access to the generated Hive Metastore Thrift bindings, plus the few Hive 2.x wire shims.

The bindings come from the PyPI package ``hive-metastore-client`` (Hive 3.x IDL, module
``thrift_files.libraries.thrift_hive_metastore_client``). They are imported lazily so that the rest
of the connector works without them.

Hive 2.x and 3.x differ on the wire for one struct we send: ``AddDynamicPartitions`` gained a
``writeid`` field with id 2 in Hive 3, shifting the other ids (checked against the field table of
``hive-metastore-2.3.10.jar``). :class:`AddDynamicPartitionsV2` writes the Hive 2 layout.
"""
from __future__ import annotations

from types import ModuleType
from typing import Any, Sequence

from ..exceptions import MetastoreError

_INSTALL_HINT = ("The Hive Metastore client needs the packages 'hive-metastore-client' and "
                 "'thrift': pip install hive-metastore-client thrift")


def bindings() -> tuple[ModuleType, ModuleType]:
    """``(ThriftHiveMetastore, ttypes)`` from hive-metastore-client, or a clear error."""
    try:
        from thrift_files.libraries.thrift_hive_metastore_client import (
            ThriftHiveMetastore,
            ttypes,
        )
    except ImportError as e:
        raise MetastoreError(f"{_INSTALL_HINT} ({e})") from e
    return ThriftHiveMetastore, ttypes


def thrift_module() -> Any:
    """The ``thrift`` package modules used by the client (transport, protocol, errors)."""
    try:
        from thrift import Thrift
        from thrift.protocol import TBinaryProtocol
        from thrift.transport import TSocket, TTransport
    except ImportError as e:
        raise MetastoreError(f"{_INSTALL_HINT} ({e})") from e
    return Thrift, TBinaryProtocol, TSocket, TTransport


class AddDynamicPartitionsV2:
    """``AddDynamicPartitions`` in the Hive 2.x field layout (no write id).

    Field ids: txnid 1 (i64), dbname 2, tablename 3 (strings), partitionnames 4 (list<string>),
    operationType 5 (i32). Only :meth:`write` is needed: the call returns void.
    """

    def __init__(self, txnid: int, dbname: str, tablename: str, partitionnames: Sequence[str],
                 operation_type: int) -> None:
        self.txnid = txnid
        self.dbname = dbname
        self.tablename = tablename
        self.partitionnames = list(partitionnames)
        self.operation_type = operation_type

    def validate(self) -> None:
        """Thrift calls this hook on some code paths; every field is always set here."""

    def write(self, oprot: Any) -> None:
        from thrift.Thrift import TType

        oprot.writeStructBegin("AddDynamicPartitions")
        oprot.writeFieldBegin("txnid", TType.I64, 1)
        oprot.writeI64(self.txnid)
        oprot.writeFieldEnd()
        oprot.writeFieldBegin("dbname", TType.STRING, 2)
        oprot.writeString(self.dbname)
        oprot.writeFieldEnd()
        oprot.writeFieldBegin("tablename", TType.STRING, 3)
        oprot.writeString(self.tablename)
        oprot.writeFieldEnd()
        oprot.writeFieldBegin("partitionnames", TType.LIST, 4)
        oprot.writeListBegin(TType.STRING, len(self.partitionnames))
        for name in self.partitionnames:
            oprot.writeString(name)
        oprot.writeListEnd()
        oprot.writeFieldEnd()
        oprot.writeFieldBegin("operationType", TType.I32, 5)
        oprot.writeI32(self.operation_type)
        oprot.writeFieldEnd()
        oprot.writeFieldStop()
        oprot.writeStructEnd()


def decode_java_bitset(data: bytes | str | None) -> set[int]:
    """Indexes of the bits set in a ``java.util.BitSet#toByteArray`` value (little-endian bytes).

    Hive 3's ``TableValidWriteIds.abortedBits`` marks which ``invalidWriteIds`` are aborted.
    """
    if not data:
        return set()
    raw = data.encode("latin-1") if isinstance(data, str) else bytes(data)
    return {i * 8 + b for i, byte in enumerate(raw) for b in range(8) if byte >> b & 1}
