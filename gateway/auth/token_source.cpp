#include "gateway/auth/token_source.hpp"

#include <strings.h>

#include "gateway/http/request_items.hpp"

namespace fg::auth {

std::optional<std::string_view> find_token(std::string_view authorization, std::string_view query) {
  // The scheme is case-insensitive (RFC 9110 §11.1), then one or more spaces.
  constexpr std::string_view scheme = "bearer";
  if (authorization.size() >= scheme.size() && ::strncasecmp(authorization.data(), scheme.data(), scheme.size()) == 0 &&
      (authorization.size() == scheme.size() || authorization[scheme.size()] == ' ')) {
    auto token = authorization.substr(scheme.size());
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
    return token;
  }
  std::string_view value;
  if (http::find_query_param(query, token_query_param, value)) return value;
  return std::nullopt;
}

std::string without_token_param(std::string_view query) {
  std::string out;
  while (!query.empty()) {
    const auto end = query.find('&');
    const auto item = query.substr(0, end);
    // Named as find_token() finds it: a credential it would use is never
    // handed on (" token=x" is the token too).
    if (http::pair_name(item) != token_query_param) {
      if (!out.empty()) out += '&';
      out += item;
    }
    if (end == std::string_view::npos) break;
    query.remove_prefix(end + 1);
  }
  return out;
}

}  // namespace fg::auth
