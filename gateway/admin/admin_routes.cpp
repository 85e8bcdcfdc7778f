#include "gateway/admin/admin_routes.hpp"

#include <charconv>
#include <limits>

#include "gateway/admin/bearer_token.hpp"
#include "gateway/admin/publish_request.hpp"

namespace fg::gateway::admin {

namespace http = boost::beast::http;

namespace {

constexpr const char* json_type = "application/json";
constexpr std::string_view publish_path = "/api/publish";

// Boost 1.74's string_view is its own type.
std::string_view view(boost::beast::string_view s) { return {s.data(), s.size()}; }

// The path without its query string.
std::string_view path_of(boost::beast::string_view target) {
  const std::string_view t = view(target);
  return t.substr(0, t.find('?'));
}

response json_error(http::status status, unsigned version, std::string_view message) {
  return make_response(status, version, error_body(message), json_type);
}

}  // namespace

response make_response(http::status status, unsigned version, std::string body, const char* type) {
  response res{status, version};
  res.set(http::field::content_type, type);
  res.set(http::field::cache_control, "no-store");
  res.body() = std::move(body);
  res.body() += '\n';
  res.prepare_payload();
  return res;
}

std::optional<response> admin_routes::screen(const http::request_header<>& header) const {
  const unsigned version = header.version();
  const std::string_view path = path_of(header.target());
  const bool is_health = path == "/healthz" || path == "/readyz";
  if (!is_health && path != publish_path) return make_response(http::status::not_found, version, "not found");

  const http::verb expected = is_health ? http::verb::get : http::verb::post;
  if (header.method() != expected) {
    auto res = make_response(http::status::method_not_allowed, version, "method not allowed");
    res.set(http::field::allow, is_health ? "GET" : "POST");
    return res;
  }
  if (is_health) return std::nullopt;

  if (options_.api_token.empty())
    return json_error(http::status::forbidden, version, "publish API disabled: set --api-token");
  if (!bearer_matches(view(header[http::field::authorization]), options_.api_token)) {
    auto res = json_error(http::status::unauthorized, version, "missing or wrong bearer token");
    res.set(http::field::www_authenticate, "Bearer");
    return res;
  }
  // Refused before a byte of the body is read; a chunked body meets the
  // parser's body limit instead.
  if (const auto length = view(header[http::field::content_length]); !length.empty()) {
    std::size_t n = 0;
    const auto [end, ec] = std::from_chars(length.data(), length.data() + length.size(), n);
    if (ec == std::errc::result_out_of_range || (ec == std::errc{} && n > options_.max_body_bytes))
      return json_error(http::status::payload_too_large, version,
                        "body larger than " + std::to_string(options_.max_body_bytes) + " bytes (--max-message-size)");
  }
  return std::nullopt;
}

void admin_routes::handle(const request& req, std::function<void(response)> done) {
  const unsigned version = req.version();
  const std::string_view path = path_of(req.target());
  if (path == "/healthz") return done(make_response(http::status::ok, version, "ok"));
  if (path == "/readyz") {
    backend_.count_workers([version, done = std::move(done)](std::size_t workers) {
      if (workers == std::numeric_limits<std::size_t>::max())
        return done(make_response(http::status::ok, version, "ready (echo mode)"));
      if (workers == 0)
        return done(make_response(http::status::service_unavailable, version, "not ready: no worker registered"));
      done(make_response(http::status::ok, version, "ready: " + std::to_string(workers) + " worker(s)"));
    });
    return;
  }

  auto parsed = parse_publish_request(req.body());
  if (!parsed.error.empty()) return done(json_error(http::status::bad_request, version, parsed.error));
  const std::size_t count = parsed.messages.size();
  if (count == 0) return done(make_response(http::status::ok, version, "{\"published\":0}", json_type));
  backend_.publish(std::move(parsed.messages), [version, count, done = std::move(done)](bool sent) {
    if (!sent) return done(json_error(http::status::service_unavailable, version, "no worker is connected"));
    done(make_response(http::status::ok, version, "{\"published\":" + std::to_string(count) + "}", json_type));
  });
}

}  // namespace fg::gateway::admin
