// The Authorization check of the publish API (RFC 6750 §2.1:
// "Authorization: Bearer <token>").
#pragma once

#include <string_view>

namespace fg::gateway::admin {

// True when `authorization` (the header's value, possibly empty) carries
// exactly `token`. The comparison takes the same time whatever the
// position of the first differing byte, so timing reveals nothing of the
// token but its length.
bool bearer_matches(std::string_view authorization, std::string_view token) noexcept;

}  // namespace fg::gateway::admin
