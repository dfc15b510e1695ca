"""Thrift structs and calls of Hive 4 that the Hive 3.x bindings lack, written field by field.

Field ids come from the generated classes of ``hive-exec-4.1.0.jar`` (``metaDataMap`` of
``CreateTableRequest``, ``GetTableRequest``, ``ThriftHiveMetastore$create_table_req_args`` /
``_result``); a Hive 3 server never receives them (the client asks only a Hive 4 server).
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

#: (field id, Thrift type name, value); None values are left out. Types: "string", "i32", "i64",
#: "bool", "struct" (an object with ``write(oprot)``), "list<string>".
Field = tuple[int, str, Any]


class RawStruct:
    """A request struct written from a field list (duck-types a generated Thrift struct)."""

    def __init__(self, name: str, fields: Sequence[Field]) -> None:
        self.name = name
        self.fields = [f for f in fields if f[2] is not None]

    def validate(self) -> None:
        """Thrift calls this hook on some code paths; the fields are checked when built."""

    def write(self, oprot: Any) -> None:
        from thrift.Thrift import TType  # type: ignore

        oprot.writeStructBegin(self.name)
        for fid, kind, value in self.fields:
            if kind == "list<string>":
                oprot.writeFieldBegin(f"f{fid}", TType.LIST, fid)
                oprot.writeListBegin(TType.STRING, len(value))
                for item in value:
                    oprot.writeString(item)
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
        oprot.writeFieldStop()
        oprot.writeStructEnd()


def void_call(method: str, args: RawStruct,
              exceptions: Mapping[int, type]) -> Callable[[Any], None]:
    """A call of a ``void`` method the bindings do not have: ``fn(client)`` sends ``args`` as
    ``<method>_args`` and raises the declared exception (result field id -> class) if any."""

    def call(client: Any) -> None:
        from thrift.Thrift import TApplicationException, TMessageType, TType  # type: ignore

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
