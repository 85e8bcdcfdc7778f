// Keys and signed tokens made in-process for the verifier's tests: each
// algorithm's signing side, with OpenSSL, as an issuer would do it.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>

#include <nlohmann/json.hpp>

#include "gateway/auth/base64url.hpp"
#include "gateway/auth/key_set.hpp"

namespace fg::auth::testing {

using pkey_ptr = std::shared_ptr<EVP_PKEY>;

inline pkey_ptr make_rsa(unsigned bits = 2048) {
  return {EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<size_t>(bits)), EVP_PKEY_free};
}
inline pkey_ptr make_ec(const char* curve = "P-256") {
  return {EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", curve), EVP_PKEY_free};
}
inline pkey_ptr make_ed25519() { return {EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"), EVP_PKEY_free}; }

// The SubjectPublicKeyInfo PEM of a key pair's public half.
inline std::string public_pem(EVP_PKEY* key) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  PEM_write_bio_PUBKEY(bio.get(), key);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

inline std::string digest_sign(const EVP_MD* md, EVP_PKEY* key, const std::string& input) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  std::size_t len = 0;
  const auto* in = reinterpret_cast<const unsigned char*>(input.data());
  if (EVP_DigestSignInit(ctx.get(), nullptr, md, nullptr, key) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &len, in, input.size()) != 1)
    throw std::runtime_error("sign");
  std::string sig(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len, in, input.size()) != 1)
    throw std::runtime_error("sign");
  sig.resize(len);
  return sig;
}

// DER ECDSA-Sig-Value -> JWS r || s, 32 bytes each.
inline std::string der_to_raw(const std::string& der) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size()));
  std::string raw(64, '\0');
  BN_bn2binpad(ECDSA_SIG_get0_r(sig), reinterpret_cast<unsigned char*>(raw.data()), 32);
  BN_bn2binpad(ECDSA_SIG_get0_s(sig), reinterpret_cast<unsigned char*>(raw.data()) + 32, 32);
  ECDSA_SIG_free(sig);
  return raw;
}

inline std::string hmac(const EVP_MD* md, const std::string& secret, const std::string& input) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(md, secret.data(), static_cast<int>(secret.size()), reinterpret_cast<const unsigned char*>(input.data()),
       input.size(), mac, &len);
  return std::string(reinterpret_cast<char*>(mac), len);
}

// A token `header.payload.signature` signed with `alg` ("HS256", ...):
// `secret` for HS*, `key` for the others. `header` gets "alg" unless it has one.
inline std::string sign(const std::string& alg, nlohmann::json header, const nlohmann::json& payload,
                        const std::string& secret, EVP_PKEY* key = nullptr) {
  if (!header.contains("alg")) header["alg"] = alg;
  const std::string input = base64url_encode(header.dump()) + "." + base64url_encode(payload.dump());
  std::string sig;
  if (alg == "HS256") sig = hmac(EVP_sha256(), secret, input);
  if (alg == "HS384") sig = hmac(EVP_sha384(), secret, input);
  if (alg == "HS512") sig = hmac(EVP_sha512(), secret, input);
  if (alg == "RS256") sig = digest_sign(EVP_sha256(), key, input);
  if (alg == "ES256") sig = der_to_raw(digest_sign(EVP_sha256(), key, input));
  if (alg == "EdDSA") sig = digest_sign(nullptr, key, input);
  return input + "." + base64url_encode(sig);
}

}  // namespace fg::auth::testing

#include <openssl/core_names.h>

namespace fg::auth::testing {

// The public JWK (RFC 7517) of a key pair, with `kid`.
inline nlohmann::json public_jwk(EVP_PKEY* key, const std::string& kid) {
  nlohmann::json jwk{{"kid", kid}};
  const auto bn_b64 = [&](const char* name) {
    BIGNUM* bn = nullptr;
    EVP_PKEY_get_bn_param(key, name, &bn);
    std::string be(static_cast<std::size_t>(BN_num_bytes(bn)), '\0');
    BN_bn2bin(bn, reinterpret_cast<unsigned char*>(be.data()));
    BN_free(bn);
    return base64url_encode(be);
  };
  switch (EVP_PKEY_get_base_id(key)) {
    case EVP_PKEY_RSA:
      jwk["kty"] = "RSA";
      jwk["n"] = bn_b64(OSSL_PKEY_PARAM_RSA_N);
      jwk["e"] = bn_b64(OSSL_PKEY_PARAM_RSA_E);
      break;
    case EVP_PKEY_EC: {
      unsigned char point[65];
      std::size_t len = 0;
      EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, point, sizeof point, &len);
      const std::string p(reinterpret_cast<char*>(point), len);
      jwk["kty"] = "EC";
      jwk["crv"] = "P-256";
      jwk["x"] = base64url_encode(p.substr(1, 32));
      jwk["y"] = base64url_encode(p.substr(33, 32));
      break;
    }
    default: {
      unsigned char raw[32];
      std::size_t len = sizeof raw;
      EVP_PKEY_get_raw_public_key(key, raw, &len);
      jwk["kty"] = "OKP";
      jwk["crv"] = "Ed25519";
      jwk["x"] = base64url_encode(std::string(reinterpret_cast<char*>(raw), len));
    }
  }
  return jwk;
}

}  // namespace fg::auth::testing
