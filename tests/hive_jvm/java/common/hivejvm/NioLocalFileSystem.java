/*
 * Test-only helper shared by every Hive test JVM (tests/hive_ref for Hive 2.3, tests/hive_jvm for
 * Hive 3.1 / 4.1): Hadoop's checksummed local file system (so .crc side files still appear, as
 * with Hive on a local FS), with permissions read and set through java.nio instead of forked
 * `ls` / `chmod` commands (about 20 ms per file listed when Hadoop's native library is missing).
 * Installed with fs.file.impl.
 */
package hivejvm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

public final class NioLocalFileSystem extends LocalFileSystem {
  public NioLocalFileSystem() {
    super(new NioRawLocalFileSystem());
  }

  /** RawLocalFileSystem whose statuses carry permission/owner/group read with java.nio. */
  public static final class NioRawLocalFileSystem extends RawLocalFileSystem {
    @Override
    public FileStatus getFileStatus(Path f) throws IOException {
      return withPermissions(super.getFileStatus(f));
    }

    @Override
    public FileStatus getFileLinkStatus(Path f) throws IOException {
      return getFileStatus(f);
    }

    @Override
    public FileStatus[] listStatus(Path f) throws IOException {
      FileStatus[] all = super.listStatus(f);
      if (all == null) {
        return null;
      }
      for (int i = 0; i < all.length; i++) {
        all[i] = withPermissions(all[i]);
      }
      return all;
    }

    @Override
    public void setPermission(Path p, FsPermission permission) throws IOException {
      String sym = permission.toString();
      if (sym.length() > 9) {
        sym = sym.substring(sym.length() - 9);
      }
      Files.setPosixFilePermissions(pathToFile(p).toPath(),
          PosixFilePermissions.fromString(sym.replace('t', 'x').replace('T', '-')));
    }

    private FileStatus withPermissions(FileStatus s) throws IOException {
      java.nio.file.Path p = pathToFile(s.getPath()).toPath();
      PosixFileAttributes a =
          Files.readAttributes(p, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      Set<PosixFilePermission> perms = a.permissions();
      int mode = 0;
      for (PosixFilePermission bit : PosixFilePermission.values()) {
        mode <<= 1;
        if (perms.contains(bit)) {
          mode |= 1;
        }
      }
      return new FileStatus(s.getLen(), s.isDirectory(), s.getReplication(), s.getBlockSize(),
          s.getModificationTime(), s.getAccessTime(), new FsPermission((short) mode),
          a.owner().getName(), a.group().getName(), s.getPath());
    }
  }
}
