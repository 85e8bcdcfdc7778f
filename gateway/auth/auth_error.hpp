// Why a handshake's token was refused: one named error each, so that the
// 401 body, the metric label and the tests agree on one list.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace fg::auth {

enum class auth_error : std::uint8_t {
  none,
  missing_token,  // a key is configured, the request has no token, and --allow-anonymous is off
  too_large,      // longer than verifier_options::max_token_bytes (checked before anything is decoded)
  malformed,      // not three base64url parts (RFC 7515 §7.1), or a header or claim that is not valid JSON of its type
  unsupported_algorithm,  // "alg" none (RFC 7518 §3.6) or one framegate does not verify, or a "crit" header
  unknown_key,            // no configured key of the algorithm's type (and of the token's "kid", if it has one)
  bad_signature,          // RFC 7515 §5.2 step 8
  expired,                // "exp" plus the leeway is past (RFC 7519 §4.1.4)
  not_yet_valid,          // "nbf" minus the leeway is ahead (RFC 7519 §4.1.5)
  wrong_issuer,           // --jwt-issuer given and "iss" differs (RFC 7519 §4.1.1)
  wrong_audience,         // --jwt-audience given and not in "aud" (RFC 7519 §4.1.3)
  missing_subject,        // no "sub" string: a connection must have a user (RFC 7519 §4.1.2)
};

inline constexpr std::size_t auth_error_count = 12;

// Every refusal reason, in enum order from missing_token: the metric's labels.
inline constexpr std::array<auth_error, auth_error_count - 1> auth_refusals{
    auth_error::missing_token,  auth_error::too_large,
    auth_error::malformed,      auth_error::unsupported_algorithm,
    auth_error::unknown_key,    auth_error::bad_signature,
    auth_error::expired,        auth_error::not_yet_valid,
    auth_error::wrong_issuer,   auth_error::wrong_audience,
    auth_error::missing_subject};

// Index of a refusal (not none) in auth_refusals.
constexpr std::size_t refusal_index(auth_error e) noexcept { return static_cast<std::size_t>(e) - 1; }

// The metric label ("bad_signature").
std::string_view to_string(auth_error e) noexcept;
// The one-line body of the 401 ("token signature does not verify").
std::string_view describe(auth_error e) noexcept;

}  // namespace fg::auth
