#include "gateway/auth/key_set.hpp"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>

#include <nlohmann/json.hpp>

#include "common/config_error.hpp"
#include "common/secret_file.hpp"
#include "gateway/auth/base64url.hpp"

namespace fg::auth {

namespace {

constexpr std::size_t min_hmac_bytes = 32;
constexpr int min_rsa_bits = 2048;

std::shared_ptr<EVP_PKEY> own(EVP_PKEY* key) { return {key, EVP_PKEY_free}; }

[[noreturn]] void fail(std::string_view what, const std::string& why) {
  throw config_error(std::string(what) + ": " + why);
}

// The type of a parsed public key, or a config_error if framegate cannot use it.
key_type type_of(EVP_PKEY* key, std::string_view what) {
  switch (EVP_PKEY_get_base_id(key)) {
    case EVP_PKEY_RSA:
      if (EVP_PKEY_get_bits(key) < min_rsa_bits)
        fail(what, "RSA key of " + std::to_string(EVP_PKEY_get_bits(key)) + " bits: at least 2048 are needed");
      return key_type::rsa;
    case EVP_PKEY_EC: {
      char group[64] = {};
      std::size_t len = 0;
      if (EVP_PKEY_get_group_name(key, group, sizeof group, &len) != 1 ||
          (std::string_view(group) != "prime256v1" && std::string_view(group) != "P-256"))
        fail(what, "EC key on curve '" + std::string(group) + "': only P-256 (ES256) is supported");
      return key_type::ec_p256;
    }
    case EVP_PKEY_ED25519: return key_type::ed25519;
    default: fail(what, "unsupported key type: use RSA, EC P-256 or Ed25519");
  }
}

std::string b64_member(const nlohmann::json& jwk, const char* name, std::string_view what) {
  const auto it = jwk.find(name);
  std::string out;
  if (it == jwk.end() || !it->is_string() || !base64url_decode(it->get_ref<const std::string&>(), out) || out.empty())
    fail(what, std::string("a key's \"") + name + "\" is missing or not base64url");
  return out;
}

using bn_ptr = std::unique_ptr<BIGNUM, decltype(&BN_free)>;
bn_ptr bignum(const std::string& be) {
  return {BN_bin2bn(reinterpret_cast<const unsigned char*>(be.data()), static_cast<int>(be.size()), nullptr), BN_free};
}

// EVP_PKEY_fromdata with the parameters `fill` adds.
template <class Fill>
std::shared_ptr<EVP_PKEY> from_params(const char* type, Fill fill, std::string_view what) {
  std::unique_ptr<OSSL_PARAM_BLD, decltype(&OSSL_PARAM_BLD_free)> bld(OSSL_PARAM_BLD_new(), OSSL_PARAM_BLD_free);
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr),
                                                                  EVP_PKEY_CTX_free);
  if (!bld || !ctx || !fill(bld.get())) fail(what, std::string("cannot build a ") + type + " key");
  std::unique_ptr<OSSL_PARAM, decltype(&OSSL_PARAM_free)> params(OSSL_PARAM_BLD_to_param(bld.get()), OSSL_PARAM_free);
  EVP_PKEY* key = nullptr;
  if (!params || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
      EVP_PKEY_fromdata(ctx.get(), &key, EVP_PKEY_PUBLIC_KEY, params.get()) != 1)
    fail(what, std::string("invalid ") + type + " key");
  return own(key);
}

std::shared_ptr<EVP_PKEY> rsa_from_jwk(const nlohmann::json& jwk, std::string_view what) {
  const auto n = bignum(b64_member(jwk, "n", what));
  const auto e = bignum(b64_member(jwk, "e", what));
  return from_params(
      "RSA",
      [&](OSSL_PARAM_BLD* b) {
        return n && e && OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_N, n.get()) == 1 &&
               OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_E, e.get()) == 1;
      },
      what);
}

std::shared_ptr<EVP_PKEY> ec_from_jwk(const nlohmann::json& jwk, std::string_view what) {
  const std::string x = b64_member(jwk, "x", what);
  const std::string y = b64_member(jwk, "y", what);
  // RFC 7518 §6.2.1.2: each coordinate is exactly the curve's 32 bytes.
  if (x.size() != 32 || y.size() != 32) fail(what, "a P-256 key's x and y must be 32 bytes each");
  // An uncompressed point (SEC 1 §2.3.3): 0x04 || x || y; OpenSSL checks it is on the curve.
  std::string point = "\x04" + x + y;
  char group[] = "prime256v1";
  return from_params(
      "EC",
      [&](OSSL_PARAM_BLD* b) {
        return OSSL_PARAM_BLD_push_utf8_string(b, OSSL_PKEY_PARAM_GROUP_NAME, group, 0) == 1 &&
               OSSL_PARAM_BLD_push_octet_string(b, OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size()) == 1;
      },
      what);
}

