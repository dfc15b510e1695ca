/*
 * Test-only helper: drives Hive 2.3's own ACID writer and reader (the jars shipped inside the
 * pyspark wheel) so that Python tests can use Hive as an interoperability oracle.
 *
 * Every entry point takes one JSON string and returns one JSON string, so a py4j call carries a
 * whole batch of rows and Python never has to build Java objects itself. Values are converted
 * according to the declared Hive column type, so it does not matter whether py4j / JSON delivered
 * an Integer or a Long.
 *
 * Compiled at test time by tests/hive_ref/__init__.py with  javac -cp '<pyspark>/jars/*'.
 */
package hiveref;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.StringWriter;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.sql.Date;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hive.common.ValidReadTxnList;
import org.apache.hadoop.hive.common.ValidTxnList;
import org.apache.hadoop.hive.common.type.HiveChar;
import org.apache.hadoop.hive.common.type.HiveDecimal;
import org.apache.hadoop.hive.common.type.HiveVarchar;
import org.apache.hadoop.hive.ql.exec.FileSinkOperator;
import org.apache.hadoop.hive.ql.io.AcidInputFormat;
import org.apache.hadoop.hive.ql.io.AcidOutputFormat;
import org.apache.hadoop.hive.ql.io.AcidUtils;
import org.apache.hadoop.hive.ql.io.RecordIdentifier;
import org.apache.hadoop.hive.ql.io.RecordUpdater;
import org.apache.hadoop.hive.ql.io.orc.OrcFile;
import org.apache.hadoop.hive.ql.io.orc.OrcInputFormat;
import org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat;
import org.apache.hadoop.hive.ql.io.orc.OrcStruct;
import org.apache.hadoop.hive.ql.io.orc.Writer;
import org.apache.hadoop.hive.serde2.objectinspector.ListObjectInspector;
import org.apache.hadoop.hive.serde2.objectinspector.MapObjectInspector;
import org.apache.hadoop.hive.serde2.objectinspector.ObjectInspector;
import org.apache.hadoop.hive.serde2.objectinspector.ObjectInspectorConverters;
import org.apache.hadoop.hive.serde2.objectinspector.ObjectInspectorFactory;
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
import org.apache.hadoop.hive.shims.HadoopShims;
import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.io.Writable;
import org.apache.hadoop.mapred.InputSplit;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.RecordReader;
import org.apache.hadoop.mapred.Reporter;

public final class HiveAcidRef {

  private static final JsonFactory JSON = JsonFactory.builder()
      .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
      .disable(JsonWriteFeature.WRITE_NAN_AS_STRINGS)
      .build();
  private static final ObjectMapper MAPPER = new ObjectMapper(JSON);

  /** Field names of the ACID event struct, in file order. */
  private static final List<String> EVENT_FIELDS = Arrays.asList(
      "operation", "originalTransaction", "bucket", "rowId", "currentTransaction", "row");

  private static volatile Configuration baseConf;

  static {
    // One ERROR line per listing ("Failed to get files with ID ... Only supported for DFS") and
    // an ORC deprecation WARN per file are pure noise on a local file system.
    quiet("org.apache.hadoop.hive.ql.io.AcidUtils", "FATAL");
    quiet("org.apache.orc.impl.OrcTail", "ERROR");
  }

  private static void quiet(String logger, String level) {
    try {
      org.apache.logging.log4j.core.config.Configurator.setLevel(
          logger, org.apache.logging.log4j.Level.toLevel(level));
    } catch (Throwable ignored) {
      // logging backend not log4j2: leave it alone
    }
  }

  private HiveAcidRef() {
  }

  // ------------------------------------------------------------------------------------------
  // Entry points (all static, JSON in / JSON out)
  // ------------------------------------------------------------------------------------------

