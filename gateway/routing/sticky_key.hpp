// The sticky key of a connection: what its worker is chosen by. With the
// default `conn` every connection spreads evenly; with `ip`, `header:NAME`,
// `query:NAME` or `cookie:NAME` one client's connections and reconnects
// land on the same worker, and with `user` (the verified token's sub) all
// of one user's connections do. A key that is absent falls back to the
// connection id.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gateway/net/message_sink.hpp"

namespace fg::gateway {

struct sticky_key_spec {
  enum class source : std::uint8_t { conn, ip, user, header, query, cookie };
  source from = source::conn;
  std::string name;  // header (lower-case), query parameter or cookie name
};

// Parses "conn", "ip", "user", "header:NAME", "query:NAME" or "cookie:NAME";
// throws std::invalid_argument with a one-line message otherwise.
sticky_key_spec parse_sticky_key_spec(std::string_view text);

std::string sticky_key_for(const sticky_key_spec& spec, const request_info& req, std::uint64_t conn_id);

}  // namespace fg::gateway