std::shared_ptr<EVP_PKEY> ed25519_from_jwk(const nlohmann::json& jwk, std::string_view what) {
  const std::string x = b64_member(jwk, "x", what);
  EVP_PKEY* key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                              reinterpret_cast<const unsigned char*>(x.data()), x.size());
  if (key == nullptr) fail(what, "invalid Ed25519 key (x must be 32 bytes)");
  return own(key);
}

std::string string_member(const nlohmann::json& jwk, const char* name) {
  const auto it = jwk.find(name);
  return it != jwk.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

key_type key_type_for(jwt_alg alg) noexcept {
  switch (alg) {
    case jwt_alg::hs256:
    case jwt_alg::hs384:
    case jwt_alg::hs512: return key_type::hmac;
    case jwt_alg::rs256: return key_type::rsa;
    case jwt_alg::es256: return key_type::ec_p256;
    case jwt_alg::eddsa: return key_type::ed25519;
  }
  return key_type::hmac;
}

const verification_key* key_set::find(jwt_alg alg, std::string_view kid) const noexcept {
  const key_type type = key_type_for(alg);
  for (const auto& k : keys_)
    if (k.type == type && (kid.empty() || k.kid == kid)) return &k;
  return nullptr;
}

void key_set::add_all(const key_set& other) { keys_.insert(keys_.end(), other.keys_.begin(), other.keys_.end()); }

key_set hmac_key(std::string secret, std::string_view what) {
  if (secret.size() < min_hmac_bytes)
    fail(what, "an HMAC secret needs at least " + std::to_string(min_hmac_bytes) + " bytes, this one has " +
                   std::to_string(secret.size()));
  key_set set;
  set.add({{}, key_type::hmac, std::move(secret), nullptr});
  return set;
}

key_set pem_key(std::string_view pem, std::string_view what) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  EVP_PKEY* raw = bio ? PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr) : nullptr;
  if (raw == nullptr) fail(what, "not a PEM public key (BEGIN PUBLIC KEY)");
  auto key = own(raw);
  key_set set;
  set.add({{}, type_of(key.get(), what), {}, std::move(key)});
  return set;
}

key_set jwks_keys(std::string_view json_text, std::string_view what) {
  const auto doc = nlohmann::json::parse(json_text, nullptr, false);
  if (!doc.is_object() || !doc.contains("keys") || !doc["keys"].is_array())
    fail(what, "not a JWKS: expected {\"keys\":[...]}");
  key_set set;
  for (const auto& jwk : doc["keys"]) {
    if (!jwk.is_object()) fail(what, "a key is not a JSON object");
    if (const auto use = string_member(jwk, "use"); !use.empty() && use != "sig") continue;
    const std::string kty = string_member(jwk, "kty");
    const std::string crv = string_member(jwk, "crv");
    std::shared_ptr<EVP_PKEY> key;
    if (kty == "RSA")
      key = rsa_from_jwk(jwk, what);
    else if (kty == "EC" && crv == "P-256")
      key = ec_from_jwk(jwk, what);
    else if (kty == "OKP" && crv == "Ed25519")
      key = ed25519_from_jwk(jwk, what);
    else
      continue;  // another curve or type: not ours to use
    const key_type type = type_of(key.get(), what);
    // A key restricted to one algorithm (RFC 7517 §4.4) is only used with it.
    if (const auto alg = string_member(jwk, "alg"); !alg.empty()) {
      const bool fits = (alg == "RS256" && type == key_type::rsa) || (alg == "ES256" && type == key_type::ec_p256) ||
                        (alg == "EdDSA" && type == key_type::ed25519);
      if (!fits) continue;
    }
    set.add({string_member(jwk, "kid"), type, {}, std::move(key)});
  }
  if (set.empty()) fail(what, "no RS256, ES256 or EdDSA signing key in the set");
  return set;
}

std::shared_ptr<const key_set> load_keys(const key_sources& sources) {
  auto set = std::make_shared<key_set>();
  const auto label = [](const char* option, const std::string& file) { return std::string(option) + ": " + file; };
  if (!sources.secret_file.empty())
    set->add_all(hmac_key(read_secret_file(sources.secret_file, "--jwt-secret-file"),
                          label("--jwt-secret-file", sources.secret_file)));
  if (!sources.public_key_file.empty())
    set->add_all(pem_key(read_secret_file(sources.public_key_file, "--jwt-public-key-file"),
                         label("--jwt-public-key-file", sources.public_key_file)));
  if (!sources.jwks_file.empty())
    set->add_all(
        jwks_keys(read_secret_file(sources.jwks_file, "--jwt-jwks-file"), label("--jwt-jwks-file", sources.jwks_file)));
  return set;
}

}  // namespace fg::auth
