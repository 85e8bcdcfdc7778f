#include "worker/apps/room_permissions.hpp"

namespace fg::worker {

bool room_allowed(const connection_info& info, std::string_view room) noexcept {
  if (!info.rooms_restricted) return true;
  for (const std::string_view pattern : info.rooms_allowed) {
    if (pattern.ends_with('*') ? room.starts_with(pattern.substr(0, pattern.size() - 1)) : room == pattern) return true;
  }
  return false;
}

}  // namespace fg::worker
