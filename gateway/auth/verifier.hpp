// Verifies a handshake's token: signature with the configured keys, then
// the time and audience claims. Pure: no socket, and the clock is the
// caller's (`now_s`), so tests pin time and the gateway passes the wall clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/auth/auth_error.hpp"
#include "gateway/auth/key_set.hpp"

namespace fg::auth {

struct verifier_options {
  std::string issuer;          // empty: "iss" not checked
  std::string audience;        // empty: "aud" not checked
  std::int64_t leeway_s = 30;  // clock skew allowed on exp and nbf
  // Checked before anything is decoded. Tokens ride in a request header
  // block (bounded by --max-header-bytes anyway); real ones are < 2 KiB.
  std::size_t max_token_bytes = 8192;
};

// Who a verified token says the client is.
struct identity {
  std::string user;  // "sub"
  // The "rooms" claim: when restricted, only rooms matching one of
  // rooms_allowed (an empty list: none); when not, every room.
  bool rooms_restricted = false;
  std::vector<std::string> rooms_allowed;
  // "exp" plus the leeway: the connection is closed (4001) once past it.
  std::optional<std::int64_t> valid_until_s;
};

struct verdict {
  auth_error error = auth_error::none;
  identity who;  // when error is none
};

verdict verify_token(std::string_view token, const key_set& keys, const verifier_options& options, std::int64_t now_s);

// Whether `signature` is `alg`'s signature of `input` under `key` (whose
// type the caller matched to alg). Constant-time for HMAC.
bool signature_valid(jwt_alg alg, const verification_key& key, std::string_view input, std::string_view signature);

}  // namespace fg::auth
