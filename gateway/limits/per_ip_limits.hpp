// Per-IP admission: how many sockets one address holds (--max-connections-
// per-ip) and how fast it may open new ones (--handshake-rate, a token
// bucket per address).
//
// Memory is fixed, whatever the number of addresses: a table of `slots`
// entries indexed by a hash of the address, keyed with a random seed per
// process so that nobody can choose addresses that land in one slot. Two
// addresses that do share a slot share its limits (a false refusal, never a
// false admission), which with the default table needs the sharer to be
// near its limits. IPv6 addresses are keyed by their /64 prefix: one host
// is usually given a whole /64.
//
// Thread-safety: shared by every I/O thread. Each slot has its own spin
// lock, taken only at accept and at close, never per message; two threads
// contend only for the same slot. Per-thread shares would need no lock but
// would split one address's budget by the kernel's SO_REUSEPORT hash, and
// a cap of N would become N per thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

#include <boost/asio/ip/address.hpp>

#include "gateway/limits/token_bucket.hpp"

namespace fg::gateway {

struct per_ip_options {
  std::uint32_t max_connections = 0;  // per address; 0: no cap
  double handshake_rate = 0;          // new sockets per second per address; 0: no limit
  double handshake_burst = 1;         // new sockets at once per address
  std::size_t slots = 16384;
};

class per_ip_limits {
 public:
  enum class verdict : std::uint8_t { admitted, rate_limited, too_many_connections };
  struct admission {
    verdict what = verdict::admitted;
    std::uint32_t slot = 0;            // admitted: pass to release() when the socket closes
    std::uint64_t retry_after_ms = 0;  // rate_limited: when the next socket would pass
  };

  per_ip_limits(const per_ip_options& options, std::uint64_t seed);

  // A new socket from `address` at `now_ms` (a clock shared by every thread).
  admission admit(const boost::asio::ip::address& address, std::uint64_t now_ms);
  // The socket of an admitted admission closed.
  void release(std::uint32_t slot) noexcept;

  // The slot an address maps to (tests).
  [[nodiscard]] std::uint32_t slot_of(const boost::asio::ip::address& address) const noexcept;

 private:
  struct slot {
    std::atomic_flag lock = ATOMIC_FLAG_INIT;
    std::uint32_t connections = 0;
    token_bucket handshakes;
    bool bucket_ready = false;
  };
  class guard;

  per_ip_options options_;
  std::uint64_t seed_;
  std::unique_ptr<slot[]> slots_;
};

}  // namespace fg::gateway
