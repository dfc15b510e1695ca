/*
 * Test-only helper: Hive 2.3.10's own bucket hash of rows (bucketing_version 1): the real
 * ObjectInspectorUtils.hashCode / getBucketHashCode of the jars in the pyspark wheel.
 * Version 2 (hashCodeMurmur) only exists from Hive 3: tests/hive_jvm asks Hive 3.1 and 4.1 for it.
 *
 * Values follow Hive 3+'s semantics (what the library implements): a date is its
 * proleptic-Gregorian epoch day, a timestamp a wall clock in UTC that goes through
 * java.sql.Timestamp.valueOf(text), as Hive 3's ObjectInspectorUtils.hashCode does ("old
 * timestamp writable hash code for backwards compatibility"). The JVM runs with -Duser.timezone=UTC.
 *
 * One entry point, JSON in / JSON out, so a py4j call carries a whole batch of rows.
 * Compiled at test time by tests/hive_ref/__init__.py together with HiveAcidRef.java.
 */
package hiveref;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.hive.common.type.HiveChar;
import org.apache.hadoop.hive.common.type.HiveDecimal;
import org.apache.hadoop.hive.common.type.HiveVarchar;
import org.apache.hadoop.hive.serde2.io.ByteWritable;
import org.apache.hadoop.hive.serde2.io.DateWritable;
import org.apache.hadoop.hive.serde2.io.DoubleWritable;
import org.apache.hadoop.hive.serde2.io.HiveCharWritable;
import org.apache.hadoop.hive.serde2.io.HiveDecimalWritable;
import org.apache.hadoop.hive.serde2.io.HiveVarcharWritable;
import org.apache.hadoop.hive.serde2.io.ShortWritable;
import org.apache.hadoop.hive.serde2.io.TimestampWritable;
import org.apache.hadoop.hive.serde2.objectinspector.ObjectInspector;
import org.apache.hadoop.hive.serde2.objectinspector.ObjectInspectorUtils;
import org.apache.hadoop.hive.serde2.objectinspector.primitive.PrimitiveObjectInspectorFactory;
import org.apache.hadoop.hive.serde2.typeinfo.CharTypeInfo;
import org.apache.hadoop.hive.serde2.typeinfo.DecimalTypeInfo;
import org.apache.hadoop.hive.serde2.typeinfo.PrimitiveTypeInfo;
import org.apache.hadoop.hive.serde2.typeinfo.TypeInfo;
import org.apache.hadoop.hive.serde2.typeinfo.TypeInfoUtils;
import org.apache.hadoop.hive.serde2.typeinfo.VarcharTypeInfo;
import org.apache.hadoop.io.BooleanWritable;
import org.apache.hadoop.io.BytesWritable;
import org.apache.hadoop.io.FloatWritable;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;

public final class HiveHashRef {

  private static final ObjectMapper MAPPER = new ObjectMapper(JsonFactory.builder()
      .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
      .build());

  private HiveHashRef() {
  }

