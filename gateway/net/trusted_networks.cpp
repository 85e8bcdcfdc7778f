#include "gateway/net/trusted_networks.hpp"

#include <stdexcept>
#include <string>

namespace fg::gateway {

namespace ip = boost::asio::ip;

namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool in(const ip::network_v6& net, const ip::address_v6& a) {
  const auto want = net.network().to_bytes();
  const auto have = a.to_bytes();
  unsigned bits = net.prefix_length();
  for (std::size_t i = 0; bits > 0; ++i, bits = bits >= 8 ? bits - 8 : 0) {
    const auto mask = static_cast<std::uint8_t>(bits >= 8 ? 0xFF : 0xFF << (8 - bits));
    if ((want[i] & mask) != (have[i] & mask)) return false;
  }
  return true;
}

// Host bits below the prefix are more likely a typo than a network.
template <class Network>
void keep(std::vector<Network>& into, const Network& net, const std::string& item) {
  if (net != net.canonical())
    throw std::invalid_argument("'" + item + "' has host bits set: did you mean " + net.canonical().to_string() + "?");
  into.push_back(net);
}

}  // namespace

trusted_networks trusted_networks::parse(std::string_view list) {
  trusted_networks out;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string item(trimmed(list.substr(0, comma)));
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    if (item.empty()) continue;
    const bool v6 = item.find(':') != std::string::npos;
    const std::string spec = item.find('/') != std::string::npos ? item : item + (v6 ? "/128" : "/32");
    boost::system::error_code ec;
    if (v6) {
      if (const auto net = ip::make_network_v6(spec, ec); !ec) {
        keep(out.v6_, net, item);
        continue;
      }
    } else if (const auto net = ip::make_network_v4(spec, ec); !ec) {
      keep(out.v4_, net, item);
      continue;
    }
    throw std::invalid_argument("'" + item + "' is not an IP address or network (CIDR, e.g. 198.18.0.0/15)");
  }
  return out;
}

bool trusted_networks::contains(const ip::address& a) const noexcept {
  ip::address_v4 v4;
  if (a.is_v4()) {
    v4 = a.to_v4();
  } else if (a.to_v6().is_v4_mapped()) {
    v4 = ip::make_address_v4(ip::v4_mapped, a.to_v6());
  } else {
    for (const auto& net : v6_)
      if (in(net, a.to_v6())) return true;
    return false;
  }
  for (const auto& net : v4_)
    if ((v4.to_uint() & net.netmask().to_uint()) == net.network().to_uint()) return true;
  return false;
}

}  // namespace fg::gateway
