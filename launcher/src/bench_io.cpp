#include "bench_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

#include "meshloom/error.hpp"

namespace meshloom::launcher {

namespace {

[[noreturn]] void io_fail(const std::string& what, const std::filesystem::path& path, int err) {
  raise(ErrorKind::RuntimeError, what + " \"" + path.string() + "\": " + std::strerror(err));
}

// Writes all of `data`; false (errno set) on failure.
bool write_all(int fd, const char* data, std::size_t size) noexcept {
  std::size_t written = 0;
  while (written < size) {
    const ssize_t n = ::write(fd, data + written, size - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    written += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

JsonlSink::JsonlSink(const std::filesystem::path& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) io_fail("cannot open the JSON Lines file", path, errno);
}

JsonlSink::~JsonlSink() {
  if (fd_ >= 0) ::close(fd_);
}

JsonlSink::JsonlSink(JsonlSink&& other) noexcept : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

JsonlSink& JsonlSink::operator=(JsonlSink&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

void JsonlSink::write(const std::string& record) {
  if (fd_ < 0) return;
  const std::string line = record + "\n";
  if (!write_all(fd_, line.data(), line.size())) io_fail("cannot write the JSON Lines file", path_, errno);
  if (::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS) io_fail("cannot flush the JSON Lines file", path_, errno);
}

bool JsonlSink::append(const std::filesystem::path& path, const std::string& record) noexcept {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  std::string line;
  try {
    line = record + "\n";
  } catch (...) {
    ::close(fd);
    return false;
  }
  bool ok = write_all(fd, line.data(), line.size());
  ok = ::fsync(fd) == 0 && ok;
  ok = ::close(fd) == 0 && ok;
  return ok;
}

void write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  namespace fs = std::filesystem;
  fs::path target = path;
  std::error_code ec;
  if (fs::is_symlink(path, ec)) {
    target = fs::weakly_canonical(path, ec);
    if (ec) raise(ErrorKind::RuntimeError, "cannot write \"" + path.string() + "\": " + ec.message());
  }
  if (target.filename().empty()) raise(ErrorKind::RuntimeError, "cannot write \"" + path.string() + "\": no file name");
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";

  mode_t mode = 0644;
  struct stat old {};
  if (::stat(target.c_str(), &old) == 0) mode = old.st_mode & 07777;

  std::string temp = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) io_fail("cannot create a temporary file for", path, errno);
  auto fail = [&](const std::string& step, int err) {
    ::close(fd);
    ::unlink(temp.c_str());
    io_fail(step, path, err);
  };
  if (::fchmod(fd, mode) != 0) fail("cannot set the mode of the temporary file for", errno);
  if (!write_all(fd, text.data(), text.size())) fail("cannot write the temporary file for", errno);
  if (::fsync(fd) != 0) fail("cannot flush the temporary file for", errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    io_fail("cannot close the temporary file for", path, err);
  }
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    io_fail("cannot replace", path, err);
  }
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

}  // namespace meshloom::launcher
