#include "common/httpd/service.hpp"

namespace fg::httpd {

namespace http = boost::beast::http;

response make_response(http::status status, unsigned version, std::string body, const char* type, bool exact) {
  response res{status, version};
  res.set(http::field::content_type, type);
  res.set(http::field::cache_control, "no-store");
  res.body() = std::move(body);
  if (!exact) res.body() += '\n';
  res.prepare_payload();
  return res;
}

std::string_view path_of(boost::beast::string_view target) {
  const std::string_view t(target.data(), target.size());  // Boost 1.74's string_view is its own type
  return t.substr(0, t.find('?'));
}

response service::body_too_large(unsigned version) const {
  return make_response(http::status::payload_too_large, version,
                       "body larger than " + std::to_string(max_body_bytes()) + " bytes");
}

response method_not_allowed(unsigned version, const char* allowed) {
  auto res = make_response(http::status::method_not_allowed, version, "method not allowed");
  res.set(http::field::allow, allowed);
  return res;
}

}  // namespace fg::httpd
