#include "gateway/limits/per_ip_limits.hpp"

#include <cstring>

namespace fg::gateway {

class per_ip_limits::guard {
 public:
  explicit guard(slot& s) noexcept : s_(s) {
    while (s_.lock.test_and_set(std::memory_order_acquire)) {
    }
  }
  ~guard() { s_.lock.clear(std::memory_order_release); }
  guard(const guard&) = delete;
  guard& operator=(const guard&) = delete;

 private:
  slot& s_;
};

namespace {
// 64-bit FNV-1a over the seed and the key bytes, then a final mix: keyed,
// so the slot of an address cannot be predicted from outside the process.
std::uint64_t keyed_hash(std::uint64_t seed, const unsigned char* bytes, std::size_t n) noexcept {
  std::uint64_t h = 14695981039346656037ull ^ seed;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= bytes[i];
    h *= 1099511628211ull;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}
}  // namespace

per_ip_limits::per_ip_limits(const per_ip_options& options, std::uint64_t seed)
    : options_(options), seed_(seed), slots_(std::make_unique<slot[]>(options.slots == 0 ? 1 : options.slots)) {
  if (options_.slots == 0) options_.slots = 1;
}

std::uint32_t per_ip_limits::slot_of(const boost::asio::ip::address& address) const noexcept {
  std::array<unsigned char, 17> key{};
  if (address.is_v4()) {
    const auto b = address.to_v4().to_bytes();
    key[0] = 4;
    std::memcpy(key.data() + 1, b.data(), b.size());
  } else {
    const auto v6 = address.to_v6();
    if (v6.is_v4_mapped()) return slot_of(boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, v6));
    const auto b = v6.to_bytes();
    key[0] = 6;
    std::memcpy(key.data() + 1, b.data(), 8);  // the /64 prefix
  }
  return static_cast<std::uint32_t>(keyed_hash(seed_, key.data(), key.size()) % options_.slots);
}

per_ip_limits::admission per_ip_limits::admit(const boost::asio::ip::address& address, std::uint64_t now_ms) {
  const std::uint32_t index = slot_of(address);
  slot& s = slots_[index];
  guard locked(s);
  if (options_.handshake_rate > 0) {
    if (!s.bucket_ready) {
      s.handshakes = token_bucket(options_.handshake_rate, options_.handshake_burst, now_ms);
      s.bucket_ready = true;
    }
    if (!s.handshakes.try_take(1, now_ms)) return {verdict::rate_limited, index, s.handshakes.wait_ms(1, now_ms)};
  }
  if (options_.max_connections != 0 && s.connections >= options_.max_connections)
    return {verdict::too_many_connections, index, 0};
  ++s.connections;
  return {verdict::admitted, index, 0};
}

void per_ip_limits::release(std::uint32_t index) noexcept {
  slot& s = slots_[index % options_.slots];
  guard locked(s);
  if (s.connections > 0) --s.connections;
}

}  // namespace fg::gateway
