// The id a gateway process announces to its workers (Welcome.gateway_id),
// with which conn_ids are unique across restarts: new at every start.
//
// 15 hex digits (60 random bits), not 16: a worker keeps a copy in every
// connection's info, and 15 characters stay in std::string's inline buffer
// (libstdc++) where 16 cost a heap block per connection (47 B of a worker's
// 545 per idle connection, measured with 15,000).
#pragma once

#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace fg::gateway {

inline constexpr std::size_t gateway_id_digits = 15;

// `random`'s low 60 bits, as lower-case hex with leading zeros.
inline std::string make_gateway_id(std::uint64_t random) {
  return fmt::format("{:015x}", random & ((std::uint64_t{1} << 60) - 1));
}

}  // namespace fg::gateway
