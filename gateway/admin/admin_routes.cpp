#include "gateway/admin/admin_routes.hpp"

#include <charconv>
#include <limits>

#include "common/metrics/exposition.hpp"
#include "gateway/admin/bearer_token.hpp"
#include "gateway/admin/publish_request.hpp"
#include "gateway/metrics/gateway_metrics.hpp"

namespace fg::gateway::admin {

namespace http = boost::beast::http;
using httpd::make_response;

namespace {

constexpr const char* json_type = "application/json";
constexpr std::string_view publish_path = "/api/publish";

std::string_view view(boost::beast::string_view s) { return {s.data(), s.size()}; }

response json_error(http::status status, unsigned version, std::string_view message) {
  return make_response(status, version, error_body(message), json_type);
}

// 200 {"published":N,"offsets":[...]} when every worker took its message
// (an offset is null where the room keeps no history); otherwise 502 with
// the first error, how many were taken, and null for the others.
response receipts_response(unsigned version, const std::vector<api_receipt>& receipts) {
  std::size_t taken = 0;
  std::string offsets = "[";
  const api_receipt* failed = nullptr;
  for (const auto& r : receipts) {
    if (offsets.size() > 1) offsets += ',';
    if (r.ok) ++taken;
    if (!r.ok && failed == nullptr) failed = &r;
    offsets += r.ok && r.offset != 0 ? std::to_string(r.offset) : std::string("null");
  }
  offsets += ']';
  const std::string counts = "\"published\":" + std::to_string(taken) + ",\"offsets\":" + offsets;
  if (failed == nullptr) return make_response(http::status::ok, version, "{" + counts + "}", json_type);
  std::string body = error_body(failed->error);
  body.pop_back();
  return make_response(http::status::bad_gateway, version, body + "," + counts + "}", json_type);
}

}  // namespace

std::optional<response> admin_routes::screen(const http::request_header<>& header) const {
  const unsigned version = header.version();
  const std::string_view path = httpd::path_of(header.target());
  if (path == publish_path) {
    auto refusal = screen_publish(header);
    if (refusal) counters_.count_publish(refusal->result_int());
    return refusal;
  }
  if (path != "/healthz" && path != "/readyz" && path != "/metrics")
    return make_response(http::status::not_found, version, "not found");
  if (header.method() != http::verb::get) return httpd::method_not_allowed(version, "GET");
  return std::nullopt;
}

std::optional<response> admin_routes::screen_publish(const http::request_header<>& header) const {
  const unsigned version = header.version();
  if (header.method() != http::verb::post) return httpd::method_not_allowed(version, "POST");
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
      return body_too_large(version);
  }
  return std::nullopt;
}

response admin_routes::body_too_large(unsigned version) const {
  return json_error(http::status::payload_too_large, version,
                    "body larger than " + std::to_string(options_.max_body_bytes) + " bytes (--max-message-size)");
}

void admin_routes::handle(const request& req, std::function<void(response)> done) {
  const unsigned version = req.version();
  const std::string_view path = httpd::path_of(req.target());
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
  if (path == "/metrics") {
    backend_.collect([this, version, done = std::move(done)](std::vector<thread_snapshot> threads) {
      done(make_response(http::status::ok, version, render_gateway_metrics(threads, counters_, options_.gateway_id),
                         metrics::text_content_type, true));
    });
    return;
  }
  handle_publish(req, [this, done = std::move(done)](response res) {
    counters_.count_publish(res.result_int());
    done(std::move(res));
  });
}

void admin_routes::handle_publish(const request& req, std::function<void(response)> done) {
  const unsigned version = req.version();
  auto parsed = parse_publish_request(req.body());
  if (!parsed.error.empty()) return done(json_error(http::status::bad_request, version, parsed.error));
  const std::size_t count = parsed.messages.size();
  if (count == 0) return done(make_response(http::status::ok, version, "{\"published\":0,\"offsets\":[]}", json_type));
  using result = route_table::publish_result;
  backend_.publish(std::move(parsed.messages), [version, done = std::move(done)](publish_outcome outcome) {
    switch (outcome.result) {
      case result::sent: break;
      case result::no_worker:
        return done(json_error(http::status::service_unavailable, version, "no worker serving /rooms is connected"));
      case result::too_big:
        return done(json_error(http::status::payload_too_large, version,
                               "a message is larger than the worker serving its room takes (its --max-envelope)"));
      case result::busy: {
        // The worker's link is full: nothing was sent; a retry after a moment may pass.
        auto res = json_error(http::status::service_unavailable, version, "the worker is busy, try again");
        res.set(http::field::retry_after, "1");
        return done(std::move(res));
      }
    }
    done(receipts_response(version, outcome.receipts));
  });
}

}  // namespace fg::gateway::admin
