/*
 * Test-only helper: Hive 3.1 / 4.1's own snapshot selection and readers, driven by the Python
 * tests (tests/hive_jvm/oracle.py) as the interoperability oracle.
 *
 * - acidState: AcidUtils.getAcidState of a directory for a ValidWriteIdList (+ ValidTxnList).
 * - read: a full-ACID table or partition directory through OrcInputFormat.getSplits and
 *   getRecordReader, as a Hive map task reads it: row by row (OrcRawRecordMerger behind
 *   NullKeyRecordReader) or vectorized (VectorizedOrcAcidRowBatchReader, chosen by
 *   OrcInputFormat itself when the registered MapWork is vectorized). Rows come back with their
 *   ROW__IDs.
 * - readMm: an insert-only table directory: HiveInputFormat.processPathsForMmRead picks the
 *   directories (getAcidState), then the table's plain input format reads them.
 */
package hivejvm;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;

import java.io.StringWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hive.common.ValidReaderWriteIdList;
import org.apache.hadoop.hive.common.ValidTxnList;
import org.apache.hadoop.hive.common.ValidWriteIdList;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.ql.io.AcidInputFormat;
import org.apache.hadoop.hive.ql.io.AcidUtils;
import org.apache.hadoop.hive.ql.io.HiveInputFormat;
import org.apache.hadoop.hive.ql.io.RecordIdentifier;
import org.apache.hadoop.hive.ql.io.orc.OrcInputFormat;
import org.apache.hadoop.hive.ql.io.orc.OrcStruct;
import org.apache.hadoop.hive.serde2.AbstractSerDe;
import org.apache.hadoop.hive.serde2.objectinspector.ObjectInspector;
import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.io.Writable;
import org.apache.hadoop.mapred.FileInputFormat;
import org.apache.hadoop.mapred.InputFormat;
import org.apache.hadoop.mapred.InputSplit;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.RecordReader;
import org.apache.hadoop.mapred.Reporter;
import org.apache.hive.common.util.HiveVersionInfo;

public final class Acid {

  private static volatile Configuration baseConf;
  private static final AtomicLong PLANS = new AtomicLong();

  private Acid() {
  }

