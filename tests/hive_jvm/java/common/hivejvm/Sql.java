/*
 * Test-only helper: Hive's own SQL engine in local mode, as Hive's qtests run it: the embedded
 * driver (DriverFactory) over an embedded metastore on Derby (a directory of its own), the
 * DbTxnManager for ACID, MapReduce's LocalJobRunner in this JVM for the jobs, and the compactor's
 * Worker run on demand (one pass) for ALTER TABLE ... COMPACT.
 *
 * Only one engine per JVM (Hive keeps its session and metastore in statics): start it once
 * with a directory, then run statements.
 */
package hivejvm;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.File;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.ql.DriverFactory;
import org.apache.hadoop.hive.ql.IDriver;
import org.apache.hadoop.hive.ql.metadata.Hive;
import org.apache.hadoop.hive.ql.session.SessionState;

public final class Sql {

  private static HiveConf conf;
  private static String warehouse;

  private Sql() {
  }

  /** Spec: dir (the engine's own directory: metastore, warehouse, scratch), conf {k: v}. */
  public static synchronized Object start(JsonNode spec) throws Exception {
    if (conf != null) {
      throw new IllegalStateException("the SQL engine is already started");
    }
    File dir = new File(spec.get("dir").asText()).getAbsoluteFile();
    if (!dir.isDirectory() && !dir.mkdirs()) {
      throw new IllegalStateException("cannot create " + dir);
    }
    HiveConf c = new HiveConf(SessionState.class);
    warehouse = new File(dir, "warehouse").toURI().toString();
    Map<String, String> settings = new LinkedHashMap<>();
    settings.put("javax.jdo.option.ConnectionURL",
        "jdbc:derby:;databaseName=" + new File(dir, "metastore_db") + ";create=true");
    settings.put("datanucleus.schema.autoCreateAll", "true");
    settings.put("hive.metastore.schema.verification", "false");
    settings.put("hive.metastore.uris", "");
    settings.put("hive.metastore.warehouse.dir", warehouse);
    settings.put("metastore.warehouse.dir", warehouse);
    settings.put("hive.metastore.warehouse.external.dir", warehouse);
    settings.put("hive.exec.scratchdir", new File(dir, "scratch").toURI().toString());
    settings.put("hive.exec.local.scratchdir", new File(dir, "local-scratch").getPath());
    settings.put("hive.downloaded.resources.dir", new File(dir, "resources").getPath());
    settings.put("hive.querylog.location", new File(dir, "querylog").getPath());
    settings.put("hive.server2.logging.operation.log.location", new File(dir, "oplog").getPath());
    settings.put("mapreduce.jobtracker.staging.root.dir", new File(dir, "staging").getPath());
    settings.put("yarn.app.mapreduce.am.staging-dir", new File(dir, "staging").getPath());
    settings.put("mapreduce.cluster.local.dir", new File(dir, "mr-local").getPath());
    settings.put("hadoop.tmp.dir", new File(dir, "hadoop-tmp").getPath());
    // ACID: the transaction manager, no background compactor (the tests run it when they ask)
    settings.put("hive.support.concurrency", "true");
    settings.put("hive.txn.manager", "org.apache.hadoop.hive.ql.lockmgr.DbTxnManager");
    settings.put("hive.exec.dynamic.partition.mode", "nonstrict");
    settings.put("hive.compactor.initiator.on", "false");
    settings.put("hive.compactor.worker.threads", "0");
    settings.put("hive.compactor.cleaner.on", "false");
    // MapReduce in this JVM (what a qtest uses), nothing else
    settings.put("hive.execution.engine", "mr");
    settings.put("mapreduce.framework.name", "local");
    settings.put("mapreduce.jobtracker.address", "local");
    settings.put("hive.exec.mode.local.auto", "false");
    settings.put("hive.exec.submitviachild", "false");
    settings.put("hive.exec.submit.local.task.via.child", "false");
    // MR's map-join local task cannot project ROW__ID (MERGE: "cannot find field row__id")
    settings.put("hive.auto.convert.join", "false");
    settings.put("hive.stats.autogather", "false");
    settings.put("hive.stats.column.autogather", "false");
    settings.put("hive.metastore.client.capability.check", "false");
    // Hive 4's metastore turns a managed table that is not transactional into an external one,
    // which can never become transactional: the tests convert such a table (original files)
    settings.put("metastore.metadata.transformer.class", " ");
    settings.put("hive.in.test", "true");
    settings.put("fs.file.impl", NioLocalFileSystem.class.getName());
    settings.put("fs.file.impl.disable.cache", "true");
    settings.put("hive.txn.acid.dir.cache.duration", "-1");
    settings.put("hive.orc.cache.stripe.details.mem.size", "0");
    for (Map.Entry<String, String> e : settings.entrySet()) {
      c.set(e.getKey(), e.getValue());
    }
    java.util.Iterator<Map.Entry<String, JsonNode>> it = spec.path("conf").fields();
    while (it.hasNext()) {
      Map.Entry<String, JsonNode> e = it.next();
      c.set(e.getKey(), e.getValue().asText());
    }
    Compat.prepareTxnTables(c);
    SessionState.start(new SessionState(c));
    conf = c;
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("warehouse", warehouse);
    return out;
  }

  /**
   * Spec: statements [sql...]. Runs each in turn; returns one entry per statement: the rows of
   * a query as Hive prints them (tab-separated text), [] otherwise.
   */
  public static synchronized Object run(JsonNode spec) throws Exception {
    requireStarted();
    List<Object> out = new ArrayList<>();
    for (JsonNode s : spec.get("statements")) {
      IDriver driver = DriverFactory.newDriver(conf);
      try {
        Compat.runSql(driver, s.asText());
        List<String> rows = new ArrayList<>();
        List<String> batch = new ArrayList<>();
        while (driver.getResults(batch)) {
          rows.addAll(batch);
          batch.clear();
        }
        out.add(rows);
      } finally {
        driver.close();
        driver.destroy();
      }
    }
    return out;
  }

  /** Spec: table (db.table). The table's ValidWriteIdList now, from the metastore. */
  public static synchronized Object writeIds(JsonNode spec) throws Exception {
    requireStarted();
    return Hive.get(conf).getMSC().getValidWriteIds(spec.get("table").asText()).toString();
  }

  /** Runs the compactor's Worker once (one queued compaction); returns whether it ran one. */
  public static synchronized Object worker(JsonNode spec) throws Exception {
    requireStarted();
    return Compat.runWorker(conf);
  }

  private static void requireStarted() {
    if (conf == null) {
      throw new IllegalStateException("start the SQL engine first (Sql.start)");
    }
  }
}
