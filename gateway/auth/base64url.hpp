// base64url without padding (RFC 4648 §5, as JWS uses it: RFC 7515 §2).
#pragma once

#include <string>
#include <string_view>

namespace fg::auth {

// Decodes `in` into `out` (replacing it). Strict: only the 64 URL-safe
// characters, no '=' padding, no whitespace, a length that is not 1 mod 4,
// and the unused low bits of the last character zero (RFC 4648 §3.5), so
// that every byte string has exactly one accepted encoding.
bool base64url_decode(std::string_view in, std::string& out);

// The unpadded encoding (tests and tools make tokens with it).
std::string base64url_encode(std::string_view in);

}  // namespace fg::auth
