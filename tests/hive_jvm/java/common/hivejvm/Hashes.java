/*
 * Test-only helper: Hive 3.1 / 4.1's own bucket hashes (serde's ObjectInspectorUtils), both
 * bucketing versions, of rows the Python tests send:
 * version 1 = hashCode per field, getBucketHashCodeOld per row; version 2 = hashCodeMurmur per
 * field, getBucketHashCode per row; the bucket = getBucketNumber(hash, numBuckets).
 * Each value is Hive's writable of its column type (what a map task's operators hand over),
 * built from the JSON value with Hive's own ObjectInspectorConverters.
 */
package hivejvm;

import com.fasterxml.jackson.databind.JsonNode;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.hive.serde2.objectinspector.ObjectInspector;
import org.apache.hadoop.hive.serde2.objectinspector.ObjectInspectorConverters;
import org.apache.hadoop.hive.serde2.objectinspector.ObjectInspectorUtils;
import org.apache.hadoop.hive.serde2.typeinfo.TypeInfo;
import org.apache.hadoop.hive.serde2.typeinfo.TypeInfoUtils;
import org.apache.hadoop.io.BytesWritable;

public final class Hashes {

  private Hashes() {
  }

  /** Spec: columns [[name, type]...], rows [[v...]...], num_buckets. */
  public static Object bucketHashes(JsonNode spec) {
    Values.Schema schema = Values.Schema.from(spec);
    int n = schema.size();
    ObjectInspector[] ois = new ObjectInspector[n];
    ObjectInspectorConverters.Converter[] toWritable = new ObjectInspectorConverters.Converter[n];
    for (int i = 0; i < n; i++) {
      TypeInfo t = schema.types.get(i);
      ois[i] = TypeInfoUtils.getStandardWritableObjectInspectorFromTypeInfo(t);
      toWritable[i] = ObjectInspectorConverters.getConverter(
          TypeInfoUtils.getStandardJavaObjectInspectorFromTypeInfo(t), ois[i]);
    }
    int numBuckets = spec.path("num_buckets").asInt(1);
    Map<String, List<Object>> v1 = result();
    Map<String, List<Object>> v2 = result();
    ByteBuffer buffer = ByteBuffer.allocate(8);
    for (JsonNode row : spec.get("rows")) {
      if (row.size() != n) {
        throw new IllegalArgumentException("row has " + row.size() + " values: " + row);
      }
      Object[] values = new Object[n];
      List<Object> f1 = new ArrayList<>();
      List<Object> f2 = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        values[i] = writable(toWritable[i], row.get(i), schema.types.get(i));
        f1.add(ObjectInspectorUtils.hashCode(values[i], ois[i]));
        f2.add(ObjectInspectorUtils.hashCodeMurmur(values[i], ois[i], buffer));
      }
      add(v1, f1, ObjectInspectorUtils.getBucketHashCodeOld(values, ois), numBuckets);
      add(v2, f2, ObjectInspectorUtils.getBucketHashCode(values, ois), numBuckets);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("v1", v1);
    out.put("v2", v2);
    return out;
  }

  /**
   * A BytesWritable holding exactly the value's bytes: hashCodeMurmur hashes a binary's whole
   * backing array (BytesWritable.getBytes(), not up to getLength()), so a converter's reused
   * writable, grown by earlier values, would hash its padding too (see binaryReused).
   */
  private static Object writable(ObjectInspectorConverters.Converter c, JsonNode v, TypeInfo t) {
    Object java = Values.toJava(v, t);
    if (java instanceof byte[]) {
      return new BytesWritable((byte[]) java);
    }
    return java == null ? null : c.convert(java);
  }

  /**
   * Spec: values [base64...]. One BytesWritable set() to each value in turn (as a reader or a
   * converter reuses it), hashed by hashCodeMurmur after each set; with the writable's backing
   * array (base64) and its length.
   */
  public static Object binaryReused(JsonNode spec) {
    BytesWritable w = new BytesWritable();
    ObjectInspector oi = TypeInfoUtils.getStandardWritableObjectInspectorFromTypeInfo(
        TypeInfoUtils.getTypeInfoFromTypeString("binary"));
    List<Object> out = new ArrayList<>();
    for (JsonNode v : spec.get("values")) {
      byte[] b = Base64.getDecoder().decode(v.textValue());
      w.set(b, 0, b.length);
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("hash", ObjectInspectorUtils.hashCodeMurmur(w, oi, ByteBuffer.allocate(8)));
      m.put("buffer", Base64.getEncoder().encodeToString(w.getBytes()));
      m.put("length", w.getLength());
      out.add(m);
    }
    return out;
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
    m.get("bucket").add(ObjectInspectorUtils.getBucketNumber(hash, n));
  }
}
