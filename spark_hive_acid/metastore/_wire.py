"""Thrift structs and calls of Hive 4 that the Hive 3.x bindings lack, written field by field.

Field ids come from the generated classes of ``hive-exec-4.1.0.jar`` (``metaDataMap`` of
``CreateTableRequest``, ``GetTableRequest``, ``ThriftHiveMetastore$create_table_req_args`` /
``_result``); a Hive 3 server never receives them (the client asks only a Hive 4 server).
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

#: (field id, Thrift type name, value); None values are left out. Types: "string", "i32", "i64",
#: "bool", "struct" (an object with ``write(oprot)``), "list<string>", "list<struct>".
Field = tuple[int, str, Any]


class RawStruct:
    """A request struct written from a field list (duck-types a generated Thrift struct)."""

    def __init__(self, name: str, fields: Sequence[Field]) -> None:
        self.name = name
        self.fields = [f for f in fields if f[2] is not None]

    def validate(self) -> None:
        """Thrift calls this hook on some code paths; the fields are checked when built."""

    def write(self, oprot: Any) -> None:
        oprot.writeStructBegin(self.name)
        self.write_fields(oprot)
        oprot.writeFieldStop()
        oprot.writeStructEnd()

    def write_fields(self, oprot: Any) -> None:
        """The fields alone (no struct begin, stop or end)."""
        from thrift.Thrift import TType

        for fid, kind, value in self.fields:
            if kind in ("list<string>", "list<struct>"):
                oprot.writeFieldBegin(f"f{fid}", TType.LIST, fid)
                strings = kind == "list<string>"
                oprot.writeListBegin(TType.STRING if strings else TType.STRUCT, len(value))
                for item in value:
                    oprot.writeString(item) if strings else item.write(oprot)
                oprot.writeListEnd()
            else:
                ttype = {"string": TType.STRING, "i32": TType.I32, "i64": TType.I64,
                         "bool": TType.BOOL, "struct": TType.STRUCT}[kind]
                oprot.writeFieldBegin(f"f{fid}", ttype, fid)
                if kind == "struct":
                    value.write(oprot)
                else:
                    getattr(oprot, {"string": "writeString", "i32": "writeI32",
                                    "i64": "writeI64", "bool": "writeBool"}[kind])(value)
            oprot.writeFieldEnd()


class WithFields:
    """A generated struct (e.g. the bindings' ``Table``) written with extra fields of a newer IDL
    (e.g. Hive 4's ``Table.writeId``, id 19) before its field stop."""

    def __init__(self, struct: Any, extra: Sequence[Field]) -> None:
        self.struct = struct
        self.extra = RawStruct("", extra)

    def validate(self) -> None:
        """Nothing to check beyond the wrapped struct's own fields."""

    def write(self, oprot: Any) -> None:
        self.struct.write(_ExtraFieldsProtocol(oprot, self.extra))


class _ExtraFieldsProtocol:
    """Delegates to ``oprot``; the field stop of the outermost struct gets the extra fields first."""

    def __init__(self, oprot: Any, extra: RawStruct) -> None:
        self._oprot = oprot
        self._extra = extra
        self._depth = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._oprot, name)

    def writeStructBegin(self, name: str) -> None:  # noqa: N802 - Thrift's protocol API
        self._depth += 1
        self._oprot.writeStructBegin(name)

    def writeStructEnd(self) -> None:  # noqa: N802
        self._depth -= 1
        self._oprot.writeStructEnd()

    def writeFieldStop(self) -> None:  # noqa: N802
        if self._depth == 1:
            self._extra.write_fields(self._oprot)
        self._oprot.writeFieldStop()


def void_call(method: str, args: RawStruct,
              exceptions: Mapping[int, type]) -> Callable[[Any], None]:
    """A call of a ``void`` method the bindings do not have: ``fn(client)`` sends ``args`` as
    ``<method>_args`` and raises the declared exception (result field id -> class) if any."""

    def call(client: Any) -> None:
        from thrift.Thrift import TApplicationException, TMessageType, TType

        oprot, iprot = client._oprot, client._iprot
        oprot.writeMessageBegin(method, TMessageType.CALL, client._seqid)
        args.write(oprot)
        oprot.writeMessageEnd()
        oprot.trans.flush()
        _, mtype, _ = iprot.readMessageBegin()
        if mtype == TMessageType.EXCEPTION:
            failure = TApplicationException()
            failure.read(iprot)
            iprot.readMessageEnd()
            raise failure
        error = None
        iprot.readStructBegin()
        while True:
            _, ftype, fid = iprot.readFieldBegin()
            if ftype == TType.STOP:
                break
            if fid in exceptions and ftype == TType.STRUCT:
                error = exceptions[fid]()
                error.read(iprot)
            else:
                iprot.skip(ftype)
            iprot.readFieldEnd()
        iprot.readStructEnd()
        iprot.readMessageEnd()
        if error is not None:
            raise error

    return call
