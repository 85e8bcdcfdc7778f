// The gateway's exposition from synthetic thread snapshots: threads are
// summed, workers are merged by id, labels are bounded.
#include "gateway/metrics/gateway_metrics.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/support/text_lines.hpp"

namespace {

using namespace fg::gateway;

using fg::test::has_line;

thread_snapshot one_thread(std::uint64_t opened, std::uint16_t close_code) {
  thread_snapshot t;
  t.counters.connections_opened = opened;
  ++t.counters.closed_by_code[close_code_group::of(close_code)];
  ++t.counters.messages_received[data_index(fg::ws::opcode::binary)];
  t.counters.payload_received[data_index(fg::ws::opcode::binary)] += 100;
  t.counters.message_size.observe(100);
  t.counters.deflate_connections_opened = 3;
  t.counters.deflate_connections_closed = 1;
  t.counters.deflate_bytes_out_uncompressed = 1000;
  t.counters.deflate_bytes_out_compressed = 250;
  ++t.counters.errors_by_kind[static_cast<std::size_t>(fg::ws::error::invalid_utf8)];
  ++t.counters.refused_by_status[refusal_status::of(426)];
  ++t.counters.refused_by_status[refusal_status::of(499)];
  return t;
}

TEST(GatewayMetrics, ThreadsAreSummed) {
  std::vector<thread_snapshot> threads{one_thread(5, 1000), one_thread(7, 1006)};
  threads[1].send_queue_bytes = 300;
  const std::string text = render_gateway_metrics(threads, {}, "g1");
  EXPECT_TRUE(has_line(text, "framegate_gateway_connections_opened_total 12")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_connections_active 10")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_connections_closed_total{code=\"1000\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_connections_closed_total{code=\"1006\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_messages_received_total{opcode=\"binary\"} 2")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_received_payload_bytes_total{opcode=\"binary\"} 200")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_message_size_bytes_bucket{le=\"256\"} 2")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_protocol_errors_total{kind=\"invalid_utf8\"} 2")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_protocol_errors_total{kind=\"reserved_bits\"} 0")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_handshakes_refused_total{status=\"426\"} 2")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_handshakes_refused_total{status=\"other\"} 2")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_send_queue_bytes 300")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_deflate_connections 4")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_deflate_uncompressed_bytes_total{direction=\"out\"} 2000")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_deflate_compressed_bytes_total{direction=\"out\"} 500")) << text;
  EXPECT_EQ(text.find("framegate_gateway_worker"), std::string::npos) << "echo mode has no workers";
}

TEST(GatewayMetrics, ClientLimitsAreSummedByWhatAndAction) {
  std::vector<thread_snapshot> threads(2);
  for (auto& t : threads) {
    t.counters.handshakes_rate_limited = 1;
    t.counters.refused_per_ip = 2;
    t.counters.rate_limited[1 * 2 + 1] = 3;  // bytes, dropped
    t.counters.dropped_pongs = 4;
    ++t.counters.refused_by_status[refusal_status::of(429)];
  }
  const std::string text = render_gateway_metrics(threads, {}, "g1");
  EXPECT_TRUE(has_line(text, R"(framegate_gateway_rate_limited_total{what="handshake",action="refused"} 2)")) << text;
  EXPECT_TRUE(has_line(text, R"(framegate_gateway_rate_limited_total{what="bytes",action="dropped"} 6)")) << text;
  EXPECT_TRUE(has_line(text, R"(framegate_gateway_rate_limited_total{what="message",action="closed"} 0)")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_connections_refused_per_ip_total 4")) << text;
  EXPECT_TRUE(has_line(text, R"(framegate_gateway_backpressure_events_total{action="pong_dropped"} 8)")) << text;
  EXPECT_TRUE(has_line(text, R"(framegate_gateway_handshakes_refused_total{status="429"} 2)")) << text;
}

TEST(GatewayMetrics, CloseCodesAreABoundedLabel) {
  EXPECT_EQ(close_code_group::label(close_code_group::of(1001)), "1001");
  EXPECT_EQ(close_code_group::label(close_code_group::of(3000)), "3xxx");
  EXPECT_EQ(close_code_group::label(close_code_group::of(4999)), "4xxx");
  EXPECT_EQ(close_code_group::label(close_code_group::of(2000)), "other");
  EXPECT_EQ(close_code_group::label(close_code_group::of(1016)), "other");
}

TEST(GatewayMetrics, WorkersAreMergedByIdAcrossThreads) {
  std::vector<thread_snapshot> threads(2);
  for (auto& t : threads) {
    t.routing = true;
    t.workers.push_back({"w1", 1, 3, 4, 1, 2, 500, 65536});
    t.workers.push_back({"w2", 0, 0, 9, 0, 0, 0, 0});  // gone: its links are down, its counters stay
    t.routes.roundtrip_ns.observe(2'000'000);
  }
  fg::gateway::admin_counters admin;
  admin.count_publish(200);
  admin.count_publish(200);
  admin.count_publish(401);
  const std::string text = render_gateway_metrics(threads, admin, "g1");
  EXPECT_TRUE(has_line(text, "framegate_gateway_workers 1")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_worker_links{worker=\"w1\"} 2")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_worker_links{worker=\"w2\"} 0")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_worker_connections{worker=\"w1\"} 6")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_worker_connections_routed_total{worker=\"w2\"} 18")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_worker_credit_pauses_total{worker=\"w1\"} 2")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_worker_unacked_messages{worker=\"w1\"} 4")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_worker_unacked_bytes{worker=\"w1\"} 1000")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_worker_replay_held_bytes{worker=\"w1\"} 131072")) << text;
  EXPECT_TRUE(
      has_line(text, "framegate_build_info{version=\"" FRAMEGATE_VERSION "\",component=\"gateway\",id=\"g1\"} 1"))
      << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_worker_roundtrip_seconds_bucket{le=\"0.0025\"} 2")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_worker_roundtrip_seconds_bucket{le=\"0.001\"} 0")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_api_publishes_total{status=\"200\"} 2")) << text;
  EXPECT_TRUE(has_line(text, "framegate_gateway_api_publishes_total{status=\"401\"} 1")) << text;
  // Statuses not given yet are exported as zeros, so that rate() starts from the first scrape.
  EXPECT_TRUE(has_line(text, "framegate_gateway_api_publishes_total{status=\"413\"} 0")) << text;
}

}  // namespace
