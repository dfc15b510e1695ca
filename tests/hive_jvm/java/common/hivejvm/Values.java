/*
 * Test-only helper: values between the JSON the Python tests send and Hive 3.1 / 4.1's objects.
 *
 * A value travels as JSON in the forms of tests/hive_ref (decimals, dates and timestamps as
 * Hive's text, binary as base64, maps as [key, value] pairs, structs as lists). Hive 3+ holds
 * dates and timestamps as org.apache.hadoop.hive.common.type.Date / Timestamp (proleptic
 * Gregorian, a wall clock), which is why this is not the Hive 2.3 helper's conversion.
 */
package hivejvm;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.hive.common.type.Date;
import org.apache.hadoop.hive.common.type.HiveChar;
import org.apache.hadoop.hive.common.type.HiveDecimal;
import org.apache.hadoop.hive.common.type.HiveVarchar;
import org.apache.hadoop.hive.common.type.Timestamp;
import org.apache.hadoop.hive.serde2.objectinspector.ListObjectInspector;
import org.apache.hadoop.hive.serde2.objectinspector.MapObjectInspector;
import org.apache.hadoop.hive.serde2.objectinspector.ObjectInspector;
import org.apache.hadoop.hive.serde2.objectinspector.PrimitiveObjectInspector;
import org.apache.hadoop.hive.serde2.objectinspector.StructField;
import org.apache.hadoop.hive.serde2.objectinspector.StructObjectInspector;
import org.apache.hadoop.hive.serde2.typeinfo.CharTypeInfo;
import org.apache.hadoop.hive.serde2.typeinfo.DecimalTypeInfo;
import org.apache.hadoop.hive.serde2.typeinfo.ListTypeInfo;
import org.apache.hadoop.hive.serde2.typeinfo.MapTypeInfo;
import org.apache.hadoop.hive.serde2.typeinfo.PrimitiveTypeInfo;
import org.apache.hadoop.hive.serde2.typeinfo.StructTypeInfo;
import org.apache.hadoop.hive.serde2.typeinfo.TypeInfo;
import org.apache.hadoop.hive.serde2.typeinfo.TypeInfoFactory;
import org.apache.hadoop.hive.serde2.typeinfo.TypeInfoUtils;
import org.apache.hadoop.hive.serde2.typeinfo.VarcharTypeInfo;

final class Values {

  private Values() {
  }

  /** A table's columns: names and Hive types, as the spec's [[name, type]...] gives them. */
  static final class Schema {
    final List<String> names = new ArrayList<>();
    final List<TypeInfo> types = new ArrayList<>();

    static Schema from(JsonNode spec) {
      Schema s = new Schema();
      for (JsonNode col : spec.get("columns")) {
        s.names.add(col.get(0).asText());
        s.types.add(TypeInfoUtils.getTypeInfoFromTypeString(col.get(1).asText()));
      }
      return s;
    }

    int size() {
      return types.size();
    }

    StructTypeInfo rowTypeInfo() {
      return (StructTypeInfo) TypeInfoFactory.getStructTypeInfo(names, types);
    }

    String columnsProperty() {
      return String.join(",", names);
    }

    String typesProperty() {
      List<String> t = new ArrayList<>();
      for (TypeInfo ti : types) {
        t.add(ti.getTypeName());
      }
      return String.join(":", t);
    }
  }

  // ------------------------------------------------------------------------------------------
  // JSON -> standard Java objects (what the standard Java object inspectors hold)
  // ------------------------------------------------------------------------------------------

  static Object toJava(JsonNode n, TypeInfo type) {
    if (n == null || n.isNull()) {
      return null;
    }
    switch (type.getCategory()) {
      case PRIMITIVE:
        return primitive(n, (PrimitiveTypeInfo) type);
      case LIST: {
        TypeInfo et = ((ListTypeInfo) type).getListElementTypeInfo();
        List<Object> out = new ArrayList<>();
        for (JsonNode e : n) {
          out.add(toJava(e, et));
        }
        return out;
      }
      case MAP: {
        MapTypeInfo mt = (MapTypeInfo) type;
        Map<Object, Object> out = new LinkedHashMap<>();
        for (JsonNode pair : n) {
          out.put(toJava(pair.get(0), mt.getMapKeyTypeInfo()),
              toJava(pair.get(1), mt.getMapValueTypeInfo()));
        }
        return out;
      }
      case STRUCT: {
        List<TypeInfo> fts = ((StructTypeInfo) type).getAllStructFieldTypeInfos();
        if (!n.isArray() || n.size() != fts.size()) {
          throw new IllegalArgumentException("struct value must be a list of " + fts.size() + ": " + n);
        }
        List<Object> out = new ArrayList<>();
        for (int i = 0; i < fts.size(); i++) {
          out.add(toJava(n.get(i), fts.get(i)));
        }
        return out;
      }
      default:
        throw new IllegalArgumentException("unsupported type " + type.getTypeName());
    }
  }

