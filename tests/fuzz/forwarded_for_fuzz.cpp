// Fuzzes the forwarding-header parser with what any client may put in
// X-Forwarded-For or Forwarded (a balancer only appends to it). Input: one
// flags byte (bit 0: RFC 7239 syntax, else an address list), then the
// header's lines separated by '\n'. Checks:
//  - the ring keeps min(named, capacity) hops, and no more hops are named
//    than the lines have elements;
//  - every comma ends an element: each line fed as its comma-separated
//    pieces, one add_line each, names exactly the same hops (what makes a
//    client's broken quoting unable to hide the hops appended after it);
//  - a known hop's address, written back as text, parses to itself;
//  - the client chosen among them is never a hop left of the nearest
//    untrusted one.
#include <arpa/inet.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gateway/http/forwarded_for.hpp"
#include "gateway/net/forwarded_client.hpp"
#include "tests/fuzz/check.hpp"

namespace {

namespace http = fg::http;
using fg::fuzz::check;
using family = http::ip_endpoint::family;

bool same(const http::ip_endpoint& a, const http::ip_endpoint& b) {
  return a.kind == b.kind && a.bytes == b.bytes && a.port == b.port;
}

template <typename Each>
void for_each_piece(std::string_view text, char sep, Each each) {
  while (true) {
    const auto at = text.find(sep);
    each(text.substr(0, at));
    if (at == std::string_view::npos) return;
    text.remove_prefix(at + 1);
  }
}

void check_round_trip(const http::ip_endpoint& e) {
  if (e.kind == family::none) {
    check(e.port == 0);
    return;
  }
  std::array<char, INET6_ADDRSTRLEN> text{};
  check(::inet_ntop(e.kind == family::ipv6 ? AF_INET6 : AF_INET, e.bytes.data(), text.data(), text.size()) != nullptr);
  std::string node = e.kind == family::ipv6 ? "[" + std::string(text.data()) + "]" : std::string(text.data());
  if (e.port != 0) node += ":" + std::to_string(e.port);
  check(same(http::parse_forwarded_node(node), e));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto syntax = (data[0] & 1) != 0 ? http::forwarded_syntax::rfc7239 : http::forwarded_syntax::address_list;
  const std::string_view header(reinterpret_cast<const char*>(data + 1), size - 1);

  http::forwarded_hops whole(syntax);
  http::forwarded_hops pieces(syntax);
  std::size_t elements = 0;
  for_each_piece(header, '\n', [&](std::string_view line) {
    whole.add_line(line);
    for_each_piece(line, ',', [&](std::string_view piece) {
      pieces.add_line(piece);
      ++elements;
    });
  });

  check(whole.named() <= elements);
  check(whole.size() == std::min(whole.named(), http::forwarded_hops::capacity));
  check(pieces.named() == whole.named() && pieces.size() == whole.size());
  for (std::size_t i = 0; i < whole.size(); ++i) {
    check(same(whole.nearest(i), pieces.nearest(i)));
    check_round_trip(whole.nearest(i));
  }

  // Trust the documentation's 192.0.2.0/24 and 2001:db8::/32.
  static const auto proxies = fg::gateway::trusted_networks::parse("192.0.2.0/24, 2001:db8::/32");
  static const auto balancer = boost::asio::ip::make_address("192.0.2.1");
  const auto found = fg::gateway::resolve_forwarded_client(whole, proxies, balancer);
  std::size_t first_untrusted = whole.size();
  for (std::size_t i = 0; i < whole.size(); ++i) {
    const auto a = fg::gateway::to_address(whole.nearest(i));
    if (!a || !proxies.contains(*a)) {
      first_untrusted = i;
      break;
    }
  }
  if (first_untrusted < whole.size()) {
    const auto a = fg::gateway::to_address(whole.nearest(first_untrusted));
    check(a ? found.what == fg::gateway::forwarded_client::result::client && found.address == *a
            : found.what == fg::gateway::forwarded_client::result::unknown);
  }
  if (found.what != fg::gateway::forwarded_client::result::client) check(proxies.contains(found.address));
  return 0;
}
