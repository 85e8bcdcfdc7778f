#include "gateway/auth/verifier.hpp"

#include <algorithm>
#include <memory>

#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace fg::auth {

namespace {

const unsigned char* bytes(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }

bool hmac_valid(const EVP_MD* md, const std::string& secret, std::string_view input, std::string_view signature) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (HMAC(md, secret.data(), static_cast<int>(secret.size()), bytes(input), input.size(), mac, &len) == nullptr)
    return false;
  return signature.size() == len && CRYPTO_memcmp(mac, signature.data(), len) == 0;
}

// ES256 signs as r || s, 32 bytes each (RFC 7518 §3.4); OpenSSL verifies
// the DER ECDSA-Sig-Value. Empty on a signature of the wrong size.
std::string es256_der(std::string_view raw) {
  if (raw.size() != 64) return {};
  std::unique_ptr<ECDSA_SIG, decltype(&ECDSA_SIG_free)> sig(ECDSA_SIG_new(), ECDSA_SIG_free);
  BIGNUM* r = BN_bin2bn(bytes(raw), 32, nullptr);
  BIGNUM* s = BN_bin2bn(bytes(raw) + 32, 32, nullptr);
  if (!sig || r == nullptr || s == nullptr || ECDSA_SIG_set0(sig.get(), r, s) != 1) {
    BN_free(r);
    BN_free(s);
    return {};
  }
  unsigned char* der = nullptr;
  const int len = i2d_ECDSA_SIG(sig.get(), &der);
  if (len <= 0) return {};
  std::string out(reinterpret_cast<char*>(der), static_cast<std::size_t>(len));
  OPENSSL_free(der);
  return out;
}

bool digest_verify(const EVP_MD* md, EVP_PKEY* key, std::string_view input, std::string_view signature) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  return ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, md, nullptr, key) == 1 &&
         EVP_DigestVerify(ctx.get(), bytes(signature), signature.size(), bytes(input), input.size()) == 1;
}

}  // namespace

bool signature_valid(jwt_alg alg, const verification_key& key, std::string_view input, std::string_view signature) {
  if (key.type != key_type_for(alg)) return false;
  switch (alg) {
    case jwt_alg::hs256: return hmac_valid(EVP_sha256(), key.secret, input, signature);
    case jwt_alg::hs384: return hmac_valid(EVP_sha384(), key.secret, input, signature);
    case jwt_alg::hs512: return hmac_valid(EVP_sha512(), key.secret, input, signature);
    case jwt_alg::rs256: return digest_verify(EVP_sha256(), key.public_key.get(), input, signature);
    case jwt_alg::es256: {
      const std::string der = es256_der(signature);
      return !der.empty() && digest_verify(EVP_sha256(), key.public_key.get(), input, der);
    }
    // Ed25519 hashes internally: no digest (RFC 8037 §3.1).
    case jwt_alg::eddsa: return digest_verify(nullptr, key.public_key.get(), input, signature);
  }
  return false;
}

verdict verify_token(std::string_view token, const key_set& keys, const verifier_options& options, std::int64_t now_s) {
  verdict v;
  jwt_token t;
  if ((v.error = parse_jwt(token, options.max_token_bytes, t)) != auth_error::none) return v;
  const verification_key* key = keys.find(t.alg, t.kid);
  if (key == nullptr) return v.error = auth_error::unknown_key, v;
  if (!signature_valid(t.alg, *key, t.signing_input, t.signature)) return v.error = auth_error::bad_signature, v;

  // Only a signed token's claims are judged.
  const auto& c = t.claims;
  const std::int64_t leeway = options.leeway_s;
  // Saturating: a NumericDate near the int64 limits must not wrap.
  const auto plus = [](std::int64_t a, std::int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; };
  if (c.exp && now_s >= plus(*c.exp, leeway)) return v.error = auth_error::expired, v;
  if (c.nbf && *c.nbf > plus(now_s, leeway)) return v.error = auth_error::not_yet_valid, v;
  if (!options.issuer.empty() && c.iss != options.issuer) return v.error = auth_error::wrong_issuer, v;
  if (!options.audience.empty() && std::find(c.aud.begin(), c.aud.end(), options.audience) == c.aud.end())
    return v.error = auth_error::wrong_audience, v;
  if (c.sub.empty()) return v.error = auth_error::missing_subject, v;

  v.who.user = std::move(t.claims.sub);
  v.who.rooms_restricted = c.has_rooms;
  v.who.rooms_allowed = std::move(t.claims.rooms);
  if (c.exp) v.who.valid_until_s = plus(*c.exp, leeway);
  return v;
}

}  // namespace fg::auth
