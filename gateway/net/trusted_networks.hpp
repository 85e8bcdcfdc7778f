// A set of IP networks, such as the load balancers allowed to say who a
// client is (--proxy-protocol-from, --forwarded-for-from). An IPv4 client of an IPv6 socket
// (::ffff:a.b.c.d) is matched as the IPv4 address it is.
#pragma once

#include <string_view>
#include <vector>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/network_v4.hpp>
#include <boost/asio/ip/network_v6.hpp>

namespace fg::gateway {

class trusted_networks {
 public:
  // "198.18.0.0/15, 2001:db8::/32, 192.0.2.7": networks, or addresses (a
  // whole /32 or /128). Throws std::invalid_argument naming the bad item;
  // host bits set below the prefix ("10.0.0.1/8") are refused as a typo.
  static trusted_networks parse(std::string_view list);

  [[nodiscard]] bool empty() const noexcept { return v4_.empty() && v6_.empty(); }
  [[nodiscard]] bool contains(const boost::asio::ip::address& a) const noexcept;

 private:
  std::vector<boost::asio::ip::network_v4> v4_;
  std::vector<boost::asio::ip::network_v6> v6_;
};

}  // namespace fg::gateway
