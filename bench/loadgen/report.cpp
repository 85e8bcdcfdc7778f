#include "report.hpp"

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

void put_error_counts(json& object, const error_counts& errors) {
  object["connect_failed"] = errors.connect_failed;
  object["connect_timeout"] = errors.connect_timeout;
  object["handshake_rejected"] = errors.handshake_rejected;
  object["closed_by_server"] = errors.closed_by_server;
  object["disconnected"] = errors.disconnected;
  object["protocol_error"] = errors.protocol_error;
}

json summary_json(const run_summary& s) {
  const auto& o = *s.opts;
  const auto& t = s.totals;
  const double pct_of_core = s.measured_s > 0 ? 100.0 * s.cpu_window.total() / s.measured_s : 0.0;
  json latency = {{"count", t.latency.count()}};
  for (const auto& row : latency_rows) latency[row.name] = rounded(us(t.latency.percentile(row.q)), 1);
  latency["max"] = rounded(us(t.latency.max()), 1);
  latency["mean"] = rounded(t.latency.mean() / 1000.0, 1);
  json errors = {{"total", t.errors.total()}};
  put_error_counts(errors, t.errors);
  errors["close_1008"] = t.close_codes_1008;
  errors["close_1009"] = t.close_codes_1009;
  errors["close_other"] = t.close_codes_other;
  json doc = {
      {"tool", "framegate-loadgen"},
      {"url", o.url},
      {"mode", mode_name(o.run_mode)},
      {"connections", o.connections},
      {"size", o.size},
      {"opcode", o.message_opcode == opcode::text ? "text" : "binary"},
      {"threads", o.threads},
      {"rate_per_conn_ms", o.rate_per_conn_ms},
      {"window", o.window},
      {"offered_msg_per_s",
       rounded(o.run_mode == mode::rate ? static_cast<double>(o.connections) * 1000.0 / o.rate_per_conn_ms : 0.0, 1)},
      {"warmup_s", o.warmup_s},
      {"duration_s", o.duration_s},
      {"measured_s", rounded(s.measured_s, 3)},
      {"wall_s", rounded(s.wall_s, 3)},
      {"established", t.established},
      {"open_at_end", t.open_at_end},
      {"errors", errors},
      {"first_error", t.first_error},
      {"sent", t.sent_window},
      {"received", t.received_window},
      {"sent_total", t.sent},
      {"received_total", t.received},
      {"sent_msg_per_s", rounded(per_s(t.sent_window, s.measured_s), 1)},
      {"msg_per_s", rounded(per_s(t.received_window, s.measured_s), 1)},
      {"deflate", o.deflate},
      {"deflate_threshold", o.deflate_threshold},
      {"payload", o.json_payload ? "json" : "pattern"},
      {"compressed_in", t.compressed_in},
      {"compressed_out", t.compressed_out},
      {"wire_bytes_in", t.wire_in_window},
      {"wire_bytes_out", t.wire_out_window},
      {"latency_us", latency},
      {"send_lag_us",
       {{"p50", rounded(us(t.send_lag.percentile(0.5)), 1)},
        {"p99", rounded(us(t.send_lag.percentile(0.99)), 1)},
        {"p99_9", rounded(us(t.send_lag.percentile(0.999)), 1)},
        {"max", rounded(us(t.send_lag.max()), 1)}}},
      {"mismatches",
       {{"total", s.mismatches()},
        {"length", t.mismatched_length},
        {"opcode", t.mismatched_opcode},
        {"payload", t.mismatched_payload},
        {"unexpected", t.unexpected_echoes}}},
      {"unanswered", t.unanswered},
      {"unanswered_on_dead_connections", t.unanswered_closed},
      {"backlog_at_end", t.backlog_at_end},
      {"loadgen_cpu",
       {{"user_s", rounded(s.cpu_window.user_s, 3)},
        {"sys_s", rounded(s.cpu_window.sys_s, 3)},
        {"pct_of_core", rounded(pct_of_core, 1)},
        {"run_user_s", rounded(s.cpu_run.user_s, 3)},
        {"run_sys_s", rounded(s.cpu_run.sys_s, 3)}}},
  };
  if (s.have_server) {
    doc["server"] = {
        {"pid", o.server_pid},
        {"cpu_user_s", rounded(s.server_measure_end.user_s - s.server_measure_start.user_s, 3)},
        {"cpu_sys_s", rounded(s.server_measure_end.sys_s - s.server_measure_start.sys_s, 3)},
        {"cpu_pct_of_core", rounded(s.measured_s > 0 ? 100.0 * s.server_cpu_s() / s.measured_s : 0.0, 1)},
        {"rss_before_kib", s.server_before.rss_kib},
        {"rss_end_kib", s.server_measure_end.rss_kib},
        {"hwm_kib", s.server_after.hwm_kib},
        {"rss_per_conn_kib", rounded(s.server_rss_per_conn_kib(), 3)},
    };
  }
  if (s.have_machine && s.measured_s > 0) {
    doc["machine_cpu"] = {
        {"busy_pct_of_core", rounded(100.0 * s.machine_busy_s() / s.measured_s, 1)},
        {"other_pct_of_core", rounded(100.0 * s.others_s() / s.measured_s, 1)},
        {"steal_pct_of_core",
         rounded(100.0 * (s.machine_measure_end.steal_s - s.machine_measure_start.steal_s) / s.measured_s, 1)},
    };
  }
  doc["interrupted"] = s.interrupted;
  doc["ok"] = !s.failed();
  return doc;
}

bool write_json(const std::string& path, const run_summary& s, std::string& error) {
  return write_json_file(path, summary_json(s), error);
}

}  // namespace loadgen
