// Where a handshake carries its token: `Authorization: Bearer` (RFC 6750
// §2.1), else the `token` query parameter (RFC 6750 §2.3; browsers cannot
// set headers on a WebSocket).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fg::auth {

inline constexpr std::string_view token_query_param = "token";

// The token of a request, or nullopt if it carries none. `authorization`
// is the Authorization header's value (empty: no header); a header with
// another scheme (Basic) is not a token. A Bearer header with nothing
// after it is an (empty, malformed) token.
std::optional<std::string_view> find_token(std::string_view authorization, std::string_view query);

// `query` without the `token` parameter, so the credential is not handed on
// to workers (they get the verified user instead).
std::string without_token_param(std::string_view query);

}  // namespace fg::auth
