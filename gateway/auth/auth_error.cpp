#include "gateway/auth/auth_error.hpp"

namespace fg::auth {

std::string_view to_string(auth_error e) noexcept {
  switch (e) {
    case auth_error::none: return "none";
    case auth_error::missing_token: return "missing_token";
    case auth_error::too_large: return "too_large";
    case auth_error::malformed: return "malformed";
    case auth_error::unsupported_algorithm: return "unsupported_algorithm";
    case auth_error::unknown_key: return "unknown_key";
    case auth_error::bad_signature: return "bad_signature";
    case auth_error::expired: return "expired";
    case auth_error::not_yet_valid: return "not_yet_valid";
    case auth_error::wrong_issuer: return "wrong_issuer";
    case auth_error::wrong_audience: return "wrong_audience";
    case auth_error::missing_subject: return "missing_subject";
  }
  return "unknown";
}

std::string_view describe(auth_error e) noexcept {
  switch (e) {
    case auth_error::none: return "token accepted";
    case auth_error::missing_token: return "missing token: send ?token= or Authorization: Bearer";
    case auth_error::too_large: return "token too large";
    case auth_error::malformed: return "malformed token";
    case auth_error::unsupported_algorithm: return "token algorithm not accepted";
    case auth_error::unknown_key: return "no key for this token's algorithm and kid";
    case auth_error::bad_signature: return "token signature does not verify";
    case auth_error::expired: return "token expired";
    case auth_error::not_yet_valid: return "token not yet valid";
    case auth_error::wrong_issuer: return "token issuer not accepted";
    case auth_error::wrong_audience: return "token audience not accepted";
    case auth_error::missing_subject: return "token has no sub";
  }
  return "unknown";
}

}  // namespace fg::auth
