#include "gateway/routing/sticky_key.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace fg::gateway {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Finds `name`=value among `separator`-separated pairs.
bool find_pair(std::string_view list, char separator, std::string_view name, std::string_view& value) {
  while (!list.empty()) {
    const auto end = list.find(separator);
    const auto item = trim(list.substr(0, end));
    if (pair_name(item) == name) {
      const auto eq = item.find('=');
      value = eq == std::string_view::npos ? std::string_view{} : item.substr(eq + 1);
      return true;
    }
    if (end == std::string_view::npos) break;
    list.remove_prefix(end + 1);
  }
  return false;
}

}  // namespace

std::string_view pair_name(std::string_view item) {
  item = trim(item);
  return item.substr(0, item.find('='));
}

bool find_query_param(std::string_view query, std::string_view name, std::string_view& value) {
  return find_pair(query, '&', name, value);
}

bool find_cookie(std::string_view cookies, std::string_view name, std::string_view& value) {
  return find_pair(cookies, ';', name, value);
}

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
    case sticky_key_spec::source::query: found = find_query_param(req.query, spec.name, value); break;
    case sticky_key_spec::source::cookie:
      if (const auto* c = req.header("cookie")) found = find_cookie(*c, spec.name, value);
      break;
  }
  if (found && !value.empty()) return std::string(value);
  return "conn:" + std::to_string(conn_id);
}

}  // namespace fg::gateway
