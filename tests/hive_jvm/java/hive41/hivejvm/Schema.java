/*
 * Test-only helper (Hive 4.1 only): Hive's own Derby schema script run on the embedded
 * metastore's database before the SQL engine starts. Hive 4 has no TxnDbUtil, and DataNucleus
 * creates only the JDO tables, not TXNS, HIVE_LOCKS, COMPACTION_QUEUE and the rest. The script
 * runs with Derby's own runner (ij), as Hive's schematool runs it; then the columns Hive 4.1's
 * JDO mapping no longer has are dropped (tests/hive_jvm/sql.py says which, and why).
 */
package hivejvm;

import java.io.ByteArrayOutputStream;
import java.io.FileInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;

import org.apache.derby.tools.ij;
import org.apache.hadoop.conf.Configuration;

final class Schema {

  private Schema() {
  }

  static void run(Configuration conf, String script) throws Exception {
    String url = conf.get("javax.jdo.option.ConnectionURL");
    try (Connection c = DriverManager.getConnection(url)) {
      try (ResultSet rs = c.getMetaData().getTables(null, "APP", "VERSION", null)) {
        if (rs.next()) {
          return;  // created before
        }
      }
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      int errors;
      try (InputStream in = new FileInputStream(script)) {
        errors = ij.runScript(c, in, "UTF-8", out, "UTF-8");
      }
      if (errors != 0) {
        throw new IllegalStateException(errors + " errors running " + script + ":\n"
            + out.toString(StandardCharsets.UTF_8.name()));
      }
      try (Statement st = c.createStatement()) {
        for (String d : conf.getTrimmedStrings("hivejvm.schema.drop.columns")) {
          String[] tc = d.split("\\.");
          st.executeUpdate("ALTER TABLE \"APP\".\"" + tc[0] + "\" DROP COLUMN \"" + tc[1] + "\"");
        }
      }
    }
  }
}