  /** Cheap call to check that the class is loaded; reports what the classpath resolved to. */
  public static String ping() throws Exception {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("ValidReadTxnList", jarOf(ValidReadTxnList.class));
    out.put("OrcOutputFormat", jarOf(OrcOutputFormat.class));
    out.put("timezone", java.util.TimeZone.getDefault().getID());
    out.put("java", System.getProperty("java.version"));
    return MAPPER.writeValueAsString(out);
  }

  /**
   * Writes one ACID directory through OrcOutputFormat#getRecordUpdater (what Hive's FileSink does).
   *
   * Spec keys: table_dir, columns [[name, type]...], field_names (names inside the ORC row struct),
   * bucket, min_txn, max_txn, current_txn, statement (-1 = none), base (bool), bucket_count,
   * inserts [[v...]...], ops [{"kind": "update"|"delete", "row_id": [o, b, r], "row": [v...]}].
   * Inserts are sent first, then the ops in the given order.
   */
  public static String write(String specJson) throws Exception {
    JsonNode spec = MAPPER.readTree(specJson);
    Schema schema = Schema.from(spec);
    Path tableDir = new Path(spec.get("table_dir").asText());
    Configuration conf = newConf();
    Properties tbl = tableProperties(schema, spec.path("bucket_count").asInt(1));

    List<String> names = new ArrayList<>();
    List<ObjectInspector> ois = new ArrayList<>();
    names.add("ROW__ID");
    ois.add(RecordIdentifier.StructInfo.oi);
    for (int i = 0; i < schema.size(); i++) {
      names.add(schema.fieldNames.get(i));
      ois.add(TypeInfoUtils.getStandardJavaObjectInspectorFromTypeInfo(schema.types.get(i)));
    }
    StructObjectInspector inspector =
        ObjectInspectorFactory.getStandardStructObjectInspector(names, ois);

    long currentTxn = spec.get("current_txn").asLong();
    AcidOutputFormat.Options opts = new AcidOutputFormat.Options(conf)
        .inspector(inspector)
        .bucket(spec.get("bucket").asInt())
        .minimumTransactionId(spec.get("min_txn").asLong())
        .maximumTransactionId(spec.get("max_txn").asLong())
        .statementId(spec.path("statement").asInt(-1))
        .writingBase(spec.path("base").asBoolean(false))
        .recordIdColumn(0)
        .finalDestination(tableDir)
        .tableProperties(tbl)
        .reporter(Reporter.NULL);

    RecordUpdater updater = new OrcOutputFormat().getRecordUpdater(tableDir, opts);
    boolean ok = false;
    int inserts = 0;
    int updates = 0;
    int deletes = 0;
    try {
      for (JsonNode row : spec.path("inserts")) {
        updater.insert(currentTxn, eventRow(null, row, schema));
        inserts++;
      }
      for (JsonNode op : spec.path("ops")) {
        String kind = op.get("kind").asText();
        List<Object> rowId = rowIdList(op.get("row_id"));
        if ("update".equals(kind)) {
          updater.update(currentTxn, eventRow(rowId, op.get("row"), schema));
          updates++;
        } else if ("delete".equals(kind)) {
          updater.delete(currentTxn, eventRow(rowId, null, schema));
          deletes++;
        } else {
          throw new IllegalArgumentException("unknown op kind " + kind);
        }
      }
      ok = true;
    } finally {
      updater.close(!ok);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("inserts", inserts);
    out.put("updates", updates);
    out.put("deletes", deletes);
    return MAPPER.writeValueAsString(out);
  }

  /**
   * Writes ACID events verbatim through OrcOutputFormat#getRawRecordWriter (what Hive 2.3's
   * compactor uses), e.g. a major-compaction base whose live rows keep their original ROW__IDs.
   *
   * Spec keys: table_dir, columns, field_names, bucket, min_txn, max_txn, statement (-1 = none),
   * kind ("base" | "delta" | "delete_delta"), bucket_count,
   * events [[operation, originalTxn, bucket, rowId, currentTxn, [v...] or null]...].
   */
  public static String writeRaw(String specJson) throws Exception {
    JsonNode spec = MAPPER.readTree(specJson);
    Schema schema = Schema.from(spec);
    Path tableDir = new Path(spec.get("table_dir").asText());
    Configuration conf = newConf();
    Properties tbl = tableProperties(schema, spec.path("bucket_count").asInt(1));
    String kind = spec.path("kind").asText("base");

    List<TypeInfo> eventTypes = Arrays.asList(
        TypeInfoFactory.intTypeInfo, TypeInfoFactory.longTypeInfo, TypeInfoFactory.intTypeInfo,
        TypeInfoFactory.longTypeInfo, TypeInfoFactory.longTypeInfo, schema.rowTypeInfo());
    TypeInfo eventType = TypeInfoFactory.getStructTypeInfo(EVENT_FIELDS, eventTypes);
    ObjectInspector javaOI = TypeInfoUtils.getStandardJavaObjectInspectorFromTypeInfo(eventType);
    ObjectInspector orcOI = OrcStruct.createObjectInspector(eventType);
    ObjectInspectorConverters.Converter converter =
        ObjectInspectorConverters.getConverter(javaOI, orcOI);

    AcidOutputFormat.Options opts = new AcidOutputFormat.Options(conf)
        .inspector(orcOI)
        .bucket(spec.get("bucket").asInt())
        .minimumTransactionId(spec.get("min_txn").asLong())
        .maximumTransactionId(spec.get("max_txn").asLong())
        .statementId(spec.path("statement").asInt(-1))
        .writingBase("base".equals(kind))
        .writingDeleteDelta("delete_delta".equals(kind))
        .finalDestination(tableDir)
        .tableProperties(tbl)
        .reporter(Reporter.NULL);
    if (!Arrays.asList("base", "delta", "delete_delta").contains(kind)) {
      throw new IllegalArgumentException("unknown kind " + kind);
    }

    FileSinkOperator.RecordWriter writer = new OrcOutputFormat().getRawRecordWriter(tableDir, opts);
    boolean ok = false;
    int n = 0;
    try {
      for (JsonNode ev : spec.path("events")) {
        if (!ev.isArray() || ev.size() != 6) {
          throw new IllegalArgumentException("an event needs 6 fields: " + ev);
        }
        List<Object> event = new ArrayList<>(6);
        event.add(toInt(ev.get(0), Integer.MIN_VALUE, Integer.MAX_VALUE));
        event.add(toLong(ev.get(1)));
        event.add(toInt(ev.get(2), Integer.MIN_VALUE, Integer.MAX_VALUE));
        event.add(toLong(ev.get(3)));
        event.add(toLong(ev.get(4)));
        JsonNode row = ev.get(5);
        event.add(row == null || row.isNull() ? null : rowValues(row, schema));
        writer.write((Writable) converter.convert(event));
        n++;
      }
      ok = true;
    } finally {
      writer.close(!ok);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("path", AcidUtils.createFilename(tableDir, opts).toString());
    out.put("events", n);
    return MAPPER.writeValueAsString(out);
  }

  /**
   * Writes a plain (non-ACID, "original") ORC file with Hive's ORC writer.
   * Spec keys: path (the file), columns, field_names, rows [[v...]...].
   */
  public static String writeOriginal(String specJson) throws Exception {
    JsonNode spec = MAPPER.readTree(specJson);
    Schema schema = Schema.from(spec);
    Path path = new Path(spec.get("path").asText());
    Configuration conf = newConf();
    Properties tbl = new Properties();
    tbl.setProperty("orc.compress", "ZLIB");
    ObjectInspector oi =
        TypeInfoUtils.getStandardJavaObjectInspectorFromTypeInfo(schema.rowTypeInfo());
    Writer writer = OrcFile.createWriter(path, OrcFile.writerOptions(tbl, conf).inspector(oi));
    int n = 0;
    try {
      for (JsonNode row : spec.path("rows")) {
        writer.addRow(rowValues(row, schema));
        n++;
      }
    } finally {
      writer.close();
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("path", path.toString());
    out.put("rows", n);
    return MAPPER.writeValueAsString(out);
  }

  /**
   * Reads a table (or partition) directory with Hive's row-mode ACID reader.
   * Spec keys: table_dir, columns, valid_txns, bucket_count, conf {key: value} (extra JobConf).
   * Returns {"splits": n, "rows": [[[originalTxn, bucket, rowId], [v...]], ...]}.
   */
  public static String read(String specJson) throws Exception {
    JsonNode spec = MAPPER.readTree(specJson);
    Schema schema = Schema.from(spec);
    String tableDir = new Path(spec.get("table_dir").asText()).toString();
    JobConf job = new JobConf(newConf());
    job.set("mapred.input.dir", tableDir);
    job.set(ValidTxnList.VALID_TXNS_KEY, spec.get("valid_txns").asText());
    job.setBoolean("hive.transactional.table.scan", true);
    job.setBoolean("hive.doing.acid", true);
    job.set("transactional", "true");
    job.set("transactional_properties", "default");
    job.setInt("hive.txn.operational.properties", 1);
    job.set("columns", schema.columnsProperty());
    job.set("columns.types", schema.typesProperty());
    job.set("schema.evolution.columns", schema.columnsProperty());
    job.set("schema.evolution.columns.types", schema.typesProperty());
    if (spec.hasNonNull("bucket_count")) {
      job.setInt("bucket_count", spec.get("bucket_count").asInt());
    }
    for (Map.Entry<String, JsonNode> e : spec.path("conf").properties()) {
      job.set(e.getKey(), e.getValue().asText());
    }

    ObjectInspector rowOI = OrcStruct.createObjectInspector(schema.rowTypeInfo());
    OrcInputFormat format = new OrcInputFormat();
    InputSplit[] splits = format.getSplits(job, 1);

    StringWriter buf = new StringWriter();
    try (JsonGenerator g = JSON.createGenerator(buf)) {
      g.writeStartObject();
      g.writeNumberField("splits", splits.length);
      g.writeArrayFieldStart("rows");
      for (InputSplit split : splits) {
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
            g.writeStartArray();
            g.writeNumber(id.getTransactionId());
            g.writeNumber(id.getBucketId());
            g.writeNumber(id.getRowId());
            g.writeEndArray();
            emit(g, value, rowOI);
            g.writeEndArray();
          }
        } finally {
          reader.close();
        }
      }
      g.writeEndArray();
      g.writeEndObject();
    }
    return buf.toString();
  }

  /**
   * Reads plain (non-ACID) files the way Hive reads a non-transactional table's directories:
   * OrcInputFormat or MapredParquetInputFormat (with ParquetHiveSerDe), by the table's columns.
   * Spec keys: dirs [directory...], format ("orc" | "parquet"), columns.
   * Returns {"rows": [[v...], ...]} in split order.
   */
  public static String readPlain(String specJson) throws Exception {
    JsonNode spec = MAPPER.readTree(specJson);
    Schema schema = Schema.from(spec);
    List<String> dirs = new ArrayList<>();
    for (JsonNode d : spec.get("dirs")) {
      dirs.add(new Path(d.asText()).toString());
    }
    JobConf job = new JobConf(newConf());
    job.set("mapred.input.dir", String.join(",", dirs));
    job.set("columns", schema.columnsProperty());
    job.set("columns.types", schema.typesProperty());
    job.set("schema.evolution.columns", schema.columnsProperty());
    job.set("schema.evolution.columns.types", schema.typesProperty());
    boolean parquet = "parquet".equals(spec.get("format").asText());
    org.apache.hadoop.mapred.InputFormat<NullWritable, ? extends Writable> format;
    ObjectInspector oi;
    org.apache.hadoop.hive.serde2.AbstractSerDe serde = null;
    if (parquet) {
      format = new org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat();
      serde = new org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe();
      Properties props = new Properties();
      props.setProperty("columns", schema.columnsProperty());
      props.setProperty("columns.types", schema.typesProperty());
      serde.initialize(job, props);
      oi = serde.getObjectInspector();
    } else {
      format = new OrcInputFormat();
      oi = OrcStruct.createObjectInspector(schema.rowTypeInfo());
    }
    StringWriter buf = new StringWriter();
    try (JsonGenerator g = JSON.createGenerator(buf)) {
      g.writeStartObject();
      g.writeArrayFieldStart("rows");
      for (InputSplit split : format.getSplits(job, 1)) {
        @SuppressWarnings("unchecked")
        RecordReader<NullWritable, Writable> reader =
            (RecordReader<NullWritable, Writable>) format.getRecordReader(split, job, Reporter.NULL);
        try {
          NullWritable key = reader.createKey();
          Writable value = reader.createValue();
          while (reader.next(key, value)) {
            emit(g, serde == null ? value : serde.deserialize(value), oi);
          }
        } finally {
          reader.close();
        }
      }
      g.writeEndArray();
      g.writeEndObject();
    }
    return buf.toString();
  }

  /**
   * Hive's snapshot selection (AcidUtils.getAcidState) for a directory and a ValidTxnList.
   * Spec keys: table_dir, valid_txns. Returns base, deltas, original_files, obsolete (paths).
   */
  public static String acidState(String specJson) throws Exception {
    JsonNode spec = MAPPER.readTree(specJson);
    Path dir = new Path(spec.get("table_dir").asText());
    Configuration conf = newConf();
    ValidTxnList txns = new ValidReadTxnList(spec.get("valid_txns").asText());
    AcidUtils.Directory state = AcidUtils.getAcidState(dir, conf, txns);
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("base", state.getBaseDirectory() == null ? null : state.getBaseDirectory().toString());
    List<Object> deltas = new ArrayList<>();
    for (AcidUtils.ParsedDelta d : state.getCurrentDirectories()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("path", d.getPath().toString());
      m.put("min_txn", d.getMinTransaction());
      m.put("max_txn", d.getMaxTransaction());
      m.put("statement", d.getStatementId());
      m.put("delete", d.isDeleteDelta());
      deltas.add(m);
    }
    out.put("deltas", deltas);
    List<String> originals = new ArrayList<>();
    for (HadoopShims.HdfsFileStatusWithId f : state.getOriginalFiles()) {
      originals.add(f.getFileStatus().getPath().toString());
    }
    out.put("original_files", originals);
    List<String> obsolete = new ArrayList<>();
    for (FileStatus st : state.getObsolete()) {
      obsolete.add(st.getPath().toString());
    }
    out.put("obsolete", obsolete);
    return MAPPER.writeValueAsString(out);
  }

  // ------------------------------------------------------------------------------------------
  // Configuration
  // ------------------------------------------------------------------------------------------

  private static Configuration newConf() {
    Configuration base = baseConf;
    if (base == null) {
      synchronized (HiveAcidRef.class) {
        if (baseConf == null) {
          Configuration c = new Configuration();
          c.set("fs.defaultFS", "file:///");
          // Hadoop's local FS forks `ls`/`chmod` for every permission lookup when the native
          // library is missing (~20 ms per file listed); use the NIO variant below instead.
          c.set("fs.file.impl", hivejvm.NioLocalFileSystem.class.getName());
          // ORC 2.x defaults to ZSTD; Hive 2.3 (ORC 1.3) wrote ZLIB.
          c.set("orc.compress", "ZLIB");
          c.set("hive.exec.orc.default.compress", "ZLIB");
          // No footer cache across calls: tests may rewrite a file at the same path.
          c.set("hive.orc.cache.stripe.details.mem.size", "0");
          baseConf = c;
        }
        base = baseConf;
      }
    }
    return new Configuration(base);
  }

  private static Properties tableProperties(Schema schema, int bucketCount) {
    Properties p = new Properties();
    p.setProperty("transactional", "true");
    p.setProperty("transactional_properties", "default");
    p.setProperty("orc.compress", "ZLIB");
    p.setProperty("columns", schema.columnsProperty());
    p.setProperty("columns.types", schema.typesProperty());
    p.setProperty("bucket_count", Integer.toString(bucketCount));
    return p;
  }

  private static String jarOf(Class<?> c) {
    java.security.CodeSource src = c.getProtectionDomain().getCodeSource();
    return src == null ? "?" : src.getLocation().toString();
  }

  // ------------------------------------------------------------------------------------------
  // Schema
  // ------------------------------------------------------------------------------------------

  private static final class Schema {
    final List<String> names = new ArrayList<>();
    final List<String> fieldNames = new ArrayList<>();
    final List<TypeInfo> types = new ArrayList<>();

    static Schema from(JsonNode spec) {
      Schema s = new Schema();
      for (JsonNode col : spec.get("columns")) {
        s.names.add(col.get(0).asText());
        s.types.add(TypeInfoUtils.getTypeInfoFromTypeString(col.get(1).asText()));
      }
      JsonNode fn = spec.get("field_names");
      if (fn != null && !fn.isNull()) {
        for (JsonNode f : fn) {
          s.fieldNames.add(f.asText());
        }
        if (s.fieldNames.size() != s.names.size()) {
          throw new IllegalArgumentException("field_names and columns differ in length");
        }
      } else {
        s.fieldNames.addAll(s.names);
      }
      return s;
    }

    int size() {
      return types.size();
    }

    StructTypeInfo rowTypeInfo() {
      return (StructTypeInfo) TypeInfoFactory.getStructTypeInfo(fieldNames, types);
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
  // JSON -> standard Java objects (the representation of the standard Java object inspectors)
  // ------------------------------------------------------------------------------------------

  private static List<Object> eventRow(List<Object> rowId, JsonNode values, Schema schema) {
    List<Object> row = new ArrayList<>(schema.size() + 1);
    row.add(rowId);
    if (values == null || values.isNull()) {
      for (int i = 0; i < schema.size(); i++) {
        row.add(null);
      }
    } else {
      row.addAll(rowValues(values, schema));
    }
    return row;
  }

  private static List<Object> rowValues(JsonNode values, Schema schema) {
    if (!values.isArray() || values.size() != schema.size()) {
      throw new IllegalArgumentException(
          "row has " + values.size() + " values, table has " + schema.size() + " columns: " + values);
    }
    List<Object> out = new ArrayList<>(schema.size());
    for (int i = 0; i < schema.size(); i++) {
      try {
        out.add(toJava(values.get(i), schema.types.get(i)));
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("column " + schema.names.get(i) + " ("
            + schema.types.get(i).getTypeName() + "): " + e.getMessage(), e);
      }
    }
    return out;
  }

  private static List<Object> rowIdList(JsonNode id) {
    if (id == null || !id.isArray() || id.size() != 3) {
      throw new IllegalArgumentException("ROW__ID must be [originalTxn, bucket, rowId]: " + id);
    }
    // RecordIdentifier.StructInfo.oi is a standard struct of (Long, Integer, Long).
    return Arrays.asList(toLong(id.get(0)),
        toInt(id.get(1), Integer.MIN_VALUE, Integer.MAX_VALUE), toLong(id.get(2)));
  }

  private static long toLong(JsonNode n) {
    if (n == null || !n.isIntegralNumber() || !n.canConvertToLong()) {
      throw new IllegalArgumentException("expected a 64-bit integer, got " + n);
    }
    return n.longValue();
  }

  private static int toInt(JsonNode n, long min, long max) {
    long v = toLong(n);
    if (v < min || v > max) {
      throw new IllegalArgumentException("integer out of range [" + min + ", " + max + "]: " + v);
    }
    return (int) v;
  }

  private static String text(JsonNode n) {
    if (!n.isTextual()) {
      throw new IllegalArgumentException("expected a string, got " + n);
    }
    return n.textValue();
  }

  private static Object toJava(JsonNode n, TypeInfo type) {
    if (n == null || n.isNull()) {
      return null;
    }
    switch (type.getCategory()) {
      case PRIMITIVE:
        return toJavaPrimitive(n, (PrimitiveTypeInfo) type);
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
          if (!pair.isArray() || pair.size() != 2) {
            throw new IllegalArgumentException("map entries must be [key, value] pairs: " + pair);
          }
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

  private static Object toJavaPrimitive(JsonNode n, PrimitiveTypeInfo type) {
    switch (type.getPrimitiveCategory()) {
      case BOOLEAN:
        if (!n.isBoolean()) {
          throw new IllegalArgumentException("expected a boolean, got " + n);
        }
        return n.booleanValue();
      case BYTE:
        return (byte) toInt(n, Byte.MIN_VALUE, Byte.MAX_VALUE);
      case SHORT:
        return (short) toInt(n, Short.MIN_VALUE, Short.MAX_VALUE);
      case INT:
        return toInt(n, Integer.MIN_VALUE, Integer.MAX_VALUE);
      case LONG:
        return toLong(n);
      case FLOAT:
        if (!n.isNumber()) {
          throw new IllegalArgumentException("expected a number, got " + n);
        }
        return (float) n.doubleValue();
      case DOUBLE:
        if (!n.isNumber()) {
          throw new IllegalArgumentException("expected a number, got " + n);
        }
        return n.doubleValue();
      case STRING:
        return text(n);
      case VARCHAR:
        return new HiveVarchar(text(n), ((VarcharTypeInfo) type).getLength());
      case CHAR:
        return new HiveChar(text(n), ((CharTypeInfo) type).getLength());
      case DECIMAL: {
        DecimalTypeInfo dt = (DecimalTypeInfo) type;
        String s = n.isTextual() ? n.textValue() : n.asText();
        HiveDecimal d = HiveDecimal.create(new BigDecimal(s));
        HiveDecimal e = d == null ? null : HiveDecimal.enforcePrecisionScale(d, dt.precision(), dt.scale());
        if (e == null) {
          throw new IllegalArgumentException(s + " does not fit " + dt.getTypeName());
        }
        return e;
      }
      case DATE:
        return Date.valueOf(text(n));
      case TIMESTAMP:
        return Timestamp.valueOf(text(n).replace('T', ' '));
      case BINARY:
        return Base64.getDecoder().decode(text(n));
      default:
        throw new IllegalArgumentException("unsupported type " + type.getTypeName());
    }
  }

  // ------------------------------------------------------------------------------------------
  // Hive objects -> JSON
  // ------------------------------------------------------------------------------------------

  private static void emit(JsonGenerator g, Object o, ObjectInspector oi) throws Exception {
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
        // The exact float32 value, widened (what pyarrow / pyorc return for an ORC float).
        g.writeNumber(((Float) v).doubleValue());
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
        g.writeString(v.toString());
        return;
      case TIMESTAMP: {
        // Hive's text form: 'yyyy-MM-dd HH:mm:ss' plus the fraction without trailing zeros.
        String s = v.toString();
        if (s.endsWith(".0")) {
          s = s.substring(0, s.length() - 2);
        }
        g.writeString(s);
        return;
      }
      case BINARY:
        g.writeString(Base64.getEncoder().encodeToString((byte[]) v));
        return;
      default:
        throw new IllegalArgumentException("unsupported type " + poi.getTypeName());
    }
  }
}
