// Which address a request from a trusted HTTP balancer stands for
// (--forwarded-for-from): the nearest hop in its forwarding header that is
// not itself a trusted proxy. Each proxy appends the address it received
// the request from, so reading from the right, the trusted proxies' hops
// and then the first untrusted one can be believed; anything left of that
// is whatever the client chose to send. nginx's realip module does the
// same with `real_ip_recursive on`.
#pragma once

#include <cstdint>
#include <optional>

#include <boost/asio/ip/address.hpp>

#include "gateway/http/forwarded_for.hpp"
#include "gateway/net/trusted_networks.hpp"

namespace fg::gateway {

struct forwarded_client {
  enum class result : std::uint8_t {
    client,   // an address the header names
    absent,   // no header: the balancer itself is the client
    unknown,  // a hop without a known address ("unknown", obfuscated, malformed): the nearest known hop counts
  };
  result what = result::absent;
  boost::asio::ip::address address;
};

// `peer` is the address the request came from, already known to be one of
// `proxies`. An all-trusted chain names its farthest hop.
forwarded_client resolve_forwarded_client(const http::forwarded_hops& hops, const trusted_networks& proxies,
                                          const boost::asio::ip::address& peer);

// The socket address of a parsed one; nullopt for family none.
std::optional<boost::asio::ip::address> to_address(const http::ip_endpoint& e);

}  // namespace fg::gateway
