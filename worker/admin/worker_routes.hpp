// What a worker's admin listener answers (on the worker's own loop, so a
// worker too busy to answer is seen as unhealthy):
//
//   GET /healthz   200 "ok" while the loop runs
//   GET /readyz    200 when every gateway link found is up and the broker
//                  can deliver across workers; else 503 with the reason
//   GET /metrics   Prometheus text format (docs/METRICS.md)
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "common/httpd/service.hpp"

namespace fg::worker {

struct readiness {
  bool ready = false;
  std::string detail;  // one line: why not, or what is up
};

class worker_routes final : public httpd::service {
 public:
  worker_routes(std::function<readiness()> ready, std::function<std::string()> metrics)
      : ready_(std::move(ready)), metrics_(std::move(metrics)) {}

  std::optional<httpd::response> screen(const boost::beast::http::request_header<>& header) const override;
  void handle(const httpd::request& req, std::function<void(httpd::response)> done) override;

 private:
  std::function<readiness()> ready_;
  std::function<std::string()> metrics_;
};

}  // namespace fg::worker