  /**
   * Spec keys: columns [[name, type]...], rows [[v...]...], num_buckets.
   * Values: JSON numbers / booleans / strings; decimals, dates ('yyyy-MM-dd') and timestamps
   * ('yyyy-MM-dd HH:mm:ss[.f]') as text, binary as base64, null as null.
   * Returns {"v1": {"fields": [[h...]...], "hash": [...], "bucket": [...]}}.
   */
  public static String bucketHashes(String specJson) throws Exception {
    JsonNode spec = MAPPER.readTree(specJson);
    List<PrimitiveTypeInfo> types = new ArrayList<>();
    List<ObjectInspector> ois = new ArrayList<>();
    for (JsonNode col : spec.get("columns")) {
      TypeInfo t = TypeInfoUtils.getTypeInfoFromTypeString(col.get(1).asText());
      if (!(t instanceof PrimitiveTypeInfo)) {
        throw new IllegalArgumentException("not a primitive type: " + t.getTypeName());
      }
      types.add((PrimitiveTypeInfo) t);
      ois.add(PrimitiveObjectInspectorFactory.getPrimitiveWritableObjectInspector(
          (PrimitiveTypeInfo) t));
    }
    int numBuckets = spec.path("num_buckets").asInt(1);
    ObjectInspector[] oiArray = ois.toArray(new ObjectInspector[0]);
    Map<String, List<Object>> v1 = result();
    for (JsonNode row : spec.get("rows")) {
      if (row.size() != types.size()) {
        throw new IllegalArgumentException("row has " + row.size() + " values: " + row);
      }
      Object[] v1Values = new Object[types.size()];
      List<Object> f1 = new ArrayList<>();
      for (int i = 0; i < types.size(); i++) {
        v1Values[i] = v1Writable(row.get(i), types.get(i));
        f1.add(ObjectInspectorUtils.hashCode(v1Values[i], oiArray[i]));
      }
      // Hive 2.3's getBucketHashCode is the version-1 combination (31 * h + hashCode).
      int h1 = ObjectInspectorUtils.getBucketHashCode(v1Values, oiArray);
      add(v1, f1, h1, numBuckets);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("v1", v1);
    return MAPPER.writeValueAsString(out);
  }

  private static Map<String, List<Object>> result() {
    Map<String, List<Object>> m = new LinkedHashMap<>();
    m.put("fields", new ArrayList<>());
    m.put("hash", new ArrayList<>());
    m.put("bucket", new ArrayList<>());
    return m;
  }

  private static void add(Map<String, List<Object>> m, List<Object> fields, int hash, int n) {
    m.get("fields").add(fields);
    m.get("hash").add(hash);
    m.get("bucket").add((hash & Integer.MAX_VALUE) % n);  // ObjectInspectorUtils.getBucketNumber
  }

  // ------------------------------------------------------------------------------------------
  // The writable Hive's row-mode operators hand to ObjectInspectorUtils.hashCode
  // ------------------------------------------------------------------------------------------

  private static Object v1Writable(JsonNode n, PrimitiveTypeInfo type) {
    if (n == null || n.isNull()) {
      return null;
    }
    switch (type.getPrimitiveCategory()) {
      case TIMESTAMP:
        // Hive 3.1 / 4: new TimestampWritable(java.sql.Timestamp.valueOf(tsV2.toString()))
        return new TimestampWritable(java.sql.Timestamp.valueOf(n.textValue()));
      default:
        return writable(n, type);
    }
  }

  private static Object writable(JsonNode n, PrimitiveTypeInfo type) {
    switch (type.getPrimitiveCategory()) {
      case BOOLEAN:
        return new BooleanWritable(n.booleanValue());
      case BYTE:
        return new ByteWritable((byte) n.intValue());
      case SHORT:
        return new ShortWritable((short) n.intValue());
      case INT:
        return new IntWritable(n.intValue());
      case LONG:
        return new LongWritable(n.longValue());
      case FLOAT:
        return new FloatWritable((float) n.doubleValue());
      case DOUBLE:
        return new DoubleWritable(n.doubleValue());
      case STRING:
        return new Text(n.textValue());
      case CHAR:
        return new HiveCharWritable(
            new HiveChar(n.textValue(), ((CharTypeInfo) type).getLength()));
      case VARCHAR:
        return new HiveVarcharWritable(
            new HiveVarchar(n.textValue(), ((VarcharTypeInfo) type).getLength()));
      case BINARY:
        return new BytesWritable(Base64.getDecoder().decode(n.textValue()));
      case DATE:
        // Hive 3's DateWritableV2 holds the proleptic epoch day (LocalDate).
        return new DateWritable((int) LocalDate.parse(n.textValue()).toEpochDay());
      case DECIMAL: {
        DecimalTypeInfo dt = (DecimalTypeInfo) type;
        HiveDecimal d = HiveDecimal.enforcePrecisionScale(
            HiveDecimal.create(new BigDecimal(n.textValue())), dt.precision(), dt.scale());
        if (d == null) {
          throw new IllegalArgumentException(n.textValue() + " does not fit " + dt.getTypeName());
        }
        return new HiveDecimalWritable(d);
      }
      default:
        throw new IllegalArgumentException("unsupported type " + type.getTypeName());
    }
  }
}
