#include "meshloom/io/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

#include "json_read.hpp"

namespace meshloom {

void write_file_atomically(const std::filesystem::path& path, std::string_view content, std::string_view what_text) {
  namespace fs = std::filesystem;
  using detail::io_error;
  using detail::quote_path;
  const std::string what(what_text);

  // The file a chain of symbolic links ends at, followed link by link: a link whose target does not exist yet (a
  // dangling one) is written through, creating its target, as `echo > link` does, rather than replaced.
  fs::path target = path;
  std::error_code ec;
  for (int hops = 0; fs::is_symlink(target, ec); ++hops) {
    if (hops == 40) io_error(what, path, "cannot resolve the symbolic link: too many levels of symbolic links", 0);
    const fs::path next = fs::read_symlink(target, ec);
    if (ec) io_error(what, path, "cannot resolve the symbolic link: " + ec.message(), 0);
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  if (target.filename().empty()) io_error(what, path, "the path names no file", 0);
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";

  // Keep the mode of the file being replaced; a new file gets rw-r--r--.
  mode_t mode = 0644;
  struct stat old {};
  if (::stat(target.c_str(), &old) == 0) mode = old.st_mode & 07777;

  std::string temp = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) io_error(what, path, "cannot create a temporary file in " + quote_path(dir) + ": ", errno);

  auto fail = [&](const std::string& step, int err) {
    ::unlink(temp.c_str());
    io_error(what, path, step + ": ", err);
  };
  if (::fchmod(fd, mode) != 0) {
    const int err = errno;
    ::close(fd);
    fail("cannot set the mode of the temporary file", err);
  }
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      fail("cannot write the temporary file", err);
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    fail("cannot flush the temporary file", err);
  }
  if (::close(fd) != 0) fail("cannot close the temporary file", errno);
  if (::rename(temp.c_str(), target.c_str()) != 0) fail("cannot replace the file", errno);

  // Make the rename itself durable; a directory that cannot be synced is not an error.
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

}  // namespace meshloom
