/*
 * Test-only helper: what differs between Hive 3.1's and Hive 4.1's APIs (this is 3.1.3's side;
 * tests/hive_jvm/java/hive41 has 4.1's). Compiled only against its own version's jars.
 */
package hivejvm;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hive.common.ValidReaderWriteIdList;
import org.apache.hadoop.hive.common.ValidWriteIdList;
import org.apache.hadoop.hive.ql.io.AcidOutputFormat;
import org.apache.hadoop.hive.ql.io.AcidUtils;
import org.apache.hadoop.hive.ql.io.BucketCodec;
import org.apache.hadoop.hive.shims.HadoopShims;

final class Compat {

  static final String HIVE = "3.1";

  private Compat() {
  }

  /** A ValidReaderWriteIdList from its text (db.table:HWM:minOpen:open,...:aborted,...). */
  static ValidReaderWriteIdList writeIdList(String text) {
    return new ValidReaderWriteIdList(text);
  }

  /** The metastore's transaction tables (not JDO: DataNucleus does not create them). */
  static void prepareTxnTables(Configuration conf) throws Exception {
    org.apache.hadoop.hive.metastore.txn.TxnDbUtil.prepDb(conf);
  }

  static void runSql(org.apache.hadoop.hive.ql.IDriver driver, String sql) {
    org.apache.hadoop.hive.ql.processors.CommandProcessorResponse r = driver.run(sql);
    if (r.getResponseCode() != 0) {
      throw new IllegalStateException(sql + ": " + r.getErrorMessage(), r.getException());
    }
  }

  /** One pass of the compactor's Worker (stop = true: it returns after one compaction). */
  static Object runWorker(org.apache.hadoop.hive.conf.HiveConf conf) throws Exception {
    org.apache.hadoop.hive.ql.txn.compactor.Worker w =
        new org.apache.hadoop.hive.ql.txn.compactor.Worker();
    w.setThreadId(1);
    w.setConf(conf);
    w.init(new java.util.concurrent.atomic.AtomicBoolean(true),
        new java.util.concurrent.atomic.AtomicBoolean());
    w.run();
    return null;
  }

  /** BucketCodec.V1.encode of writer ``bucket``, statement ``stmt`` (``maxStmt`` < 0: unset). */
  static int encodeBucket(Configuration conf, int bucket, int stmt, int maxStmt) {
    if (maxStmt >= 0) {
      throw new IllegalArgumentException("Hive 3.1 has no max statement id (HIVE-24715 is 4.x)");
    }
    return BucketCodec.V1.encode(new AcidOutputFormat.Options(conf).bucket(bucket)
        .statementId(stmt));
  }

  /** AcidUtils.getAcidState of one directory, as {base, deltas, original_files, obsolete, aborted}. */
  static Map<String, Object> acidState(Path dir, Configuration conf, ValidWriteIdList writeIds)
      throws IOException {
    AcidUtils.Directory state = AcidUtils.getAcidState(dir, conf, writeIds);
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

  private static List<String> paths(List<FileStatus> statuses) {
    List<String> out = new ArrayList<>();
    for (FileStatus s : statuses) {
      out.add(s.getPath().toString());
    }
    return out;
  }
}