  static Object primitive(JsonNode n, PrimitiveTypeInfo type) {
    switch (type.getPrimitiveCategory()) {
      case BOOLEAN:
        return n.booleanValue();
      case BYTE:
        return (byte) n.intValue();
      case SHORT:
        return (short) n.intValue();
      case INT:
        return n.intValue();
      case LONG:
        return n.longValue();
      case FLOAT:
        return (float) n.doubleValue();
      case DOUBLE:
        return n.doubleValue();
      case STRING:
        return n.textValue();
      case VARCHAR:
        return new HiveVarchar(n.textValue(), ((VarcharTypeInfo) type).getLength());
      case CHAR:
        return new HiveChar(n.textValue(), ((CharTypeInfo) type).getLength());
      case DECIMAL: {
        DecimalTypeInfo dt = (DecimalTypeInfo) type;
        HiveDecimal d = HiveDecimal.enforcePrecisionScale(
            HiveDecimal.create(new BigDecimal(n.asText())), dt.precision(), dt.scale());
        if (d == null) {
          throw new IllegalArgumentException(n.asText() + " does not fit " + dt.getTypeName());
        }
        return d;
      }
      case DATE:
        return Date.valueOf(n.textValue());
      case TIMESTAMP:
        return Timestamp.valueOf(n.textValue());
      case BINARY:
        return Base64.getDecoder().decode(n.textValue());
      default:
        throw new IllegalArgumentException("unsupported type " + type.getTypeName());
    }
  }

  // ------------------------------------------------------------------------------------------
  // Hive objects -> JSON
  // ------------------------------------------------------------------------------------------

  static void emit(JsonGenerator g, Object o, ObjectInspector oi) throws Exception {
    if (o == null) {
      g.writeNull();
      return;
    }
    switch (oi.getCategory()) {
      case PRIMITIVE:
        emitPrimitive(g, (PrimitiveObjectInspector) oi, o);
        return;
      case LIST: {
        ListObjectInspector loi = (ListObjectInspector) oi;
        g.writeStartArray();
        int len = loi.getListLength(o);
        for (int i = 0; i < len; i++) {
          emit(g, loi.getListElement(o, i), loi.getListElementObjectInspector());
        }
        g.writeEndArray();
        return;
      }
      case MAP: {
        MapObjectInspector moi = (MapObjectInspector) oi;
        g.writeStartArray();
        for (Map.Entry<?, ?> e : moi.getMap(o).entrySet()) {
          g.writeStartArray();
          emit(g, e.getKey(), moi.getMapKeyObjectInspector());
          emit(g, e.getValue(), moi.getMapValueObjectInspector());
          g.writeEndArray();
        }
        g.writeEndArray();
        return;
      }
      case STRUCT: {
        StructObjectInspector soi = (StructObjectInspector) oi;
        g.writeStartArray();
        for (StructField f : soi.getAllStructFieldRefs()) {
          emit(g, soi.getStructFieldData(o, f), f.getFieldObjectInspector());
        }
        g.writeEndArray();
        return;
      }
      default:
        throw new IllegalArgumentException("unsupported type " + oi.getTypeName());
    }
  }

  private static void emitPrimitive(JsonGenerator g, PrimitiveObjectInspector poi, Object o)
      throws Exception {
    Object v = poi.getPrimitiveJavaObject(o);
    if (v == null) {
      g.writeNull();
      return;
    }
    switch (poi.getPrimitiveCategory()) {
      case BOOLEAN:
        g.writeBoolean((Boolean) v);
        return;
      case BYTE:
      case SHORT:
      case INT:
      case LONG:
        g.writeNumber(((Number) v).longValue());
        return;
      case FLOAT:
        g.writeNumber(((Float) v).doubleValue());  // the exact float32 value, widened
        return;
      case DOUBLE:
        g.writeNumber((Double) v);
        return;
      case STRING:
        g.writeString((String) v);
        return;
      case VARCHAR:
        g.writeString(((HiveVarchar) v).getValue());
        return;
      case CHAR:
        g.writeString(((HiveChar) v).getPaddedValue());
        return;
      case DECIMAL: {
        int scale = ((DecimalTypeInfo) poi.getTypeInfo()).scale();
        BigDecimal bd = ((HiveDecimal) v).bigDecimalValue();
        g.writeString(bd.setScale(scale, RoundingMode.HALF_UP).toPlainString());
        return;
      }
      case DATE:
      case TIMESTAMP:
        // Hive 3's Date / Timestamp print 'yyyy-MM-dd' / 'yyyy-MM-dd HH:mm:ss[.fraction]'
        g.writeString(v.toString());
        return;
      case BINARY:
        g.writeString(Base64.getEncoder().encodeToString((byte[]) v));
        return;
      default:
        throw new IllegalArgumentException("unsupported type " + poi.getTypeName());
    }
  }
}
