#include "report.hpp"

#include <cerrno>
#include <cstring>

namespace loadgen {

namespace {

double per_s(std::uint64_t count, double seconds) { return seconds > 0 ? static_cast<double>(count) / seconds : 0; }
double us(std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; }

struct latency_row {
  const char* name;
  double q;
};
constexpr latency_row latency_rows[] = {{"p50", 0.50}, {"p90", 0.90}, {"p99", 0.99}, {"p99_9", 0.999}};

}  // namespace

double run_summary::server_rss_per_conn_kib() const {
  if (!have_server || totals.open_at_end == 0) return 0;
  return (static_cast<double>(server_measure_end.rss_kib) - static_cast<double>(server_before.rss_kib)) /
         static_cast<double>(totals.open_at_end);
}

bool run_summary::failed() const {
  if (mismatches() > 0) return true;
  if (totals.unanswered > 0) return true;  // the server kept a message it should have echoed
  // An established connection lost mid-run (no close from us) is a server
  // defect for an echo benchmark; failed connects are only reported.
  if (totals.errors.closed_by_server + totals.errors.disconnected + totals.errors.protocol_error > 0) return true;
  return totals.established == 0;
}

void print_summary(std::FILE* out, const run_summary& s) {
  const auto& o = *s.opts;
  const auto& t = s.totals;
  std::fprintf(out, "framegate-loadgen summary\n");
  std::fprintf(out, "  target        %s  mode=%s  connections=%u  size=%zu  opcode=%s  threads=%u\n", o.url.c_str(),
               mode_name(o.run_mode), o.connections, o.size, o.message_opcode == opcode::text ? "text" : "binary",
               o.threads);
  if (o.run_mode == mode::rate) {
    std::fprintf(out, "  offered       %.0f msg/s (every %.3f ms per connection)\n",
                 static_cast<double>(o.connections) * 1000.0 / o.rate_per_conn_ms, o.rate_per_conn_ms);
  } else if (o.run_mode == mode::window) {
    std::fprintf(out, "  window        %u in flight per connection\n", o.window);
  }
  std::fprintf(out, "  connections   established=%llu open_at_end=%llu errors=%llu\n",
               static_cast<unsigned long long>(t.established), static_cast<unsigned long long>(t.open_at_end),
               static_cast<unsigned long long>(t.errors.total()));
  if (t.errors.total() > 0) {
    std::fprintf(out,
                 "  errors        connect_failed=%llu connect_timeout=%llu handshake_rejected=%llu "
                 "closed_by_server=%llu disconnected=%llu protocol_error=%llu\n",
                 static_cast<unsigned long long>(t.errors.connect_failed),
                 static_cast<unsigned long long>(t.errors.connect_timeout),
                 static_cast<unsigned long long>(t.errors.handshake_rejected),
                 static_cast<unsigned long long>(t.errors.closed_by_server),
                 static_cast<unsigned long long>(t.errors.disconnected),
                 static_cast<unsigned long long>(t.errors.protocol_error));
    std::fprintf(out, "  first error   %s\n", t.first_error.c_str());
  }
  if (o.run_mode != mode::idle) {
    std::fprintf(out, "  measured      %.2f s: sent %llu (%.0f msg/s), received %llu (%.0f msg/s)\n", s.measured_s,
                 static_cast<unsigned long long>(t.sent_window), per_s(t.sent_window, s.measured_s),
                 static_cast<unsigned long long>(t.received_window), per_s(t.received_window, s.measured_s));
    std::fprintf(out, "  latency us    n=%llu", static_cast<unsigned long long>(t.latency.count()));
    for (const auto& row : latency_rows) std::fprintf(out, " %s=%.1f", row.name, us(t.latency.percentile(row.q)));
    std::fprintf(out, " max=%.1f mean=%.1f\n", us(t.latency.max()), t.latency.mean() / 1000.0);
    if (o.run_mode == mode::rate) {
      std::fprintf(
          out, "  send lag us   p50=%.1f p99=%.1f max=%.1f (loadgen lateness vs the schedule; part of the latency)\n",
          us(t.send_lag.percentile(0.5)), us(t.send_lag.percentile(0.99)), us(t.send_lag.max()));
    }
    std::fprintf(
        out,
        "  echo checks   length_mismatch=%llu opcode_mismatch=%llu payload_mismatch=%llu "
        "unexpected=%llu unanswered=%llu unanswered_on_dead_conns=%llu",
        static_cast<unsigned long long>(t.mismatched_length), static_cast<unsigned long long>(t.mismatched_opcode),
        static_cast<unsigned long long>(t.mismatched_payload), static_cast<unsigned long long>(t.unexpected_echoes),
        static_cast<unsigned long long>(t.unanswered), static_cast<unsigned long long>(t.unanswered_closed));
    if (o.run_mode == mode::rate) {
      std::fprintf(out, " backlog_at_end=%llu", static_cast<unsigned long long>(t.backlog_at_end));
    }
    std::fprintf(out, "\n");
    std::fprintf(out, "  wire          %.1f MB/s in, %.1f MB/s out in the measured window",
                 per_s(t.wire_in_window, s.measured_s) / 1e6, per_s(t.wire_out_window, s.measured_s) / 1e6);
    if (o.deflate)
      std::fprintf(out, "; permessage-deflate: %llu messages arrived compressed, %llu sent compressed",
                   static_cast<unsigned long long>(t.compressed_in), static_cast<unsigned long long>(t.compressed_out));
    std::fprintf(out, "\n");
  }
  std::fprintf(out,
               "  loadgen cpu   %.2f s (user %.2f + sys %.2f) in the measured window = %.1f%% of one core; "
               "whole run %.2f s over %.1f s\n",
               s.cpu_window.total(), s.cpu_window.user_s, s.cpu_window.sys_s,
               s.measured_s > 0 ? 100.0 * s.cpu_window.total() / s.measured_s : 0.0, s.cpu_run.total(), s.wall_s);
  if (s.have_server) {
    std::fprintf(out,
                 "  server pid %d cpu %.2f s in the measured window = %.1f%% of one core; RSS before %lu KiB, "
                 "end of window %lu KiB, peak %lu KiB\n",
                 o.server_pid, s.server_cpu_s(), s.measured_s > 0 ? 100.0 * s.server_cpu_s() / s.measured_s : 0.0,
                 s.server_before.rss_kib, s.server_measure_end.rss_kib, s.server_after.hwm_kib);
    if (o.run_mode == mode::idle) {
      std::fprintf(out, "  server memory %.3f KiB per open connection ((end of window - before) / open)\n",
                   s.server_rss_per_conn_kib());
    }
  }
  if (s.have_machine && s.measured_s > 0) {
    const double other = s.others_s();
    std::fprintf(out,
                 "  machine cpu   %.1f%% of one core busy in the window (all processes); other than loadgen%s: "
                 "%.1f%%; steal %.1f%%\n",
                 100.0 * s.machine_busy_s() / s.measured_s, s.have_server ? " and server" : "",
                 100.0 * other / s.measured_s,
                 100.0 * (s.machine_measure_end.steal_s - s.machine_measure_start.steal_s) / s.measured_s);
  }
  if (s.interrupted) std::fprintf(out, "  (interrupted)\n");
  std::fprintf(out, "  verdict       %s\n", s.failed() ? "FAIL" : "ok");
}

bool write_json(const std::string& path, const run_summary& s, std::string& error) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  const auto& o = *s.opts;
  const auto& t = s.totals;
  auto u = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
  std::fprintf(f, "{\n");
  std::fprintf(f, "  \"tool\": \"framegate-loadgen\",\n");
  std::fprintf(f, "  \"url\": \"%s\",\n", o.url.c_str());  // validated ws://127.x URL: nothing to escape
  std::fprintf(f, "  \"mode\": \"%s\",\n", mode_name(o.run_mode));
  std::fprintf(f, "  \"connections\": %u,\n", o.connections);
  std::fprintf(f, "  \"size\": %zu,\n", o.size);
  std::fprintf(f, "  \"opcode\": \"%s\",\n", o.message_opcode == opcode::text ? "text" : "binary");
  std::fprintf(f, "  \"threads\": %u,\n", o.threads);
  std::fprintf(f, "  \"rate_per_conn_ms\": %g,\n", o.rate_per_conn_ms);
  std::fprintf(f, "  \"window\": %u,\n", o.window);
  std::fprintf(f, "  \"offered_msg_per_s\": %.1f,\n",
               o.run_mode == mode::rate ? static_cast<double>(o.connections) * 1000.0 / o.rate_per_conn_ms : 0.0);
  std::fprintf(f, "  \"warmup_s\": %g,\n  \"duration_s\": %g,\n  \"measured_s\": %.3f,\n  \"wall_s\": %.3f,\n",
               o.warmup_s, o.duration_s, s.measured_s, s.wall_s);
  std::fprintf(f, "  \"established\": %llu,\n  \"open_at_end\": %llu,\n", u(t.established), u(t.open_at_end));
  std::fprintf(f,
               "  \"errors\": {\"total\": %llu, \"connect_failed\": %llu, \"connect_timeout\": %llu, "
               "\"handshake_rejected\": %llu, \"closed_by_server\": %llu, \"disconnected\": %llu, "
               "\"protocol_error\": %llu, \"close_1008\": %llu, \"close_1009\": %llu, \"close_other\": %llu},\n",
               u(t.errors.total()), u(t.errors.connect_failed), u(t.errors.connect_timeout),
               u(t.errors.handshake_rejected), u(t.errors.closed_by_server), u(t.errors.disconnected),
               u(t.errors.protocol_error), u(t.close_codes_1008), u(t.close_codes_1009), u(t.close_codes_other));
  std::string first_error;
  for (char c : t.first_error) {
    if (c == '"' || c == '\\') first_error += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) first_error += c;
  }
  std::fprintf(f, "  \"first_error\": \"%s\",\n", first_error.c_str());
  std::fprintf(f, "  \"sent\": %llu,\n  \"received\": %llu,\n", u(t.sent_window), u(t.received_window));
  std::fprintf(f, "  \"sent_total\": %llu,\n  \"received_total\": %llu,\n", u(t.sent), u(t.received));
  std::fprintf(f, "  \"sent_msg_per_s\": %.1f,\n  \"msg_per_s\": %.1f,\n", per_s(t.sent_window, s.measured_s),
               per_s(t.received_window, s.measured_s));
  std::fprintf(f, "  \"deflate\": %s,\n  \"deflate_threshold\": %zu,\n  \"payload\": \"%s\",\n",
               o.deflate ? "true" : "false", o.deflate_threshold, o.json_payload ? "json" : "pattern");
  std::fprintf(f, "  \"compressed_in\": %llu,\n  \"compressed_out\": %llu,\n", u(t.compressed_in), u(t.compressed_out));
  std::fprintf(f, "  \"wire_bytes_in\": %llu,\n  \"wire_bytes_out\": %llu,\n", u(t.wire_in_window),
               u(t.wire_out_window));
  std::fprintf(f, "  \"latency_us\": {\"count\": %llu", u(t.latency.count()));
  for (const auto& row : latency_rows) std::fprintf(f, ", \"%s\": %.1f", row.name, us(t.latency.percentile(row.q)));
  std::fprintf(f, ", \"max\": %.1f, \"mean\": %.1f},\n", us(t.latency.max()), t.latency.mean() / 1000.0);
  std::fprintf(f, "  \"send_lag_us\": {\"p50\": %.1f, \"p99\": %.1f, \"p99_9\": %.1f, \"max\": %.1f},\n",
               us(t.send_lag.percentile(0.5)), us(t.send_lag.percentile(0.99)), us(t.send_lag.percentile(0.999)),
               us(t.send_lag.max()));
  std::fprintf(f,
               "  \"mismatches\": {\"total\": %llu, \"length\": %llu, \"opcode\": %llu, \"payload\": %llu, "
               "\"unexpected\": %llu},\n",
               u(s.mismatches()), u(t.mismatched_length), u(t.mismatched_opcode), u(t.mismatched_payload),
               u(t.unexpected_echoes));
  std::fprintf(f, "  \"unanswered\": %llu,\n  \"unanswered_on_dead_connections\": %llu,\n  \"backlog_at_end\": %llu,\n",
               u(t.unanswered), u(t.unanswered_closed), u(t.backlog_at_end));
  std::fprintf(f,
               "  \"loadgen_cpu\": {\"user_s\": %.3f, \"sys_s\": %.3f, \"pct_of_core\": %.1f, "
               "\"run_user_s\": %.3f, \"run_sys_s\": %.3f},\n",
               s.cpu_window.user_s, s.cpu_window.sys_s,
               s.measured_s > 0 ? 100.0 * s.cpu_window.total() / s.measured_s : 0.0, s.cpu_run.user_s, s.cpu_run.sys_s);
  if (s.have_server) {
    std::fprintf(f,
                 "  \"server\": {\"pid\": %d, \"cpu_user_s\": %.3f, \"cpu_sys_s\": %.3f, \"cpu_pct_of_core\": %.1f, "
                 "\"rss_before_kib\": %lu, \"rss_end_kib\": %lu, \"hwm_kib\": %lu, \"rss_per_conn_kib\": %.3f},\n",
                 o.server_pid, s.server_measure_end.user_s - s.server_measure_start.user_s,
                 s.server_measure_end.sys_s - s.server_measure_start.sys_s,
                 s.measured_s > 0 ? 100.0 * s.server_cpu_s() / s.measured_s : 0.0, s.server_before.rss_kib,
                 s.server_measure_end.rss_kib, s.server_after.hwm_kib, s.server_rss_per_conn_kib());
  }
  if (s.have_machine && s.measured_s > 0) {
    const double other = s.others_s();
    std::fprintf(
        f,
        "  \"machine_cpu\": {\"busy_pct_of_core\": %.1f, \"other_pct_of_core\": %.1f, \"steal_pct_of_core\": %.1f},\n",
        100.0 * s.machine_busy_s() / s.measured_s, 100.0 * other / s.measured_s,
        100.0 * (s.machine_measure_end.steal_s - s.machine_measure_start.steal_s) / s.measured_s);
  }
  std::fprintf(f, "  \"interrupted\": %s,\n  \"ok\": %s\n}\n", s.interrupted ? "true" : "false",
               s.failed() ? "false" : "true");
  const bool ok = std::fclose(f) == 0;
  if (!ok) error = path + ": write failed";
  return ok;
}

}  // namespace loadgen
