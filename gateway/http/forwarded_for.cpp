#include "gateway/http/forwarded_for.hpp"

#include <algorithm>

namespace fg::http {

namespace {

constexpr std::string_view whitespace = " \t";

std::string_view trim(std::string_view s) noexcept {
  const auto first = s.find_first_not_of(whitespace);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(whitespace) - first + 1);
}

bool iequals(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
           return lower(x) == lower(y);
         });
}

// Splits off the text up to the next `sep` outside a quoted string (a
// backslash escapes the next character inside one). An unterminated quote
// runs to the end.
std::string_view next_quoted_item(std::string_view& rest, char sep) noexcept {
  bool quoted = false;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    const char c = rest[i];
    if (quoted && c == '\\') {
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (!quoted && c == sep) {
      const auto item = rest.substr(0, i);
      rest.remove_prefix(i + 1);
      return item;
    }
  }
  const auto item = rest;
  rest = {};
  return item;
}

// A `for` value: a token as is, a quoted string without its quotes. An
// address never needs an escape, so a value with one (or a broken quote)
// is not an address: empty.
std::string_view unquote(std::string_view value) noexcept {
  if (value.empty() || value.front() != '"') return value;
  if (value.size() < 2 || value.back() != '"') return {};
  const auto inner = value.substr(1, value.size() - 2);
  if (inner.find_first_of("\"\\") != std::string_view::npos) return {};
  return inner;
}

// The node an RFC 7239 element names in its one `for` parameter.
ip_endpoint parse_rfc7239_element(std::string_view element) noexcept {
  std::string_view node;
  bool found = false;
  while (!element.empty()) {
    const auto pair = trim(next_quoted_item(element, ';'));
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    if (eq == std::string_view::npos) return {};  // not token=value: malformed
    if (!iequals(trim(pair.substr(0, eq)), "for")) continue;
    if (found) return {};  // a parameter occurs once per element (RFC 7239 §4)
    found = true;
    node = unquote(trim(pair.substr(eq + 1)));
  }
  return found ? parse_forwarded_node(node) : ip_endpoint{};
}

}  // namespace

forwarded_syntax syntax_of_header(std::string_view name) noexcept {
  return iequals(name, "forwarded") ? forwarded_syntax::rfc7239 : forwarded_syntax::address_list;
}

ip_endpoint parse_forwarded_node(std::string_view node) noexcept {
  ip_endpoint e;
  std::string_view host = node;
  std::string_view port;
  if (node.starts_with('[')) {  // [v6] or [v6]:port
    const auto close = node.find(']');
    if (close == std::string_view::npos) return {};
    host = node.substr(1, close - 1);
    const auto after = node.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return {};
      port = after.substr(1);
      if (port.empty()) return {};
    }
    e.kind = ip_endpoint::family::ipv6;
  } else if (const auto colon = node.find(':'); colon == std::string_view::npos) {
    e.kind = ip_endpoint::family::ipv4;
  } else if (node.find(':', colon + 1) == std::string_view::npos) {  // one colon: v4:port
    host = node.substr(0, colon);
    port = node.substr(colon + 1);
    if (port.empty()) return {};
    e.kind = ip_endpoint::family::ipv4;
  } else {  // a bare v6 address cannot carry a port
    e.kind = ip_endpoint::family::ipv6;
  }
  if (!parse_ip_text(host, e.kind, e.bytes.data())) return {};
  if (!port.empty() && !parse_port_text(port, e.port)) return {};
  return e;
}

// Every comma ends an element, quoted or not. No address has one, and a
// quote the client left open must not swallow the hops that the balancers
// appended after it: those are the ones to believe.
void forwarded_hops::add_line(std::string_view value) noexcept {
  while (!value.empty()) {
    const auto comma = value.find(',');
    const auto element = trim(value.substr(0, comma));
    value = comma == std::string_view::npos ? std::string_view{} : value.substr(comma + 1);
    if (element.empty()) continue;
    add_hop(syntax_ == forwarded_syntax::rfc7239 ? parse_rfc7239_element(element) : parse_forwarded_node(element));
  }
}

}  // namespace fg::http
