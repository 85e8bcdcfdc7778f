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

// The value of `name` in a query string ("a=1&b=2"), or nullopt-like false.
bool find_query_param(std::string_view query, std::string_view name, std::string_view& value);
// The name of one item of such a list ("a=1" -> "a"), as both lookups
// match it: blanks around the item are not part of it.
std::string_view pair_name(std::string_view item);
// The value of cookie `name` in a Cookie header ("a=1; b=2").
bool find_cookie(std::string_view cookies, std::string_view name, std::string_view& value);

}  // namespace fg::gateway
