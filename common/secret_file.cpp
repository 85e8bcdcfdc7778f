#include "common/secret_file.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/config_error.hpp"

namespace fg {

namespace {

// A token or password is short; anything larger is the wrong file.
constexpr std::size_t max_secret_bytes = 64 * 1024;

class fd_guard {
 public:
  explicit fd_guard(int fd) : fd_(fd) {}
  ~fd_guard() {
    if (fd_ >= 0) ::close(fd_);
  }
  fd_guard(const fd_guard&) = delete;
  fd_guard& operator=(const fd_guard&) = delete;
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::string read_secret_file(const std::string& path, std::string_view option) {
  const std::string what = std::string(option) + ": " + path;
  if (path.empty()) throw config_error(std::string(option) + ": empty file name");
  const fd_guard fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) throw config_error(what + ": cannot read it (" + std::strerror(errno) + ")");
  struct stat st {};
  if (::fstat(fd.get(), &st) == 0 && S_ISDIR(st.st_mode)) throw config_error(what + ": is a directory, not a file");
  std::string secret;
  char chunk[4096];
  while (true) {
    const auto n = ::read(fd.get(), chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw config_error(what + ": cannot read it (" + std::strerror(errno) + ")");
    if (n == 0) break;
    secret.append(chunk, static_cast<std::size_t>(n));
    if (secret.size() > max_secret_bytes)
      throw config_error(what + ": larger than " + std::to_string(max_secret_bytes) + " bytes: not a secret file");
  }
  if (secret.ends_with("\r\n"))
    secret.resize(secret.size() - 2);
  else if (secret.ends_with('\n'))
    secret.pop_back();
  if (secret.empty()) throw config_error(what + ": the file is empty");
  return secret;
}

}  // namespace fg
