/*
 * Test-only helper: a JVM holding Hive 3.1's or 4.1's jars, driven by the Python tests over a
 * line protocol (tests/hive_jvm/server.py).
 *
 * Each request is one line of JSON on stdin, {"op": "Class.method", "spec": {...}}; the answer is
 * one line on stdout, {"ok": true, "result": ...} or {"ok": false, "error": "<exception chain>"}.
 * "Class.method" names a public static method of a class of this package taking the spec
 * (a JsonNode) and returning something Jackson can write. Everything else the JVM prints
 * (Hive's and Hadoop's logging) goes to stderr, which the Python side sends to a log file.
 * The JVM ends when stdin closes.
 */
package hivejvm;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

public final class Server {

  static final JsonFactory JSON = JsonFactory.builder()
      .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
      .disable(JsonWriteFeature.WRITE_NAN_AS_STRINGS)
      .build();
  static final ObjectMapper MAPPER = new ObjectMapper(JSON);

  private static final Map<String, Method> METHODS = new HashMap<>();

  private Server() {
  }

  public static void main(String[] args) throws Exception {
    Writer out = new OutputStreamWriter(new FileOutputStream(FileDescriptor.out),
        StandardCharsets.UTF_8);
    System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.err), true, "UTF-8"));
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isEmpty()) {
        continue;
      }
      ObjectNode answer = MAPPER.createObjectNode();
      try {
        JsonNode request = MAPPER.readTree(line);
        String op = request.get("op").asText();
        if ("exit".equals(op)) {
          break;
        }
        Object result = method(op).invoke(null, request.path("spec"));
        answer.put("ok", true);
        answer.set("result", result instanceof RawJson
            ? MAPPER.readTree(((RawJson) result).text) : MAPPER.valueToTree(result));
      } catch (Throwable t) {
        Throwable cause = t instanceof InvocationTargetException ? t.getCause() : t;
        cause.printStackTrace();
        answer.put("ok", false);
        answer.put("error", chain(cause));
      }
      out.write(MAPPER.writeValueAsString(answer));
      out.write('\n');
      out.flush();
    }
    out.flush();
    System.exit(0);  // Hive leaves non-daemon threads behind
  }

  /** A result already serialized (large row lists are written with a JsonGenerator). */
  static final class RawJson {
    final String text;

    RawJson(String text) {
      this.text = text;
    }
  }

  private static Method method(String op) throws Exception {
    Method m = METHODS.get(op);
    if (m == null) {
      int dot = op.indexOf('.');
      if (dot < 0) {
        throw new IllegalArgumentException("op must be Class.method: " + op);
      }
      Class<?> c = Class.forName("hivejvm." + op.substring(0, dot));
      m = c.getMethod(op.substring(dot + 1), JsonNode.class);
      METHODS.put(op, m);
    }
    return m;
  }

  static String chain(Throwable t) {
    StringBuilder sb = new StringBuilder();
    int seen = 0;
    while (t != null && seen < 10) {
      if (sb.length() > 0) {
        sb.append(" <- caused by: ");
      }
      sb.append(t);
      if (t.getCause() == t) {
        break;
      }
      t = t.getCause();
      seen++;
    }
    return sb.toString();
  }
}
