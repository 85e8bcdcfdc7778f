// The --json summary of framegate-loadgen: the keys bench/*_report.py read,
// in the order the file has always had, the printed precision, and the file
// itself.
#include "report.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

using loadgen::json;

std::vector<std::string> keys_of(const json& object) {
  std::vector<std::string> keys;
  for (const auto& item : object.items()) keys.push_back(item.key());
  return keys;
}

struct summary_fixture : ::testing::Test {
  loadgen::options opts;
  loadgen::run_summary summary;
  summary_fixture() {
    opts.connections = 100;
    opts.rate_per_conn_ms = 10;
    summary.opts = &opts;
    summary.measured_s = 2.0;
    summary.totals.established = 100;
    summary.totals.received_window = 3;
  }
};

TEST_F(summary_fixture, HasEveryKeyInOrder) {
  const json doc = loadgen::summary_json(summary);
  EXPECT_EQ(keys_of(doc), (std::vector<std::string>{"tool",           "url",
                                                    "mode",           "connections",
                                                    "size",           "opcode",
                                                    "threads",        "rate_per_conn_ms",
                                                    "window",         "offered_msg_per_s",
                                                    "warmup_s",       "duration_s",
                                                    "measured_s",     "wall_s",
                                                    "established",    "open_at_end",
                                                    "errors",         "first_error",
                                                    "sent",           "received",
                                                    "sent_total",     "received_total",
                                                    "sent_msg_per_s", "msg_per_s",
                                                    "deflate",        "deflate_threshold",
                                                    "payload",        "compressed_in",
                                                    "compressed_out", "wire_bytes_in",
                                                    "wire_bytes_out", "latency_us",
                                                    "send_lag_us",    "mismatches",
                                                    "unanswered",     "unanswered_on_dead_connections",
                                                    "backlog_at_end", "loadgen_cpu",
                                                    "interrupted",    "ok"}));
  EXPECT_EQ(
      keys_of(doc["errors"]),
      (std::vector<std::string>{"total", "connect_failed", "connect_timeout", "handshake_rejected", "closed_by_server",
                                "disconnected", "protocol_error", "close_1008", "close_1009", "close_other"}));
  EXPECT_EQ(keys_of(doc["latency_us"]),
            (std::vector<std::string>{"count", "p50", "p90", "p99", "p99_9", "max", "mean"}));
  EXPECT_EQ(keys_of(doc["send_lag_us"]), (std::vector<std::string>{"p50", "p99", "p99_9", "max"}));
  EXPECT_EQ(keys_of(doc["mismatches"]),
            (std::vector<std::string>{"total", "length", "opcode", "payload", "unexpected"}));
  EXPECT_EQ(keys_of(doc["loadgen_cpu"]),
            (std::vector<std::string>{"user_s", "sys_s", "pct_of_core", "run_user_s", "run_sys_s"}));
}

TEST_F(summary_fixture, ValuesKeepTheirTypesAndPrecision) {
  summary.totals.first_error = "closed: \"bye\"\n";
  const json doc = loadgen::summary_json(summary);
  EXPECT_EQ(doc["mode"], "rate");
  EXPECT_EQ(doc["opcode"], "binary");
  EXPECT_EQ(doc["payload"], "pattern");
  EXPECT_TRUE(doc["connections"].is_number_unsigned());
  EXPECT_EQ(doc["offered_msg_per_s"], 10000.0);
  EXPECT_EQ(doc["msg_per_s"], 1.5);
  EXPECT_EQ(doc["deflate"], false);
  EXPECT_EQ(doc["first_error"], "closed: \"bye\"\n");
  EXPECT_EQ(doc["ok"], true);
  EXPECT_EQ(doc["interrupted"], false);
}

TEST_F(summary_fixture, ServerAndMachineOnlyWhenSampled) {
  summary.have_server = true;
  summary.server_measure_end.user_s = 0.5;
  summary.server_measure_end.sys_s = 0.25;
  summary.have_machine = true;
  const json doc = loadgen::summary_json(summary);
  const auto keys = keys_of(doc);
  ASSERT_GE(keys.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(keys.end() - 4, keys.end()),
            (std::vector<std::string>{"server", "machine_cpu", "interrupted", "ok"}));
  EXPECT_EQ(doc["server"]["cpu_pct_of_core"], 37.5);
  EXPECT_EQ(keys_of(doc["server"]),
            (std::vector<std::string>{"pid", "cpu_user_s", "cpu_sys_s", "cpu_pct_of_core", "rss_before_kib",
                                      "rss_end_kib", "hwm_kib", "rss_per_conn_kib"}));
  EXPECT_EQ(keys_of(doc["machine_cpu"]),
            (std::vector<std::string>{"busy_pct_of_core", "other_pct_of_core", "steal_pct_of_core"}));
}

TEST_F(summary_fixture, FailureIsNotOk) {
  summary.totals.unanswered = 1;
  EXPECT_EQ(loadgen::summary_json(summary)["ok"], false);
}

TEST(Rounded, KeepsThePrintedDecimals) {
  EXPECT_EQ(loadgen::rounded(123.456, 1), 123.5);
  EXPECT_EQ(loadgen::rounded(0.12345, 3), 0.123);
  EXPECT_EQ(loadgen::rounded(2.0, 4), 2.0);
  EXPECT_EQ(loadgen::rounded(-1.25, 0), -1.0);
}

TEST(WriteJsonFile, WritesOneParseableDocument) {
  const std::string path = ::testing::TempDir() + "loadgen_report_test_" + std::to_string(getpid()) + ".json";
  std::string error;
  ASSERT_TRUE(loadgen::write_json_file(path, json{{"a", 1}, {"s", std::string("bad \xff byte")}}, error)) << error;
  std::ifstream in(path);
  const json back = json::parse(in);
  EXPECT_EQ(back["a"], 1);
  EXPECT_EQ(back["s"], "bad \xEF\xBF\xBD byte");  // not UTF-8: replaced, not thrown
  std::remove(path.c_str());
}

TEST(WriteJsonFile, ReportsAPathItCannotWrite) {
  std::string error;
  EXPECT_FALSE(loadgen::write_json_file("/nonexistent-dir/x.json", json::object(), error));
  EXPECT_EQ(error.rfind("/nonexistent-dir/x.json: ", 0), 0u) << error;
}

}  // namespace
