/*
 * Test-only: lets the test metastore (Hive Metastore 2.3.10 from the pyspark jars) hold Hive 3's
 * insert-only transactional tables, which it predates.
 *
 * Hive 2.3's metastore always installs org.apache.hadoop.hive.metastore.TransactionalValidationListener
 * as its first pre-event listener (HMSHandler.init), and that listener refuses
 * transactional_properties=insert_only ("unknown value insert_only for transactional_properties")
 * and any transactional table that is not bucketed ORC. This class takes its place on the server's
 * classpath (put before the pyspark jars, see tests/metastore_server/server.py):
 *
 *   - a table whose parameters say transactional=true and transactional_properties=insert_only is
 *     checked by Hive 3's rules for insert-only tables (managed, any storage format, any
 *     bucketing; the properties cannot be changed once the table is transactional);
 *   - every other event goes to the genuine Hive 2.3 listener, loaded from the hive-metastore jar
 *     by a class loader of its own, so everything else behaves exactly as in Hive 2.3.
 *
 * Compiled at test time with javac -cp '<pyspark>/jars/*'.
 */
package org.apache.hadoop.hive.metastore;

import java.net.URL;
import java.net.URLClassLoader;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.metastore.api.InvalidOperationException;
import org.apache.hadoop.hive.metastore.api.MetaException;
import org.apache.hadoop.hive.metastore.api.NoSuchObjectException;
import org.apache.hadoop.hive.metastore.api.Table;
import org.apache.hadoop.hive.metastore.events.PreAlterTableEvent;
import org.apache.hadoop.hive.metastore.events.PreCreateTableEvent;
import org.apache.hadoop.hive.metastore.events.PreEventContext;

public final class TransactionalValidationListener extends MetaStorePreEventListener {

  private static final String NAME = TransactionalValidationListener.class.getName();
  private final MetaStorePreEventListener genuine;

  public TransactionalValidationListener(Configuration conf) {
    super(conf);
    this.genuine = loadGenuine(conf);
  }

  /** Hive 2.3's own listener, from the jar that holds the metastore classes. */
  private static MetaStorePreEventListener loadGenuine(Configuration conf) {
    URL jar = MetaStorePreEventListener.class.getProtectionDomain().getCodeSource().getLocation();
    ClassLoader parent = TransactionalValidationListener.class.getClassLoader();
    ClassLoader own = new URLClassLoader(new URL[] {jar}, parent) {
      @Override
      protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        if (!name.startsWith(NAME)) {
          return super.loadClass(name, resolve);  // everything else: the server's classes
        }
        synchronized (getClassLoadingLock(name)) {
          Class<?> c = findLoadedClass(name);
          if (c == null) {
            c = findClass(name);  // this name (and its inner classes) from the jar itself
          }
          if (resolve) {
            resolveClass(c);
          }
          return c;
        }
      }
    };
    try {
      java.lang.reflect.Constructor<?> make =
          own.loadClass(NAME).getDeclaredConstructor(Configuration.class);  // package-private
      make.setAccessible(true);
      return (MetaStorePreEventListener) make.newInstance(conf);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot load Hive's own " + NAME + " from " + jar, e);
    }
  }

  @Override
  public void onEvent(PreEventContext context)
      throws MetaException, NoSuchObjectException, InvalidOperationException {
    if (context instanceof PreCreateTableEvent) {
      Table t = ((PreCreateTableEvent) context).getTable();
      if (isInsertOnly(t)) {
        checkManaged(t);
        return;
      }
    } else if (context instanceof PreAlterTableEvent) {
      PreAlterTableEvent alter = (PreAlterTableEvent) context;
      if (isInsertOnly(alter.getNewTable())) {
        checkManaged(alter.getNewTable());
        Table old = alter.getOldTable();
        if (isTrue(get(old.getParameters(), "transactional")) && !isInsertOnly(old)) {
          throw new MetaException(
              "TBLPROPERTIES with 'transactional_properties' cannot be altered after the table is created");
        }
        return;
      }
    }
    genuine.onEvent(context);
  }

  private static void checkManaged(Table t) throws MetaException {
    if ("EXTERNAL_TABLE".equals(t.getTableType())) {
      throw new MetaException(t.getDbName() + "." + t.getTableName()
          + " cannot be declared transactional because it's an external table");
    }
  }

  private static boolean isInsertOnly(Table t) {
    Map<String, String> p = t == null ? null : t.getParameters();
    return isTrue(get(p, "transactional"))
        && "insert_only".equalsIgnoreCase(get(p, "transactional_properties"));
  }

  private static boolean isTrue(String v) {
    return v != null && "true".equalsIgnoreCase(v.trim());
  }

  /** A parameter by name, ignoring the key's case (as Hive's listener does). */
  private static String get(Map<String, String> params, String key) {
    if (params == null) {
      return null;
    }
    for (Map.Entry<String, String> e : params.entrySet()) {
      if (key.equalsIgnoreCase(e.getKey())) {
        return e.getValue();
      }
    }
    return null;
  }
}
