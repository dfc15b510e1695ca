/*
 * Test-only helper: Hive's bucket hash of rows, both bucketing versions, from Hive's own code.
 *
 * Version 1 is Hive 2.3.10's real ObjectInspectorUtils.hashCode / getBucketHashCode (the jars in
 * the pyspark wheel). Version 2 is Hive 3+'s ObjectInspectorUtils.hashCodeMurmur, which those jars
 * lack: its per-type byte encoding is rebuilt here, line by line from Hive's source
 * (serde/.../objectinspector/ObjectInspectorUtils.java, hashCodeMurmur and getBucketHashCode, Hive
 * 3.1 / 4), with the bytes taken from the Hive writables (Text, HiveCharWritable.getStrippedValue,
 * HiveVarcharWritable.getTextValue, BytesWritable, HiveDecimalWritable.getInternalStorage,
 * TimestampWritable.getBytes) and hashed by the real org.apache.hive.common.util.Murmur3.hash32
 * (hive-storage-api 2.8.1).
 *
 * Values follow Hive 3+'s semantics: a date is its proleptic-Gregorian epoch day
 * (DateWritableV2.getDays), a timestamp is a wall clock in UTC (Timestamp.toEpochSecond);
 * version 1 of a timestamp goes through java.sql.Timestamp.valueOf(text), as Hive 3's
 * ObjectInspectorUtils.hashCode does ("old timestamp writable hash code for backwards
 * compatibility"). The JVM runs with -Duser.timezone=UTC.
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
import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;
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
import org.apache.hive.common.util.Murmur3;

public final class HiveHashRef {

  private static final ObjectMapper MAPPER = new ObjectMapper(JsonFactory.builder()
      .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
      .build());

  /** 'yyyy-MM-dd HH:mm:ss[.fffffffff]', Hive's timestamp text (Timestamp.valueOf in Hive 3). */
  private static final DateTimeFormatter TS_TEXT = new DateTimeFormatterBuilder()
      .appendPattern("uuuu-MM-dd HH:mm:ss")
      .optionalStart()
      .appendFraction(ChronoField.NANO_OF_SECOND, 1, 9, true)
      .optionalEnd()
      .toFormatter();

  private HiveHashRef() {
  }

  /**
   * Spec keys: columns [[name, type]...], rows [[v...]...], num_buckets.
   * Values: JSON numbers / booleans / strings; decimals, dates ('yyyy-MM-dd') and timestamps
   * ('yyyy-MM-dd HH:mm:ss[.f]') as text, binary as base64, null as null.
   * Returns {"v1": {"fields": [[h...]...], "hash": [...], "bucket": [...]}, "v2": {...}}.
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
    Map<String, List<Object>> v2 = result();
    ByteBuffer buffer = ByteBuffer.allocate(8);  // as Hive 3's getBucketHashCode
    for (JsonNode row : spec.get("rows")) {
      if (row.size() != types.size()) {
        throw new IllegalArgumentException("row has " + row.size() + " values: " + row);
      }
      Object[] v1Values = new Object[types.size()];
      List<Object> f1 = new ArrayList<>();
      List<Object> f2 = new ArrayList<>();
      int h2 = 0;
      for (int i = 0; i < types.size(); i++) {
        JsonNode n = row.get(i);
        v1Values[i] = v1Writable(n, types.get(i));
        f1.add(ObjectInspectorUtils.hashCode(v1Values[i], oiArray[i]));
        int field2 = murmurField(n, types.get(i), buffer);
        f2.add(field2);
        h2 = 31 * h2 + field2;
      }
      // Hive 2.3's getBucketHashCode is the version-1 combination (31 * h + hashCode).
      int h1 = ObjectInspectorUtils.getBucketHashCode(v1Values, oiArray);
      add(v1, f1, h1, numBuckets);
      add(v2, f2, h2, numBuckets);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("v1", v1);
    out.put("v2", v2);
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
  // Version 1: the writable Hive's row-mode operators hand to ObjectInspectorUtils.hashCode
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
      case TIMESTAMP: {
        // Hive 3's Timestamp: the wall clock at UTC, proleptic (LocalDateTime).
        LocalDateTime t = LocalDateTime.parse(n.textValue(), TS_TEXT);
        java.sql.Timestamp ts = new java.sql.Timestamp(
            Math.multiplyExact(t.toEpochSecond(ZoneOffset.UTC), 1000L));
        ts.setNanos(t.getNano());
        return new TimestampWritable(ts);
      }
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

  // ------------------------------------------------------------------------------------------
  // Version 2: Hive 3's ObjectInspectorUtils.hashCodeMurmur, per primitive category
  // ------------------------------------------------------------------------------------------

  private static int murmurField(JsonNode n, PrimitiveTypeInfo type, ByteBuffer byteBuffer) {
    if (n == null || n.isNull()) {
      return 0;
    }
    Object w = writable(n, type);
    byteBuffer.clear();
    switch (type.getPrimitiveCategory()) {
      case BOOLEAN:
        return ((BooleanWritable) w).get() ? 1 : 0;
      case BYTE:
        return ((ByteWritable) w).get();
      case SHORT:
        byteBuffer.putShort(((ShortWritable) w).get());
        return Murmur3.hash32(byteBuffer.array(), 2);
      case INT:
        byteBuffer.putInt(((IntWritable) w).get());
        return Murmur3.hash32(byteBuffer.array(), 4);
      case LONG:
        byteBuffer.putLong(((LongWritable) w).get());
        return Murmur3.hash32(byteBuffer.array(), 8);
      case FLOAT:
        // (sic) Hive passes the int bits to putFloat, which converts them as a number.
        byteBuffer.putFloat(Float.floatToIntBits(((FloatWritable) w).get()));
        return Murmur3.hash32(byteBuffer.array(), 4);
      case DOUBLE:
        byteBuffer.putDouble(Double.doubleToLongBits(((DoubleWritable) w).get()));
        return Murmur3.hash32(byteBuffer.array(), 8);
      case STRING: {
        Text text = (Text) w;
        return Murmur3.hash32(text.getBytes(), text.getLength());
      }
      case CHAR: {
        Text text = ((HiveCharWritable) w).getStrippedValue();
        return Murmur3.hash32(text.getBytes(), text.getLength());
      }
      case VARCHAR: {
        Text text = ((HiveVarcharWritable) w).getTextValue();
        return Murmur3.hash32(text.getBytes(), text.getLength());
      }
      case BINARY:
        return Murmur3.hash32(((BytesWritable) w).getBytes());
      case DATE:
        byteBuffer.putInt(((DateWritable) w).getDays());
        return Murmur3.hash32(byteBuffer.array(), 4);
      case TIMESTAMP:
        return Murmur3.hash32(((TimestampWritable) w).getBytes());
      case DECIMAL:
        return Murmur3.hash32(((HiveDecimalWritable) w).getInternalStorage());
      default:
        throw new IllegalArgumentException("unsupported type " + type.getTypeName());
    }
  }
}
