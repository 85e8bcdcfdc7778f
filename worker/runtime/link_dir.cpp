#include "worker/runtime/link_dir.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace fg::worker {

std::vector<link_socket> scan_link_dir(const std::string& dir) {
  std::vector<link_socket> found;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto index = parse_link_socket_name(it->path().filename().native());
    if (!index) continue;
    std::error_code type_ec;
    if (!it->is_socket(type_ec)) continue;
    found.push_back({*index, it->path().native()});
  }
  std::sort(found.begin(), found.end(), [](const link_socket& a, const link_socket& b) { return a.index < b.index; });
  return found;
}

}  // namespace fg::worker
