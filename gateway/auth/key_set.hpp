// The keys tokens are verified with: an HMAC secret, a PEM public key, or
// the keys of a JWKS (RFC 7517), loaded at start-up and on SIGHUP.
//
// Thread-safety: a key_set is immutable once loaded; every I/O thread
// holds a shared_ptr to the current one and verifies with it concurrently
// (OpenSSL 3 allows concurrent use of one EVP_PKEY for verification).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/auth/jwt_token.hpp"

typedef struct evp_pkey_st EVP_PKEY;  // NOLINT: OpenSSL's own declaration

namespace fg::auth {

enum class key_type : std::uint8_t { hmac, rsa, ec_p256, ed25519 };

// The type of key an algorithm needs: a token can never make the gateway
// use a key as another type (no HS256 keyed with an RSA public key).
key_type key_type_for(jwt_alg alg) noexcept;

struct verification_key {
  std::string kid;  // empty: none
  key_type type = key_type::hmac;
  std::string secret;                    // hmac
  std::shared_ptr<EVP_PKEY> public_key;  // the others
};

class key_set {
 public:
  // The key for a token: with a kid, the key of that kid, if its type fits
  // the algorithm; without, the first key whose type fits. Null if none.
  [[nodiscard]] const verification_key* find(jwt_alg alg, std::string_view kid) const noexcept;
  [[nodiscard]] const std::vector<verification_key>& keys() const noexcept { return keys_; }
  [[nodiscard]] bool empty() const noexcept { return keys_.empty(); }
  void add(verification_key key) { keys_.push_back(std::move(key)); }
  void add_all(const key_set& other);

 private:
  std::vector<verification_key> keys_;
};

// Parsers of key material; each throws fg::config_error with a one-line
// reason (naming `what`, never the secret) when the material is unusable.
// An HMAC secret: at least 32 bytes (RFC 7518 §3.2: no shorter than the hash).
key_set hmac_key(std::string secret, std::string_view what);
// A SubjectPublicKeyInfo PEM ("BEGIN PUBLIC KEY"): RSA of 2048 bits or
// more, EC P-256 or Ed25519.
key_set pem_key(std::string_view pem, std::string_view what);
// A JWKS: {"keys":[...]} with kty RSA, EC (crv P-256) or OKP (crv
// Ed25519). Keys for encryption ("use":"enc") or of other types are
// skipped; a set left with no key is an error.
key_set jwks_keys(std::string_view json_text, std::string_view what);

// Where the keys come from (the --jwt-*-file options).
struct key_sources {
  std::string secret_file;
  std::string public_key_file;
  std::string jwks_file;
  [[nodiscard]] bool any() const noexcept {
    return !secret_file.empty() || !public_key_file.empty() || !jwks_file.empty();
  }
};

// Reads every configured file and merges their keys. Throws
// fg::config_error naming the option and file on any failure.
std::shared_ptr<const key_set> load_keys(const key_sources& sources);

}  // namespace fg::auth
