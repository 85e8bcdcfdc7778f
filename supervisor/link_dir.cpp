#include "supervisor/link_dir.hpp"

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

#include <sys/stat.h>

namespace fg::supervisor {

namespace {

std::string runtime_base() {
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  std::error_code ec;
  if (xdg != nullptr && *xdg != '\0' && std::filesystem::is_directory(xdg, ec)) return xdg;
  return "/tmp";
}

}  // namespace

link_dir::link_dir(const std::string& requested) {
  if (requested.empty()) {
    std::string tmpl = runtime_base() + "/framegate-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr)  // mkdtemp creates it with mode 0700
      throw std::system_error(errno, std::generic_category(), "cannot create a link directory in " + runtime_base());
    path_ = buf.data();
    owned_ = true;
    return;
  }
  path_ = requested;
  if (::mkdir(path_.c_str(), 0700) == 0) {
    owned_ = true;
  } else if (errno != EEXIST) {
    throw std::system_error(errno, std::generic_category(), "cannot create link directory " + path_);
  }
}

link_dir::~link_dir() { remove(); }

void link_dir::remove() {
  if (!owned_) return;
  owned_ = false;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);  // best effort: nothing to do about it at exit
}

}  // namespace fg::supervisor
