#include "worker/broker/envelope_mac.hpp"

#include <stdexcept>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

namespace fg::worker {

// A context keyed once; each MAC works on a copy of it.
struct envelope_mac::state {
  EVP_MAC* mac = nullptr;
  EVP_MAC_CTX* keyed = nullptr;
  ~state() {
    EVP_MAC_CTX_free(keyed);
    EVP_MAC_free(mac);
  }
};

envelope_mac::envelope_mac(std::string_view key) : state_(std::make_unique<state>()) {
  if (key.empty()) throw std::invalid_argument("the Redis secret is empty");
  state_->mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  if (state_->mac != nullptr) state_->keyed = EVP_MAC_CTX_new(state_->mac);
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                               OSSL_PARAM_construct_end()};
  if (state_->keyed == nullptr ||
      EVP_MAC_init(state_->keyed, reinterpret_cast<const unsigned char*>(key.data()), key.size(), params) != 1)
    throw std::runtime_error("OpenSSL: HMAC-SHA256 is not available");
}

envelope_mac::~envelope_mac() = default;

envelope_mac::hex_mac envelope_mac::compute(std::string_view channel, std::string_view header,
                                            std::string_view payload) const {
  hex_mac out{};
  unsigned char raw[32] = {};
  std::size_t raw_size = 0;
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_dup(state_->keyed);
  // The channel's length first: "ab"+"c..." and "a"+"bc..." differ.
  const unsigned char sep = 0;
  const auto update = [ctx](std::string_view s) {
    return EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(s.data()), s.size()) == 1;
  };
  const bool ok = ctx != nullptr && update(channel) && EVP_MAC_update(ctx, &sep, 1) == 1 && update(header) &&
                  update(payload) && EVP_MAC_final(ctx, raw, &raw_size, sizeof raw) == 1 && raw_size == sizeof raw;
  EVP_MAC_CTX_free(ctx);
  // On failure the result is all NUL: no valid MAC, and verify() refuses it.
  if (!ok) return out;
  constexpr char digits[] = "0123456789abcdef";
  for (std::size_t i = 0; i < sizeof raw; ++i) {
    out[2 * i] = digits[raw[i] >> 4];
    out[2 * i + 1] = digits[raw[i] & 0xF];
  }
  return out;
}

bool envelope_mac::verify(std::string_view channel, std::string_view header, std::string_view payload,
                          std::string_view mac) const {
  if (mac.size() != hex_size) return false;
  const hex_mac want = compute(channel, header, payload);
  if (want[0] == '\0') return false;
  return CRYPTO_memcmp(want.data(), mac.data(), hex_size) == 0;
}

}  // namespace fg::worker
