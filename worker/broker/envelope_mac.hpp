// HMAC-SHA256 of a Redis envelope, for clusters given --redis-secret-file:
// only holders of the secret (the cluster's workers) can put a message into
// a room. The MAC covers the channel (a message cannot be moved to another
// room), the header before the MAC (origin, seq) and the payload.
//
// Thread-compatible: one per broker, used on its loop.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>

namespace fg::worker {

class envelope_mac {
 public:
  static constexpr std::size_t hex_size = 64;  // SHA-256 in lower-case hex
  using hex_mac = std::array<char, hex_size>;

  // Throws std::invalid_argument on an empty key, std::runtime_error when
  // OpenSSL has no HMAC-SHA256.
  explicit envelope_mac(std::string_view key);
  ~envelope_mac();
  envelope_mac(const envelope_mac&) = delete;
  envelope_mac& operator=(const envelope_mac&) = delete;

  [[nodiscard]] hex_mac compute(std::string_view channel, std::string_view header, std::string_view payload) const;
  // Constant time in the MAC's bytes.
  [[nodiscard]] bool verify(std::string_view channel, std::string_view header, std::string_view payload,
                            std::string_view mac) const;

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace fg::worker
