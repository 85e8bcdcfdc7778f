// Which rooms a connection may join or publish to: the `rooms` claim of its
// token (docs/AUTH.md), as the gateway forwarded it in connection_info.
// Without the claim every room is allowed; with it, a room must equal one
// of its patterns or start with a pattern's text before a final '*'.
#pragma once

#include <string_view>

#include "worker/app.hpp"

namespace fg::worker {

bool room_allowed(const connection_info& info, std::string_view room) noexcept;

}  // namespace fg::worker
