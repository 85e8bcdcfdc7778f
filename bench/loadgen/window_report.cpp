#include "window_report.hpp"

namespace loadgen {

namespace {

double ms(std::uint64_t ns) { return static_cast<double>(ns) / 1e6; }
double pct_of(double seconds, double window_s) { return window_s > 0 ? 100.0 * seconds / window_s : 0.0; }

}  // namespace

probe_set::probe_set(const options& opts) {
  for (const auto& [name, pid] : opts.probe_pids) probes_.push_back({name, static_cast<pid_t>(pid), true, {}, {}});
}

void probe_set::sample(bool at_end) {
  for (auto& p : probes_) {
    if (!p.ok) continue;
    if (auto s = sample_server(p.pid))
      (at_end ? p.end : p.start) = *s;
    else
      p.ok = false;
  }
}

void probe_set::print(std::FILE* out, double window_s) const {
  for (const auto& p : probes_) {
    if (!p.ok) {
      std::fprintf(out, "  cpu %-9s pid %d: not sampled (gone)\n", p.name.c_str(), p.pid);
      continue;
    }
    const double u = p.end.user_s - p.start.user_s, s = p.end.sys_s - p.start.sys_s;
    std::fprintf(out, "  cpu %-9s %.1f%% (pid %d, user %.2f s, sys %.2f s, rss %lu KiB)\n", p.name.c_str(),
                 pct_of(u + s, window_s), p.pid, u, s, p.end.rss_kib);
  }
}

json probe_set::cpu_json(const cpu_usage& loadgen_window, const cpu_usage& loadgen_run, double window_s) const {
  json cpu = {{"loadgen",
               {{"user_s", rounded(loadgen_window.user_s, 3)},
                {"sys_s", rounded(loadgen_window.sys_s, 3)},
                {"pct", rounded(pct_of(loadgen_window.total(), window_s), 1)},
                {"run_user_s", rounded(loadgen_run.user_s, 3)},
                {"run_sys_s", rounded(loadgen_run.sys_s, 3)}}}};
  for (const auto& p : probes_) {
    if (!p.ok) {
      cpu[p.name] = nullptr;
      continue;
    }
    const double u = p.end.user_s - p.start.user_s, s = p.end.sys_s - p.start.sys_s;
    cpu[p.name] = {{"pid", p.pid},
                   {"user_s", rounded(u, 3)},
                   {"sys_s", rounded(s, 3)},
                   {"pct", rounded(pct_of(u + s, window_s), 1)},
                   {"rss_kib", p.end.rss_kib},
                   {"hwm_kib", p.end.hwm_kib}};
  }
  return cpu;
}

json latency_ms_json(const histogram& h) {
  return {{"count", h.count()},
          {"min", rounded(ms(h.min()), 4)},
          {"mean", rounded(h.mean() / 1e6, 4)},
          {"p50", rounded(ms(h.percentile(0.5)), 4)},
          {"p90", rounded(ms(h.percentile(0.9)), 4)},
          {"p99", rounded(ms(h.percentile(0.99)), 4)},
          {"p99_9", rounded(ms(h.percentile(0.999)), 4)},
          {"max", rounded(ms(h.max()), 4)}};
}

void print_latency_ms(std::FILE* out, const histogram& h) {
  std::fprintf(out, "  latency ms    p50=%.3f p90=%.3f p99=%.3f p99.9=%.3f max=%.3f (n=%llu)\n", ms(h.percentile(0.5)),
               ms(h.percentile(0.9)), ms(h.percentile(0.99)), ms(h.percentile(0.999)), ms(h.max()),
               static_cast<unsigned long long>(h.count()));
}

void print_loadgen_cpu(std::FILE* out, const cpu_usage& window, double window_s) {
  std::fprintf(out, "  cpu loadgen   %.1f%% of one core in the window (user %.2f s, sys %.2f s)\n",
               pct_of(window.total(), window_s), window.user_s, window.sys_s);
}

int finish_run(const options& opts, const json& doc, bool failed) {
  std::string error;
  if (!opts.json_path.empty() && !write_json_file(opts.json_path, doc, error)) {
    std::fprintf(stderr, "framegate-loadgen: cannot write %s\n", error.c_str());
    return 1;
  }
  return failed ? 1 : 0;
}

}  // namespace loadgen
