/*
 * Test-only helper (Hive 4.1 only): runs Hive's own Derby schema script on the embedded
 * metastore's database before the first transaction call. Hive 4 dropped TxnDbUtil, and
 * DataNucleus creates only the JDO tables, not TXNS, HIVE_LOCKS, COMPACTION_QUEUE and the rest.
 */
package hivejvm;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

import org.apache.hadoop.conf.Configuration;

final class Schema {

  private Schema() {
  }

  /** Runs each ';'-terminated statement of ``script`` (Derby SQL, '--' comments) once. */
  static void run(Configuration conf, String script) throws Exception {
    String url = conf.get("javax.jdo.option.ConnectionURL");
    String text = new String(Files.readAllBytes(Paths.get(script)), StandardCharsets.UTF_8);
    StringBuilder sql = new StringBuilder();
    try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
      for (String line : text.split("\n")) {
        String l = line.trim();
        if (l.isEmpty() || l.startsWith("--")) {
          continue;
        }
        sql.append(line).append('\n');
        if (l.endsWith(";")) {
          String one = sql.toString().trim();
          one = one.substring(0, one.length() - 1);
          sql.setLength(0);
          try {
            st.execute(one);
          } catch (SQLException e) {
            if (!"X0Y32".equals(e.getSQLState())) {  // already exists: a second run
              throw new SQLException(one + ": " + e.getMessage(), e);
            }
          }
        }
      }
    }
  }
}
