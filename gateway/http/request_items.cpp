#include "gateway/http/request_items.hpp"

namespace fg::http {

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

}  // namespace fg::http
