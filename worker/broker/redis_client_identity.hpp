// Who a connection is, as the Redis server sees it (CLIENT INFO), so that
// a connection a partition left behind there can be removed later.
//
// When the network between a worker and Redis fails without a FIN, the
// worker gives its connection up (tcp_liveness.hpp) but Redis does not
// notice: its side of the connection, with every SUBSCRIBE on it, lingers
// until Redis's own tcp-keepalive finds it (300 s by default) or until a
// write to it bounces once the network heals. Until then PUBSUB NUMSUB
// counts it and PUBLISH "delivers" to it: messages sent there are lost,
// and the flush after an outage takes the lingering subscriber for one
// that is back. A worker that knows its earlier connections' identities
// asks Redis to drop them as soon as it reaches Redis again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fg::worker {

struct redis_client_identity {
  std::uint64_t id = 0;  // CLIENT ID: unique while the server runs
  std::string addr;      // the client's address as the server sees it
  friend bool operator==(const redis_client_identity&, const redis_client_identity&) = default;
};

// The `id=` and `addr=` fields of a CLIENT INFO line
// ("id=7 addr=127.0.0.1:50406 laddr=... fd=8 name= ..."); nullopt when
// either is missing or malformed.
[[nodiscard]] std::optional<redis_client_identity> parse_client_info(std::string_view line);

}  // namespace fg::worker
