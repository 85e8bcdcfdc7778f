#include "worker/admin/worker_routes.hpp"

#include "common/metrics/exposition.hpp"

namespace fg::worker {

namespace http = boost::beast::http;
using httpd::make_response;

std::optional<httpd::response> worker_routes::screen(const http::request_header<>& header) const {
  const std::string_view path = httpd::path_of(header.target());
  if (path != "/healthz" && path != "/readyz" && path != "/metrics")
    return make_response(http::status::not_found, header.version(), "not found");
  if (header.method() != http::verb::get) return httpd::method_not_allowed(header.version(), "GET");
  return std::nullopt;
}

void worker_routes::handle(const httpd::request& req, std::function<void(httpd::response)> done) {
  const unsigned version = req.version();
  const std::string_view path = httpd::path_of(req.target());
  if (path == "/healthz") return done(make_response(http::status::ok, version, "ok"));
  if (path == "/readyz") {
    const readiness r = ready_();
    return done(make_response(r.ready ? http::status::ok : http::status::service_unavailable, version,
                              (r.ready ? "ready: " : "not ready: ") + r.detail));
  }
  done(make_response(http::status::ok, version, metrics_(), metrics::text_content_type, true));
}

}  // namespace fg::worker