  /** Which Hive answered, and from which jars. */
  public static Object ping(JsonNode spec) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("hive", HiveVersionInfo.getVersion());
    out.put("compat", Compat.HIVE);
    out.put("OrcInputFormat", jarOf(OrcInputFormat.class));
    out.put("ValidReaderWriteIdList", jarOf(ValidReaderWriteIdList.class));
    out.put("system_class_loader", ClassLoader.getSystemClassLoader().getClass().getName());
    out.put("timezone", java.util.TimeZone.getDefault().getID());
    out.put("java", System.getProperty("java.version"));
    return out;
  }

  /** Spec: dir, write_ids (ValidWriteIdList text), txns (ValidTxnList text). */
  public static Object acidState(JsonNode spec) throws Exception {
    Configuration conf = newConf();
    conf.set(ValidTxnList.VALID_TXNS_KEY, spec.get("txns").asText());
    ValidWriteIdList wl = Compat.writeIdList(spec.get("write_ids").asText());
    return Compat.acidState(qualified(spec.get("dir").asText(), conf), conf, wl);
  }

  /**
   * Spec: dir, columns [[name, type]...], write_ids, txns, bucket_count, vectorized (bool),
   * conf {key: value}. Returns {"splits": n, "rows": [[[writeId, bucketProperty, rowId], [v...]]...]}.
   */
  public static Object read(JsonNode spec) throws Exception {
    Values.Schema schema = Values.Schema.from(spec);
    JobConf job = new JobConf(newConf());
    job.set("mapred.input.dir", qualified(spec.get("dir").asText(), job).toString());
    job.set(ValidWriteIdList.VALID_WRITEIDS_KEY, spec.get("write_ids").asText());
    job.set(ValidTxnList.VALID_TXNS_KEY, spec.get("txns").asText());
    // What Hive's planner sets for a scan of a full-ACID (split-update) table.
    AcidUtils.setAcidOperationalProperties(job, true,
        AcidUtils.AcidOperationalProperties.getDefault());
    job.set("transactional", "true");
    job.set("transactional_properties", "default");
    tableColumns(job, schema);
    if (spec.hasNonNull("bucket_count")) {
      job.setInt("bucket_count", spec.get("bucket_count").asInt());
    }
    extraConf(job, spec);
    boolean vectorized = spec.path("vectorized").asBoolean(false);
    Path plan = null;
    if (vectorized) {
      plan = Vectorized.register(job, schema, PLANS.incrementAndGet());
    }
    OrcInputFormat format = new OrcInputFormat();
    InputSplit[] splits = format.getSplits(job, 1);
    StringWriter buf = new StringWriter();
    try (JsonGenerator g = Server.JSON.createGenerator(buf)) {
      g.writeStartObject();
      g.writeNumberField("splits", splits.length);
      g.writeArrayFieldStart("rows");
      for (InputSplit split : splits) {
        if (vectorized) {
          Vectorized.readSplit(g, format, split, job, schema);
        } else {
          readSplitRows(g, format, split, job, schema);
        }
      }
      g.writeEndArray();
      g.writeEndObject();
    } finally {
      if (plan != null) {
        Vectorized.unregister(job);
      }
    }
    return new Server.RawJson(buf.toString());
  }

  private static void readSplitRows(JsonGenerator g, OrcInputFormat format, InputSplit split,
      JobConf job, Values.Schema schema) throws Exception {
    ObjectInspector rowOI = OrcStruct.createObjectInspector(schema.rowTypeInfo());
    RecordReader<NullWritable, OrcStruct> reader = format.getRecordReader(split, job, Reporter.NULL);
    try {
      @SuppressWarnings("unchecked")
      AcidInputFormat.AcidRecordReader<NullWritable, OrcStruct> acid =
          (AcidInputFormat.AcidRecordReader<NullWritable, OrcStruct>) reader;
      NullWritable key = reader.createKey();
      OrcStruct value = reader.createValue();
      while (reader.next(key, value)) {
        RecordIdentifier id = acid.getRecordIdentifier();
        g.writeStartArray();
        writeRowId(g, id.getWriteId(), id.getBucketProperty(), id.getRowId());
        Values.emit(g, value, rowOI);
        g.writeEndArray();
      }
    } finally {
      reader.close();
    }
  }

  static void writeRowId(JsonGenerator g, long writeId, long bucket, long rowId) throws Exception {
    g.writeStartArray();
    g.writeNumber(writeId);
    g.writeNumber(bucket);
    g.writeNumber(rowId);
    g.writeEndArray();
  }

  /**
   * Spec: dir (a table or partition directory of an insert-only table), columns, write_ids,
   * format ("orc" | "parquet"). Returns {"dirs": [what processPathsForMmRead chose],
   * "rows": [[v...]...]}.
   */
  public static Object readMm(JsonNode spec) throws Exception {
    Values.Schema schema = Values.Schema.from(spec);
    JobConf job = new JobConf(newConf());
    tableColumns(job, schema);
    extraConf(job, spec);
    ValidWriteIdList wl = Compat.writeIdList(spec.get("write_ids").asText());
    List<Path> chosen = new ArrayList<>();
    List<Path> withOriginals = new ArrayList<>();
    HiveInputFormat.processPathsForMmRead(
        java.util.Collections.singletonList(qualified(spec.get("dir").asText(), job)), job, wl, chosen,
        withOriginals);
    Map<String, Object> out = new LinkedHashMap<>();
    List<String> dirs = new ArrayList<>();
    for (Path p : chosen) {
      dirs.add(p.toString());
    }
    out.put("dirs", dirs);
    if (!withOriginals.isEmpty()) {
      throw new IllegalStateException("original files chosen: " + withOriginals);
    }
    boolean parquet = "parquet".equals(spec.get("format").asText());
    InputFormat<NullWritable, ? extends Writable> format;
    ObjectInspector oi;
    AbstractSerDe serde = null;
    if (parquet) {
      format = new org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat();
      serde = new org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe();
      Properties props = new Properties();
      props.setProperty("columns", schema.columnsProperty());
      props.setProperty("columns.types", schema.typesProperty());
      serde.initialize(job, props, null);
      oi = serde.getObjectInspector();
    } else {
      format = new OrcInputFormat();
      oi = OrcStruct.createObjectInspector(schema.rowTypeInfo());
    }
    List<List<Object>> rows = new ArrayList<>();
    StringWriter buf = new StringWriter();
    try (JsonGenerator g = Server.JSON.createGenerator(buf)) {
      g.writeStartArray();
      if (!chosen.isEmpty()) {
        FileInputFormat.setInputPaths(job, chosen.toArray(new Path[0]));
        job.setBoolean(FileInputFormat.INPUT_DIR_RECURSIVE, true);
        for (InputSplit split : format.getSplits(job, 1)) {
          @SuppressWarnings("unchecked")
          RecordReader<NullWritable, Writable> reader =
              (RecordReader<NullWritable, Writable>) format.getRecordReader(split, job, Reporter.NULL);
          try {
            NullWritable key = reader.createKey();
            Writable value = reader.createValue();
            while (reader.next(key, value)) {
              Values.emit(g, serde == null ? value : serde.deserialize(value), oi);
            }
          } finally {
            reader.close();
          }
        }
      }
      g.writeEndArray();
    }
    out.put("rows", Server.MAPPER.readTree(buf.toString()));
    return out;
  }

  // ------------------------------------------------------------------------------------------

  static void tableColumns(Configuration job, Values.Schema schema) {
    job.set("columns", schema.columnsProperty());
    job.set("columns.types", schema.typesProperty());
    job.set("schema.evolution.columns", schema.columnsProperty());
    job.set("schema.evolution.columns.types", schema.typesProperty());
  }

  private static void extraConf(Configuration job, JsonNode spec) {
    java.util.Iterator<Map.Entry<String, JsonNode>> it = spec.path("conf").fields();
    while (it.hasNext()) {
      Map.Entry<String, JsonNode> e = it.next();
      job.set(e.getKey(), e.getValue().asText());
    }
  }

  /** A fully qualified path (file:/...), as Hive's planner hands table locations over. */
  static Path qualified(String dir, Configuration conf) throws java.io.IOException {
    Path p = new Path(dir);
    return p.getFileSystem(conf).makeQualified(p);
  }

  static Configuration newConf() {
    Configuration base = baseConf;
    if (base == null) {
      synchronized (Acid.class) {
        if (baseConf == null) {
          Configuration c = new Configuration();
          c.set("fs.defaultFS", "file:///");
          c.set("fs.file.impl", NioLocalFileSystem.class.getName());
          c.setBoolean("fs.file.impl.disable.cache", true);
          // No caches across calls: the tests rewrite directories between reads.
          c.set(HiveConf.ConfVars.HIVE_ORC_CACHE_STRIPE_DETAILS_MEMORY_SIZE.varname, "0");
          c.set("hive.txn.acid.dir.cache.duration", "-1");
          baseConf = c;
        }
        base = baseConf;
      }
    }
    return new Configuration(base);
  }

  private static String jarOf(Class<?> c) {
    java.security.CodeSource src = c.getProtectionDomain().getCodeSource();
    return src == null ? "?" : src.getLocation().toString();
  }
}
