// The worker's admin answers: health, readiness with its reason, metrics
// from the dispatcher's counters.
#include "worker/admin/worker_routes.hpp"

#include <gtest/gtest.h>

#include "worker/metrics/worker_metrics.hpp"

namespace {

namespace http = boost::beast::http;
using namespace fg::worker;

fg::httpd::response ask(worker_routes& routes, http::verb method, const char* target) {
  fg::httpd::request req{method, target, 11};
  if (auto early = routes.screen(req.base())) return *early;
  fg::httpd::response got;
  routes.handle(req, [&](fg::httpd::response r) { got = std::move(r); });
  return got;
}

TEST(WorkerRoutes, HealthReadinessAndMetrics) {
  readiness state{false, "no gateway link found in /tmp/x"};
  worker_routes routes([&] { return state; }, [] { return std::string("framegate_worker_connections 3\n"); });
  EXPECT_EQ(ask(routes, http::verb::get, "/healthz").result(), http::status::ok);
  auto r = ask(routes, http::verb::get, "/readyz");
  EXPECT_EQ(r.result(), http::status::service_unavailable);
  EXPECT_EQ(r.body(), "not ready: no gateway link found in /tmp/x\n");
  state = {true, "2 gateway link(s), redis broker up"};
  r = ask(routes, http::verb::get, "/readyz");
  EXPECT_EQ(r.result(), http::status::ok);
  EXPECT_EQ(r.body(), "ready: 2 gateway link(s), redis broker up\n");
  r = ask(routes, http::verb::get, "/metrics?x=1");
  EXPECT_EQ(r.result(), http::status::ok);
  EXPECT_EQ(r.body(), "framegate_worker_connections 3\n");
  EXPECT_EQ(r[http::field::content_type], "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(ask(routes, http::verb::post, "/metrics").result(), http::status::method_not_allowed);
  EXPECT_EQ(ask(routes, http::verb::get, "/api/publish").result(), http::status::not_found);
}

TEST(WorkerMetrics, AppsBrokerAndProcess) {
  dispatcher_stats core;
  core.connections_resumed = 2;
  core.sends_out = 9;
  std::vector<app_stats> apps(2);
  apps[0].path = "/echo";
  apps[0].handled = 5;
  apps[0].handler_ns.observe(30'000);
  apps[1].path = "/rooms";
  apps[1].errors = 1;
  fg::metrics::histogram publish(fg::metrics::buckets::latency_ns);
  publish.observe(400'000);
  broker_report b;
  b.kind = "redis";
  b.up = true;
  b.missed = 4;
  b.publish_ns = &publish;
  const std::string id = "w9";
  const std::string text = render_worker_metrics({id, core, apps, 7, 2, b, 3});
  for (const char* line :
       {"framegate_worker_connections 7", "framegate_worker_messages_handled_total{path=\"/echo\"} 5",
        "framegate_worker_app_errors_total{path=\"/rooms\"} 1",
        "framegate_worker_handler_seconds_bucket{path=\"/echo\",le=\"5e-05\"} 1",
        "framegate_worker_connections_resumed_total 2", "framegate_worker_sends_total 9",
        "framegate_worker_gateway_links 2", "framegate_worker_link_write_waits_total 3",
        "framegate_worker_broker_up{broker=\"redis\"} 1", "framegate_worker_broker_missed_total 4",
        "framegate_build_info{version=\"" FRAMEGATE_VERSION "\",component=\"worker\",id=\"w9\"} 1",
        "framegate_worker_broker_publish_seconds_bucket{le=\"0.0005\"} 1"})
    EXPECT_NE(text.find(std::string("\n") + line + "\n"), std::string::npos) << line << "\n" << text;
}

}  // namespace
