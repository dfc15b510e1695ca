/*
 * Test-only helper: the system class loader of the Hive 3.1 / 4.1 test JVMs
 * (java -Djava.system.class.loader=hivejvm.boot.HiveLoader, tests/hive_jvm/server.py).
 *
 * Hive 3.1 was written for Java 8, and two of its assumptions break on the Java 17 here:
 *
 * 1. The system class loader is a URLClassLoader (Hive 3.1 casts it, e.g. to add a session's
 *    jars). This loader is one: it loads Hive's jars and our helpers, which
 *    -Dhivejvm.classpath lists, itself (only this class is on -cp).
 * 2. Kryo, which Hive uses for every query plan, cannot be created: Hive 3.1.3's
 *    SerializationUtilities.ArrayListSubListSerializer looks up the fields "parent" and
 *    "parentOffset" of java.util.ArrayList$SubList, which Java 9 turned into "root" (the list)
 *    and "offset". Hive fixed this itself later (Hive 4's serializer tries the Java 8 names,
 *    then "root" and "offset"). When this loader defines that one class and finds the Java 8
 *    names in it (and not the new ones), it renames the two looked-up fields in the class's
 *    constant pool: the same effect as Hive's own fix, without copying any of Hive's code.
 *
 * Nothing else is changed; Hive 4.1 (built for Java 17) runs here unpatched.
 */
package hivejvm.boot;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

public final class HiveLoader extends URLClassLoader {

  static {
    ClassLoader.registerAsParallelCapable();
  }

  static final String SUBLIST_SERIALIZER =
      "org.apache.hadoop.hive.ql.exec.SerializationUtilities$ArrayListSubListSerializer";
  /** Java 8's field names -> Java 9's, each a whole CONSTANT_Utf8 entry. */
  private static final byte[][][] RENAMES = {
      {utf8Constant("parentOffset"), utf8Constant("offset")},
      {utf8Constant("parent"), utf8Constant("root")}};

  /** The number of classes patched (0 or 1), for the server's ping. */
  public static volatile int patched;

  public HiveLoader(ClassLoader parent) {
    super(urls(System.getProperty("hivejvm.classpath", "")), parent);
  }

  private static URL[] urls(String classpath) {
    List<URL> out = new ArrayList<>();
    for (String p : classpath.split(File.pathSeparator)) {
      if (!p.isEmpty()) {
        try {
          out.add(new File(p).toURI().toURL());
        } catch (MalformedURLException e) {
          throw new IllegalArgumentException(p, e);
        }
      }
    }
    return out.toArray(new URL[0]);
  }

  /** Java's launcher appends an agent's or -cp's entries through this when it is present. */
  void appendToClassPathForInstrumentation(String path) throws MalformedURLException {
    addURL(new File(path).toURI().toURL());
  }

  @Override
  protected Class<?> findClass(String name) throws ClassNotFoundException {
    if (!SUBLIST_SERIALIZER.equals(name)) {
      return super.findClass(name);
    }
    String resource = name.replace('.', '/') + ".class";
    URL url = findResource(resource);
    if (url == null) {
      throw new ClassNotFoundException(name);
    }
    byte[] bytes;
    try (InputStream in = url.openStream()) {
      ByteArrayOutputStream buf = new ByteArrayOutputStream();
      in.transferTo(buf);
      bytes = buf.toByteArray();
    } catch (IOException e) {
      throw new ClassNotFoundException(name, e);
    }
    if (indexOf(bytes, RENAMES[0][0]) >= 0 && indexOf(bytes, RENAMES[0][1]) < 0) {
      for (byte[][] r : RENAMES) {
        if (indexOf(bytes, r[0]) < 0) {
          throw new ClassNotFoundException(name + ": no constant " + new String(r[0], 3,
              r[0].length - 3, StandardCharsets.US_ASCII) + " to rename");
        }
        bytes = replaceOnce(bytes, r[0], r[1]);
      }
      patched++;
    }
    return defineClass(name, bytes, 0, bytes.length);
  }

  /** A CONSTANT_Utf8 entry: tag 1, a 2-byte length, the (ASCII) bytes. */
  private static byte[] utf8Constant(String s) {
    byte[] text = s.getBytes(StandardCharsets.US_ASCII);
    byte[] out = new byte[text.length + 3];
    out[0] = 1;
    out[1] = (byte) (text.length >> 8);
    out[2] = (byte) text.length;
    System.arraycopy(text, 0, out, 3, text.length);
    return out;
  }

  private static int indexOf(byte[] hay, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= hay.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (hay[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }

  /** Constants are referred to by index, never by byte offset: an entry may change length. */
  private static byte[] replaceOnce(byte[] bytes, byte[] old, byte[] by) {
    int at = indexOf(bytes, old);
    byte[] out = new byte[bytes.length - old.length + by.length];
    System.arraycopy(bytes, 0, out, 0, at);
    System.arraycopy(by, 0, out, at, by.length);
    System.arraycopy(bytes, at + old.length, out, at + by.length, bytes.length - at - old.length);
    return out;
  }
}
