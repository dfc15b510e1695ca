/*
 * Test-only: runs SQL statements with Hive's own engine (the Driver of the Hive 3.1 / 4.1 jars on
 * the classpath, MapReduce in local mode) against a running test metastore, and prints one JSON
 * line per statement: {"sql": ..., "rows": [...]} or {"sql": ..., "error": ...}.
 *
 *   java -cp <classes> HiveSql <file listing the hive jars> <thrift uri> <scratch dir> <sql>...
 *
 * The Hive classes are loaded by a URLClassLoader of their own (over the jars and <classes>):
 * Hive 3.1's SessionState casts its class loader to URLClassLoader, which the JDK's application
 * class loader is not since Java 9 (HIVE-21584, fixed in Hive 4).
 *
 * Used to ask Hive itself how it answers a query over a table this library wrote, e.g. whether
 * EXPLAIN SELECT count(*) is answered from the metastore's statistics or by a scan.
 */
import java.io.File;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.ql.DriverFactory;
import org.apache.hadoop.hive.ql.IDriver;
import org.apache.hadoop.hive.ql.session.SessionState;

public final class HiveSql {

  private HiveSql() {}

  public static void main(String[] args) throws Exception {
    List<URL> urls = new ArrayList<>();
    urls.add(HiveSql.class.getProtectionDomain().getCodeSource().getLocation());
    for (String jar : new String(Files.readAllBytes(Paths.get(args[0])), StandardCharsets.UTF_8)
        .split(File.pathSeparator)) {
      if (!jar.trim().isEmpty()) {
        urls.add(new File(jar.trim()).toURI().toURL());
      }
    }
    URLClassLoader loader = new URLClassLoader(urls.toArray(new URL[0]),
        ClassLoader.getPlatformClassLoader());
    Thread.currentThread().setContextClassLoader(loader);
    Class<?> runner = Class.forName("HiveSql$Runner", true, loader);
    runner.getMethod("run", String[].class).invoke(null,
        (Object) Arrays.copyOfRange(args, 1, args.length));
    System.exit(0);
  }

  /** Loaded by the URLClassLoader above: everything that touches Hive lives here. */
  public static final class Runner {

    private Runner() {}

    public static void run(String[] args) throws Exception {
      String uri = args[0];
      File scratch = new File(args[1]);
      HiveConf conf = new HiveConf();
      conf.set("hive.metastore.uris", uri);
      conf.set("hive.execution.engine", "mr");
      conf.set("mapreduce.framework.name", "local");
      conf.set("hive.support.concurrency", "true");
      conf.set("hive.txn.manager", "org.apache.hadoop.hive.ql.lockmgr.DbTxnManager");
      conf.set("hive.exec.scratchdir", new File(scratch, "hdfs").getAbsolutePath());
      conf.set("hive.exec.local.scratchdir", new File(scratch, "local").getAbsolutePath());
      conf.set("hive.querylog.location", new File(scratch, "querylog").getAbsolutePath());
      conf.set("hive.downloaded.resources.dir", new File(scratch, "resources").getAbsolutePath());
      conf.set("mapreduce.jobtracker.staging.root.dir", new File(scratch, "staging").getAbsolutePath());
      conf.set("hive.exec.dynamic.partition.mode", "nonstrict");
      conf.set("hive.stats.autogather", "true");
      conf.set("hive.stats.column.autogather", "true");
      conf.set("hive.compute.query.using.stats", "true");
      conf.set("hive.security.authorization.enabled", "false");
      conf.set("hive.async.log.enabled", "false");
      conf.set("hive.exec.submitviachild", "false");
      conf.set("hive.exec.mode.local.auto", "false");
      SessionState.start(new SessionState(conf));
      for (int i = 2; i < args.length; i++) {
        String sql = args[i];
        IDriver driver = DriverFactory.newDriver(conf);  // one per statement: a failure stays there
        StringBuilder out = new StringBuilder("{\"sql\": ").append(quote(sql));
        try {
          Object response = driver.run(sql);
          String error = errorOf(response);
          if (error != null) {
            out.append(", \"error\": ").append(quote(error));
          } else {
            List<String> rows = new ArrayList<>();
            List<String> batch = new ArrayList<>();
            while (driver.getResults(batch)) {
              rows.addAll(batch);
              batch.clear();
            }
            out.append(", \"rows\": [");
            for (int r = 0; r < rows.size(); r++) {
              out.append(r == 0 ? "" : ", ").append(quote(rows.get(r)));
            }
            out.append("]");
          }
        } catch (Throwable e) {
          out.append(", \"error\": ").append(quote(String.valueOf(e)));
        }
        System.out.println(out.append("}"));
        System.out.flush();
        driver.close();
      }
      SessionState.get().close();
    }

    /** Hive 3.1 reports failures in the response (code != 0), Hive 4 throws. */
    private static String errorOf(Object response) throws Exception {
      if (response == null) {
        return null;
      }
      Method code;
      try {
        code = response.getClass().getMethod("getResponseCode");
      } catch (NoSuchMethodException e) {
        return null;  // Hive 4: a failure was thrown
      }
      if (((Integer) code.invoke(response)) == 0) {
        return null;
      }
      Method message = response.getClass().getMethod("getErrorMessage");
      return String.valueOf(message.invoke(response));
    }

    private static String quote(String s) {
      StringBuilder b = new StringBuilder("\"");
      for (char c : s.toCharArray()) {
        if (c == '"' || c == '\\') {
          b.append('\\').append(c);
        } else if (c == '\n') {
          b.append("\\n");
        } else if (c == '\t') {
          b.append("\\t");
        } else if (c < 0x20) {
          b.append(String.format("\\u%04x", (int) c));
        } else {
          b.append(c);
        }
      }
      return b.append('"').toString();
    }
  }
}
