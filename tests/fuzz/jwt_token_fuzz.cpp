// Fuzzes the handshake token parser and verifier (bytes from any client,
// before it has proved anything): never a crash, and what is accepted is
// consistent: the signing input is the text's first two parts, each part
// decodes strictly (its one encoding re-encodes to itself), and a token no
// key signed is never verified.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gateway/auth/base64url.hpp"
#include "gateway/auth/jwt_token.hpp"
#include "gateway/auth/verifier.hpp"
#include "tests/fuzz/check.hpp"

using fg::fuzz::check;
namespace auth = fg::auth;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  constexpr std::size_t max_bytes = 8192;

  // Strict base64url: whatever decodes has exactly this encoding.
  std::string decoded;
  if (auth::base64url_decode(text, decoded)) check(auth::base64url_encode(decoded) == text);

  auth::jwt_token t;
  const auto e = auth::parse_jwt(text, max_bytes, t);
  if (size > max_bytes) check(e == auth::auth_error::too_large);
  if (e == auth::auth_error::none) {
    check(text.substr(0, t.signing_input.size()) == t.signing_input);
    check(text.size() > t.signing_input.size() && text[t.signing_input.size()] == '.');
    check(auth::base64url_encode(t.signature) == text.substr(t.signing_input.size() + 1));
    check(!t.signature.empty());
  } else {
    check(e == auth::auth_error::too_large || e == auth::auth_error::malformed ||
          e == auth::auth_error::unsupported_algorithm);
  }

  // A key the fuzzer does not know: nothing it writes may verify.
  static const auto keys = auth::hmac_key(std::string(32, 'k'), "fuzz");
  const auto v = auth::verify_token(text, keys, {}, 1'700'000'000);
  check(v.error != auth::auth_error::none);
  if (e != auth::auth_error::none) check(v.error == e);
  return 0;
}
