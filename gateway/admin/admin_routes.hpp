// What the gateway's admin listener answers:
//
//   GET  /healthz       200 "ok" while the process runs
//   GET  /readyz        200 once a worker is registered (always in --echo), else 503
//   GET  /metrics       Prometheus text format (docs/METRICS.md)
//   POST /api/publish   Bearer token; {"room":R,"data":V} or {"messages":[...]}
//                       -> 200 {"published":N}
//
// screen() sees only the header (path 404, method 405, token 403/401,
// Content-Length 413), so nothing is read of a body that will be refused.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "common/httpd/service.hpp"
#include "gateway/admin/admin_backend.hpp"
#include "gateway/metrics/gateway_stats.hpp"

namespace fg::gateway::admin {

using httpd::request;
using httpd::response;

struct admin_options {
  std::string api_token;           // empty: the publish API is disabled (403)
  std::size_t max_body_bytes = 0;  // --max-message-size
};

class admin_routes final : public httpd::service {
 public:
  admin_routes(admin_options options, admin_backend& backend) : options_(std::move(options)), backend_(backend) {}

  std::optional<response> screen(const boost::beast::http::request_header<>& header) const override;
  void handle(const request& req, std::function<void(response)> done) override;
  [[nodiscard]] std::size_t max_body_bytes() const noexcept override { return options_.max_body_bytes; }
  [[nodiscard]] response body_too_large(unsigned version) const override;

 private:
  std::optional<response> screen_publish(const boost::beast::http::request_header<>& header) const;
  void handle_publish(const request& req, std::function<void(response)> done);

  admin_options options_;
  admin_backend& backend_;
  // Counted on the admin thread; screen() is const but counts its refusals.
  mutable admin_counters counters_;
};

}  // namespace fg::gateway::admin
