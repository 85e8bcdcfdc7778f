#include "gateway/routing/sticky_key.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "gateway/http/request_items.hpp"

namespace fg::gateway {

sticky_key_spec parse_sticky_key_spec(std::string_view text) {
  sticky_key_spec spec;
  if (text == "conn") return spec;
  if (text == "ip" || text == "user") {
    spec.from = text == "ip" ? sticky_key_spec::source::ip : sticky_key_spec::source::user;
    return spec;
  }
  const auto colon = text.find(':');
  const auto kind = text.substr(0, colon);
  const auto name = colon == std::string_view::npos ? std::string_view{} : text.substr(colon + 1);
  if (name.empty() || (kind != "header" && kind != "query" && kind != "cookie"))
    throw std::invalid_argument("sticky key must be conn, ip, user, header:NAME, query:NAME or cookie:NAME, got '" +
                                std::string(text) + "'");
  spec.from = kind == "header"  ? sticky_key_spec::source::header
              : kind == "query" ? sticky_key_spec::source::query
                                : sticky_key_spec::source::cookie;
  spec.name = std::string(name);
  if (spec.from == sticky_key_spec::source::header)
    std::transform(spec.name.begin(), spec.name.end(), spec.name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return spec;
}

std::string sticky_key_for(const sticky_key_spec& spec, const request_info& req, std::uint64_t conn_id) {
  std::string_view value;
  bool found = false;
  switch (spec.from) {
    case sticky_key_spec::source::conn: break;
    case sticky_key_spec::source::ip:
      value = req.remote_address;
      found = !value.empty();
      break;
    case sticky_key_spec::source::user:
      value = req.user;
      found = !value.empty();
      break;
    case sticky_key_spec::source::header:
      if (const auto* h = req.header(spec.name)) {
        value = *h;
        found = true;
      }
      break;
    case sticky_key_spec::source::query: found = http::find_query_param(req.query, spec.name, value); break;
    case sticky_key_spec::source::cookie:
      if (const auto* c = req.header("cookie")) found = http::find_cookie(*c, spec.name, value);
      break;
  }
  if (found && !value.empty()) return std::string(value);
  return "conn:" + std::to_string(conn_id);
}

}  // namespace fg::gateway
