#include "gateway/net/forwarded_client.hpp"

#include <algorithm>

namespace fg::gateway {

std::optional<boost::asio::ip::address> to_address(const http::ip_endpoint& e) {
  if (e.kind == http::ip_endpoint::family::ipv4) {
    boost::asio::ip::address_v4::bytes_type b;
    std::copy_n(e.bytes.begin(), b.size(), b.begin());
    return boost::asio::ip::address_v4(b);
  }
  if (e.kind == http::ip_endpoint::family::ipv6) return boost::asio::ip::address_v6(e.bytes);
  return std::nullopt;
}

forwarded_client resolve_forwarded_client(const http::forwarded_hops& hops, const trusted_networks& proxies,
                                          const boost::asio::ip::address& peer) {
  if (hops.named() == 0) return {forwarded_client::result::absent, peer};
  auto hop = peer;  // the nearest address known so far, a trusted proxy
  for (std::size_t i = 0; i < hops.size(); ++i) {
    const auto named = to_address(hops.nearest(i));
    if (!named) return {forwarded_client::result::unknown, hop};
    if (!proxies.contains(*named)) return {forwarded_client::result::client, *named};
    hop = *named;
  }
  // Every hop kept is trusted. If there were more than kept, the farthest
  // is not known; otherwise it is the client (one inside a trusted network).
  const auto what = hops.named() > hops.size() ? forwarded_client::result::unknown : forwarded_client::result::client;
  return {what, hop};
}

}  // namespace fg::gateway
