// The text the exposition writes is what Prometheus parses: check it line
// by line, and that every family of a full process scrape is well formed.
#include "common/metrics/exposition.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>

#include "tests/unit/support/text_lines.hpp"

namespace {

using namespace fg::metrics;

using fg::test::has_line;

TEST(Exposition, CountersAndGaugesWithHelpTypeAndLabels) {
  exposition out;
  out.counter("framegate_test_events_total", "Events.", 3);
  out.family("framegate_test_closed_total", "Closed, by code.", metric_kind::counter)
      .add(1, {{"code", "1000"}})
      .add(2, {{"code", "1006"}});
  out.gauge("framegate_test_queue_bytes", "Bytes queued.", 4096);
  const std::string text = out.text();
  EXPECT_TRUE(has_line(text, "# HELP framegate_test_events_total Events.")) << text;
  EXPECT_TRUE(has_line(text, "# TYPE framegate_test_events_total counter")) << text;
  EXPECT_TRUE(has_line(text, "framegate_test_events_total 3")) << text;
  EXPECT_TRUE(has_line(text, "framegate_test_closed_total{code=\"1000\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "framegate_test_closed_total{code=\"1006\"} 2")) << text;
  EXPECT_TRUE(has_line(text, "# TYPE framegate_test_queue_bytes gauge")) << text;
  EXPECT_TRUE(has_line(text, "framegate_test_queue_bytes 4096")) << text;
}

TEST(Exposition, HistogramBucketsAreCumulativeAndScaled) {
  static constexpr std::array<std::uint64_t, 2> bounds{1'000'000, 10'000'000};  // 1 ms, 10 ms in ns
  histogram h(bounds);
  h.observe(500'000);
  h.observe(2'000'000);
  h.observe(20'000'000);
  exposition out;
  out.histogram("framegate_test_latency_seconds", "Latency.", h, 1e-9);
  const std::string text = out.text();
  EXPECT_TRUE(has_line(text, "# TYPE framegate_test_latency_seconds histogram")) << text;
  EXPECT_TRUE(has_line(text, "framegate_test_latency_seconds_bucket{le=\"0.001\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "framegate_test_latency_seconds_bucket{le=\"0.01\"} 2")) << text;
  EXPECT_TRUE(has_line(text, "framegate_test_latency_seconds_bucket{le=\"+Inf\"} 3")) << text;
  EXPECT_TRUE(has_line(text, "framegate_test_latency_seconds_count 3")) << text;
  EXPECT_TRUE(has_line(text, "framegate_test_latency_seconds_sum 0.0225")) << text;
}

TEST(Exposition, LabelValuesAreEscaped) {
  exposition out;
  out.family("framegate_test_info", "Info.", metric_kind::gauge).add(1, {{"path", "/a\"b\\c\nd"}});
  EXPECT_TRUE(has_line(out.text(), R"(framegate_test_info{path="/a\"b\\c\nd"} 1)")) << out.text();
}

TEST(Exposition, ProcessMetricsDescribeThisProcess) {
  exposition out;
  out.process_metrics("test", "1.2.3");
  const std::string text = out.text();
  EXPECT_TRUE(has_line(text, "framegate_build_info{version=\"1.2.3\",component=\"test\"} 1")) << text;
  for (const char* name :
       {"framegate_process_cpu_seconds_total", "framegate_process_resident_memory_bytes", "framegate_process_open_fds",
        "framegate_process_max_fds", "framegate_process_start_time_seconds"})
    EXPECT_NE(text.find(std::string("\n") + name + " "), std::string::npos) << name;
  EXPECT_EQ(text.find("\nframegate_process_resident_memory_bytes 0\n"), std::string::npos) << "RSS not read";
  EXPECT_EQ(text.find("\nframegate_process_open_fds 0\n"), std::string::npos) << "descriptors not counted";
}

}  // namespace
