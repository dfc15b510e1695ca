package hdfscluster;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.server.datanode.DataNode;

/**
 * A real HDFS for the storage tests: Hadoop's MiniDFSCluster (one NameNode, N DataNodes, WebHDFS
 * on) bound to 127.0.0.1, run until killed or until its standard input closes (the test process
 * that started it is gone).
 *
 * <p>Usage: {@code MiniHdfs <baseDir> <rpcPort|0> <httpPort|0> <dataNodes> <blockSize>}. When the
 * cluster is up it writes {@code <baseDir>/ready.json} (renamed into place, so it is never read
 * half-written): the NameNode's RPC and HTTP ports and each DataNode's HTTP port.
 */
public final class MiniHdfs {
    private static boolean stopped;

    private MiniHdfs() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: MiniHdfs <baseDir> <rpcPort> <httpPort> <dataNodes> <blockSize>");
            System.exit(2);
        }
        File base = new File(args[0]).getAbsoluteFile();
        int rpcPort = Integer.parseInt(args[1]);
        int httpPort = Integer.parseInt(args[2]);
        int dataNodes = Integer.parseInt(args[3]);
        long blockSize = Long.parseLong(args[4]);

        Configuration conf = new HdfsConfiguration();
        conf.set("hadoop.tmp.dir", new File(base, "tmp").getPath());
        conf.setBoolean("dfs.webhdfs.enabled", true);
        conf.setInt("dfs.replication", Math.min(dataNodes, 3));
        conf.setLong("dfs.blocksize", blockSize);
        // small blocks on purpose (files of several blocks); the NameNode refuses less than 1 MiB
        conf.setLong("dfs.namenode.fs-limits.min-block-size", Math.min(blockSize, 1024 * 1024));
        conf.setInt("dfs.namenode.handler.count", 8);
        conf.setInt("dfs.datanode.handler.count", 4);
        // extra settings: -Dminihdfs.conf.KEY=VALUE
        for (String name : System.getProperties().stringPropertyNames()) {
            if (name.startsWith("minihdfs.conf.")) {
                conf.set(name.substring("minihdfs.conf.".length()), System.getProperty(name));
            }
        }
        // the DataNode redirects WebHDFS clients to itself by this name
        conf.set("dfs.datanode.hostname", "127.0.0.1");

        MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf, base)
                .nameNodePort(rpcPort)
                .nameNodeHttpPort(httpPort)
                .numDataNodes(dataNodes)
                .format(true)
                .build();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(cluster), "minihdfs-shutdown"));
        cluster.waitActive();
        cluster.getFileSystem().setPermission(new org.apache.hadoop.fs.Path("/"),
                new org.apache.hadoop.fs.permission.FsPermission((short) 0777));

        StringBuilder dns = new StringBuilder();
        for (DataNode dn : cluster.getDataNodes()) {
            dns.append(dns.length() == 0 ? "" : ", ").append(dn.getInfoPort());
        }
        String json = String.format(
                "{\"rpcPort\": %d, \"httpPort\": %d, \"dataNodeHttpPorts\": [%s], \"user\": \"%s\"}%n",
                cluster.getNameNodePort(), cluster.getNameNode().getHttpAddress().getPort(), dns,
                System.getProperty("user.name"));
        writeAtomically(new File(base, "ready.json"), json);
        System.out.println("MiniHdfs ready " + json.trim());
        System.out.flush();

        // Run until killed, or until the parent closes our standard input.
        InputStream in = System.in;
        byte[] buf = new byte[256];
        try {
            while (in.read(buf) >= 0) {
                // ignore input
            }
        } catch (IOException e) {
            // stdin gone: stop
        }
        stop(cluster);
        System.exit(0);
    }

    private static synchronized void stop(MiniDFSCluster cluster) {
        if (stopped) {
            return;
        }
        stopped = true;
        try {
            cluster.shutdown();
        } catch (Throwable e) {  // stopping anyway (SIGTERM during start-up, JVM exiting)
            System.err.println("MiniHdfs shutdown: " + e);
        }
    }

    private static void writeAtomically(File target, String text) throws IOException {
        File tmp = new File(target.getPath() + ".tmp");
        try (Writer w = new OutputStreamWriter(new FileOutputStream(tmp), StandardCharsets.UTF_8)) {
            w.write(text);
        }
        Files.move(tmp.toPath(), target.toPath(), StandardCopyOption.ATOMIC_MOVE);
    }
}
