#include "gateway/http/forwarded_headers.hpp"

#include <algorithm>
#include <cctype>

namespace fg::http {

std::vector<std::pair<std::string, std::string>> forwarded_headers(const boost::beast::http::request_header<>& req,
                                                                   std::span<const std::string> extra) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& field : req) {
    std::string name(field.name_string().data(), field.name_string().size());
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (name != "origin" && name != "cookie" && std::find(extra.begin(), extra.end(), name) == extra.end()) continue;
    const std::string_view value(field.value().data(), field.value().size());
    const auto seen = std::find_if(out.begin(), out.end(), [&](const auto& h) { return h.first == name; });
    if (seen == out.end()) {
      out.emplace_back(std::move(name), std::string(value));
      continue;
    }
    seen->second += name == "cookie" ? "; " : ", ";
    seen->second += value;
  }
  return out;
}

}  // namespace fg::http
