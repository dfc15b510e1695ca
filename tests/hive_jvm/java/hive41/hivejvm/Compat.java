/*
 * Test-only helper: what differs between Hive 3.1's and Hive 4.1's APIs (this is 4.1.0's side;
 * tests/hive_jvm/java/hive31 has 3.1's). Compiled only against its own version's jars.
 */
package hivejvm;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hive.common.ValidReaderWriteIdList;
import org.apache.hadoop.hive.common.ValidWriteIdList;
import org.apache.hadoop.hive.ql.io.AcidDirectory;
import org.apache.hadoop.hive.ql.io.AcidOutputFormat;
import org.apache.hadoop.hive.ql.io.AcidUtils;
import org.apache.hadoop.hive.ql.io.BucketCodec;
import org.apache.hadoop.hive.shims.HadoopShims;
import org.apache.hive.common.util.Ref;

final class Compat {

  static final String HIVE = "4.1";

  private Compat() {
  }

  /** A ValidReaderWriteIdList from its text (db.table:HWM:minOpen:open,...:aborted,...). */
  static ValidReaderWriteIdList writeIdList(String text) {
    return ValidReaderWriteIdList.fromValue(text);
  }

  /** The metastore's transaction tables (not JDO: DataNucleus does not create them). */
  static void prepareTxnTables(Configuration conf) throws Exception {
    String script = conf.get("hivejvm.schema.script");
    if (script == null) {
      throw new UnsupportedOperationException("Hive 4.1 has no TxnDbUtil: pass Hive's Derby "
          + "schema script as hivejvm.schema.script");
    }
    Schema.run(conf, script);
  }

  static void runSql(org.apache.hadoop.hive.ql.IDriver driver, String sql) throws Exception {
    try {
      driver.run(sql);
    } catch (org.apache.hadoop.hive.ql.processors.CommandProcessorException e) {
      throw new IllegalStateException(sql + ": " + e.getMessage(), e.getCause());
    }
  }

  /** One pass of the compactor's Worker (stop = true: it returns after one compaction). */
  static Object runWorker(org.apache.hadoop.hive.conf.HiveConf conf) throws Exception {
    org.apache.hadoop.hive.ql.txn.compactor.Worker w =
        new org.apache.hadoop.hive.ql.txn.compactor.Worker();
    w.setConf(conf);
    w.init(new java.util.concurrent.atomic.AtomicBoolean(true));
    w.run();
    return null;
  }

  /** BucketCodec.V1.encode of writer ``bucket``, statement ``stmt`` (``maxStmt`` < 0: unset). */
  static int encodeBucket(Configuration conf, int bucket, int stmt, int maxStmt) {
    AcidOutputFormat.Options o = new AcidOutputFormat.Options(conf).bucket(bucket)
        .statementId(stmt);
    if (maxStmt >= 0) {
      o.maxStmtId(maxStmt);
    }
    return BucketCodec.V1.encode(o);
  }

  /** AcidUtils.getAcidState of one directory, as {base, deltas, original_files, obsolete, aborted}. */
  static Map<String, Object> acidState(Path dir, Configuration conf, ValidWriteIdList writeIds)
      throws IOException {
    AcidDirectory state = AcidUtils.getAcidState(dir.getFileSystem(conf), dir, conf, writeIds,
        Ref.from(false), false);
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("base", state.getBaseDirectory() == null ? null : state.getBaseDirectory().toString());
    List<Object> deltas = new ArrayList<>();
    for (AcidUtils.ParsedDelta d : state.getCurrentDirectories()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("path", d.getPath().toString());
      m.put("min", d.getMinWriteId());
      m.put("max", d.getMaxWriteId());
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
    out.put("obsolete", paths(state.getObsolete()));
    out.put("aborted", paths(state.getAbortedDirectories()));
    return out;
  }

  private static List<String> paths(List<Path> ps) {
    List<String> out = new ArrayList<>();
    for (Path p : ps) {
      out.add(p.toString());
    }
    return out;
  }
}
