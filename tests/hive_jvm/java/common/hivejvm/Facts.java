/*
 * Test-only helper: single facts of Hive 3.1 / 4.1 the format notes rely on, asked of Hive's own
 * classes (tests/test_hive3_facts.py): configuration defaults, BucketCodec, Murmur3,
 * Utilities.getBucketingVersion.
 */
package hivejvm;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.ql.exec.Utilities;
import org.apache.hadoop.hive.ql.io.BucketCodec;
import org.apache.hive.common.util.Murmur3;

public final class Facts {

  private Facts() {
  }

  /**
   * The JVM's system class loader and how many of Hive's classes it patched (java/boot), once
   * Hive's Kryo is made: Hive 3.1 needs its Java 9 field names, Hive 4.1 has them.
   */
  public static Object loader(JsonNode spec) throws Exception {
    org.apache.hadoop.hive.ql.exec.SerializationUtilities.releaseKryo(
        org.apache.hadoop.hive.ql.exec.SerializationUtilities.borrowKryo());
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("system_class_loader", ClassLoader.getSystemClassLoader().getClass().getName());
    // (java/boot is compiled apart: reach it by name)
    out.put("patched", Class.forName("hivejvm.boot.HiveLoader").getField("patched").getInt(null));
    return out;
  }

  /** Spec: names [...]. The value of each in a fresh HiveConf (null: Hive has no such key). */
  public static Object confDefaults(JsonNode spec) {
    HiveConf conf = new HiveConf();
    Map<String, Object> out = new LinkedHashMap<>();
    for (JsonNode n : spec.get("names")) {
      out.put(n.asText(), conf.get(n.asText()));
    }
    return out;
  }

  /** Spec: cases [[bucket, statement, maxStatement (-1: unset)]...]. Each: the int or an error. */
  public static Object encodeBucket(JsonNode spec) {
    Configuration conf = new Configuration();
    List<Object> out = new ArrayList<>();
    for (JsonNode c : spec.get("cases")) {
      try {
        out.add(Compat.encodeBucket(conf, c.get(0).asInt(), c.get(1).asInt(), c.get(2).asInt()));
      } catch (RuntimeException e) {
        out.add(e.getClass().getSimpleName() + ": " + e.getMessage());
      }
    }
    return out;
  }

  /** Spec: values [int...]: [version, writer id, statement id] of each bucket property. */
  public static Object decodeBucket(JsonNode spec) {
    List<Object> out = new ArrayList<>();
    for (JsonNode v : spec.get("values")) {
      int bp = v.asInt();
      BucketCodec codec = BucketCodec.determineVersion(bp);
      List<Object> one = new ArrayList<>();
      one.add(codec.getVersion());
      one.add(codec.decodeWriterId(bp));
      one.add(codec.decodeStatementId(bp));
      out.add(one);
    }
    return out;
  }

  /** Spec: values [base64...]. org.apache.hive.common.util.Murmur3.hash32 of each (seed 104729). */
  public static Object murmur3(JsonNode spec) {
    List<Object> out = new ArrayList<>();
    for (JsonNode v : spec.get("values")) {
      out.add(Murmur3.hash32(Base64.getDecoder().decode(v.textValue())));
    }
    return out;
  }

  /** Spec: values [string or null...]. Utilities.getBucketingVersion of each property value. */
  public static Object bucketingVersion(JsonNode spec) {
    List<Object> out = new ArrayList<>();
    for (JsonNode v : spec.get("values")) {
      out.add(Utilities.getBucketingVersion(v.isNull() ? null : v.asText()));
    }
    return out;
  }
}
