// Items of the lists a request carries: query parameters ("a=1&b=2") and
// cookies ("a=1; b=2"). One rule names an item for every lookup (the
// sticky key, the handshake's token and what is handed on without it):
// blanks around an item are not part of it. Pure, allocation-free.
#pragma once

#include <string_view>

namespace fg::http {

// The value of parameter `name` in a query string; false when absent.
bool find_query_param(std::string_view query, std::string_view name, std::string_view& value);
// The value of cookie `name` in a Cookie header; false when absent.
bool find_cookie(std::string_view cookies, std::string_view name, std::string_view& value);
// The name of one item of such a list ("a=1" -> "a", " a=1" -> "a").
std::string_view pair_name(std::string_view item);

}  // namespace fg::http
