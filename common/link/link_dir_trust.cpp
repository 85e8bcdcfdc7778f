#include "common/link/link_dir_trust.hpp"

#include "common/config_error.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fg::link {

std::string default_link_dir() {
  // XDG_RUNTIME_DIR is the user's own 0700 tmpfs directory when a login
  // session made one; otherwise a name of the user's own under /tmp.
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime != nullptr && runtime[0] == '/')
    return std::string(runtime) + "/framegate";
  return "/tmp/framegate-" + std::to_string(::geteuid());
}

std::optional<std::string> untrusted_link_dir(const std::string& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::nullopt;
    return std::string("cannot inspect it: ") + std::strerror(errno);
  }
  if (S_ISLNK(st.st_mode)) return "it is a symbolic link";
  if (!S_ISDIR(st.st_mode)) return "it is not a directory";
  if (st.st_uid != ::geteuid())
    return "it is owned by uid " + std::to_string(st.st_uid) + ", not by this process's uid " +
           std::to_string(::geteuid());
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return std::string("it is writable by its group or others (mode ") + mode + ")";
  }
  return std::nullopt;
}

void prepare_link_dir(const std::string& dir) {
  // Parents the ordinary way; the link directory itself 0700.
  std::error_code ec;
  if (const auto parent = std::filesystem::path(dir).parent_path(); !parent.empty())
    std::filesystem::create_directories(parent, ec);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw config_error("cannot create link directory " + dir + ": " + std::strerror(errno));
  if (const auto why = untrusted_link_dir(dir))
    throw config_error("link directory " + dir + " cannot be trusted: " + *why +
                       " (another local user could stand in for the gateway or a worker); use a private "
                       "directory (--link-dir)");
}

std::optional<uid_t> peer_uid(int fd) {
  struct ucred cred {};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) return std::nullopt;
  return cred.uid;
}

}  // namespace fg::link
