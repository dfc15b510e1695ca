/*
 * Test-only: starts a real Hive Metastore 3.1 / 4.1 (HiveMetaStore.main of the version on the
 * classpath) on a Derby database that this class first creates with Hive's own schema script.
 *
 *   java -cp <conf>:<classes>:<hive jars> MetastoreLauncher <jdbc url> <schema script>
 *        [--drop-columns TABLE.COL,...] -- <HiveMetaStore arguments>
 *
 * The schema script is Hive's hive-schema-X.derby.sql (from the Maven Central artifact
 * hive-standalone-metastore-server:4.0.1:bin, see tests/metastore_server/schema.py); it is run by
 * Derby's own script runner (ij), as schematool would run it, only when the database has no
 * VERSION table yet. --drop-columns removes columns the version's own JDO mapping (package.jdo in
 * its jar) no longer has: Maven Central carries no 4.1.0 schema script, and Hive 4.1 dropped a few
 * NOT NULL columns of the column-statistics tables that the 4.0.0 script still creates.
 *
 * Then HiveMetaStore.main runs in this JVM with the given arguments: with
 * hive.compactor.initiator.on / hive.compactor.worker.threads set in hive-site.xml it starts Hive's
 * Initiator, Worker(s), Cleaner and house keeping services itself.
 */
import java.io.ByteArrayOutputStream;
import java.io.FileInputStream;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

public final class MetastoreLauncher {

  private MetastoreLauncher() {}

  public static void main(String[] args) throws Exception {
    int sep = Arrays.asList(args).indexOf("--");
    if (sep < 2) {
      throw new IllegalArgumentException(
          "usage: MetastoreLauncher <jdbc url> <schema script> [--drop-columns T.C,...] -- <args>");
    }
    String url = args[0];
    String script = args[1];
    List<String> drops = new ArrayList<>();
    for (int i = 2; i < sep; i++) {
      if (args[i].equals("--drop-columns") && i + 1 < sep) {
        drops.addAll(Arrays.asList(args[++i].split(",")));
      }
    }
    createSchema(url, script, drops);
    String[] rest = Arrays.copyOfRange(args, sep + 1, args.length);
    Class<?> hms = Class.forName("org.apache.hadoop.hive.metastore.HiveMetaStore");
    Method main = hms.getMethod("main", String[].class);
    main.invoke(null, (Object) rest);
  }

  private static void createSchema(String url, String script, List<String> drops)
      throws Exception {
    Class.forName("org.apache.derby.jdbc.EmbeddedDriver");
    try (Connection conn = DriverManager.getConnection(url)) {
      if (hasTable(conn, "VERSION")) {
        System.out.println("MetastoreLauncher: schema already there");
        return;
      }
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      int errors;
      try (InputStream in = new FileInputStream(script)) {
        Class<?> ij = Class.forName("org.apache.derby.tools.ij");
        Method run = ij.getMethod("runScript", Connection.class, InputStream.class, String.class,
            java.io.OutputStream.class, String.class);
        errors = (Integer) run.invoke(null, conn, in, "UTF-8", out, "UTF-8");
      }
      if (errors != 0) {
        System.out.println(out.toString(StandardCharsets.UTF_8.name()));
        throw new IllegalStateException(errors + " errors running " + script);
      }
      try (Statement st = conn.createStatement()) {
        for (String d : drops) {
          String[] tc = d.trim().split("\\.");
          st.executeUpdate("ALTER TABLE \"APP\".\"" + tc[0] + "\" DROP COLUMN \"" + tc[1] + "\"");
        }
      }
      System.out.println("MetastoreLauncher: created the schema with " + script
          + (drops.isEmpty() ? "" : ", dropped " + drops));
    }
  }

  private static boolean hasTable(Connection conn, String name) throws Exception {
    try (ResultSet rs = conn.getMetaData().getTables(null, "APP", name, null)) {
      return rs.next();
    }
  }
}
