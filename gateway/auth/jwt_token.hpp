// A JSON Web Token in compact JWS form (RFC 7519, RFC 7515 §7.1), parsed
// but not verified: `header.payload.signature`, each part base64url.
// A parser only: no key, no clock, no socket; it allocates the decoded
// parts and claims, bounded by the token's size, checked first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/auth/auth_error.hpp"

namespace fg::auth {

// The algorithms framegate verifies (RFC 7518 §3.1, RFC 8037 §3.1).
enum class jwt_alg : std::uint8_t { hs256, hs384, hs512, rs256, es256, eddsa };

struct jwt_claims {
  std::string sub;  // empty: absent
  std::optional<std::string> iss;
  std::vector<std::string> aud;     // a string is read as an array of one
  std::optional<std::int64_t> exp;  // NumericDate, seconds (a fraction is dropped)
  std::optional<std::int64_t> nbf;
  // framegate's own claim: room-name patterns this user may join and
  // publish to. Absent (has_rooms false) means every room.
  bool has_rooms = false;
  std::vector<std::string> rooms;
};

struct jwt_token {
  jwt_alg alg = jwt_alg::hs256;
  std::string kid;                 // empty: absent
  std::string_view signing_input;  // "header.payload" of the text parsed (its lifetime)
  std::string signature;           // decoded
  jwt_claims claims;
};

// Parses `text` into `out`: auth_error::none, too_large (longer than
// `max_bytes`, nothing decoded), malformed or unsupported_algorithm.
auth_error parse_jwt(std::string_view text, std::size_t max_bytes, jwt_token& out);

}  // namespace fg::auth
