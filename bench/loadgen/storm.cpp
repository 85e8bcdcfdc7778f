#include "storm.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "clock.hpp"
#include "json_file.hpp"
#include "process.hpp"
#include "report.hpp"
#include "storm_worker.hpp"
#include "thread_share.hpp"
#include "window_report.hpp"

namespace loadgen {

int run_storm(const options& opts) {
  install_signal_handlers();
  raise_nofile_limit();

  storm_times times;
  const std::uint64_t run_start = now_ns();
  const cpu_usage cpu_start = process_cpu();
  times.measure = run_start + static_cast<std::uint64_t>(opts.warmup_s * 1e9);
  times.end = times.measure + static_cast<std::uint64_t>(opts.duration_s * 1e9);
  probe_set probes(opts);

  std::vector<std::unique_ptr<storm_progress>> progs;
  std::vector<std::unique_ptr<storm_worker>> workers;
  for (unsigned t = 0; t < opts.threads; ++t) {
    progs.push_back(std::make_unique<storm_progress>());
    workers.push_back(std::make_unique<storm_worker>(opts, thread_share(t, opts.threads, opts.connections), times,
                                                     *progs.back(), thread_seed(run_start, t)));
  }
  std::vector<std::thread> threads;
  threads.reserve(workers.size());
  for (auto& w : workers) threads.emplace_back([&w] { w->run(); });
  std::fprintf(stderr, "[loadgen] ready: storm of %u clients, %u token(s)\n", opts.connections,
               static_cast<unsigned>(opts.token_count));
  std::fflush(stderr);

  struct totals {
    std::uint64_t handshakes = 0, cycles = 0, errors = 0;
    bool finished = true;
  };
  auto read = [&] {
    totals t;
    for (const auto& p : progs) {
      t.handshakes += p->handshakes.load(std::memory_order_relaxed);
      t.cycles += p->cycles.load(std::memory_order_relaxed);
      t.errors += p->errors.load(std::memory_order_relaxed);
      t.finished = t.finished && p->finished.load(std::memory_order_acquire);
    }
    return t;
  };

  bool have_start = false, have_end = false, interrupted = false;
  cpu_usage cpu_m0, cpu_m1;
  std::uint64_t m0_at = 0, m1_at = 0;
  totals last;
  std::uint64_t last_print = run_start, next_print = run_start + ns_per_s;
  const std::uint64_t hard_stop = times.end + 5 * ns_per_s;  // workers finish within ~2 s of the end
  for (;;) {
    std::uint64_t wake = next_print;
    if (!have_start) wake = std::min(wake, times.measure);
    if (!have_end) wake = std::min(wake, times.end);
    sleep_until(std::min(wake, now_ns() + 50 * ns_per_ms));
    const std::uint64_t now = now_ns();
    if (!have_start && now >= times.measure) {
      cpu_m0 = process_cpu();
      probes.sample(false);
      m0_at = now;
      have_start = true;
    }
    const totals t = read();
    if ((stop_signalled() || now >= hard_stop) && !times.stop.load()) {
      interrupted = stop_signalled();
      times.stop.store(true);
    }
    if (!have_end && (now >= times.end || times.stop.load())) {
      cpu_m1 = process_cpu();
      probes.sample(true);
      m1_at = now;
      have_end = true;
    }
    if (now >= next_print) {
      const double dt = static_cast<double>(now - last_print) / 1e9;
      const char* phase = now < times.measure ? "warmup" : now < times.end ? "measure" : "drain";
      if (opts.progress)
        std::fprintf(stderr, "[loadgen] t=%.1fs %s handshakes/s=%.0f closes/s=%.0f errors=%llu\n",
                     static_cast<double>(now - run_start) / 1e9, phase,
                     static_cast<double>(t.handshakes - last.handshakes) / dt,
                     static_cast<double>(t.cycles - last.cycles) / dt, static_cast<unsigned long long>(t.errors));
      last = t;
      last_print = now;
      next_print += ns_per_s;
      if (next_print <= now) next_print = now + ns_per_s;
    }
    if (t.finished) break;
  }
  for (auto& th : threads) th.join();

  storm_result total;
  for (const auto& w : workers) total.merge(w->res());
  const double window_s = have_start && have_end && m1_at > m0_at ? static_cast<double>(m1_at - m0_at) / 1e9 : 0;
  const double nominal_s = opts.duration_s;  // the workers count by times.measure..end, not by our samples
  const double handshakes_per_s = static_cast<double>(total.handshakes_window) / nominal_s;
  const double cycles_per_s = static_cast<double>(total.cycles_window) / nominal_s;
  const cpu_usage cpu_w = cpu_m1 - cpu_m0;
  const cpu_usage cpu_run = process_cpu() - cpu_start;
  const error_counts& e = total.errors;
  const bool failed =
      e.handshake_rejected + e.closed_by_server + e.disconnected + e.protocol_error > 0 || total.handshakes_window == 0;

  std::printf("framegate-loadgen storm summary\n");
  std::printf("  target        %s  clients=%u tokens=%zu threads=%u\n", opts.url.c_str(), opts.connections,
              opts.token_count, opts.threads);
  std::printf("  window        %.2f s: %.0f handshakes/s, %.0f closes/s (%llu handshakes)\n", nominal_s,
              handshakes_per_s, cycles_per_s, static_cast<unsigned long long>(total.handshakes_window));
  std::printf("  whole run     %llu handshakes, %llu closes, %llu abandoned at the end\n",
              static_cast<unsigned long long>(total.established), static_cast<unsigned long long>(total.cycles),
              static_cast<unsigned long long>(total.abandoned));
  std::printf("  errors        %llu%s%s\n", static_cast<unsigned long long>(e.total()),
              total.first_error.empty() ? "" : "  first: ", total.first_error.c_str());
  print_latency_ms(stdout, total.latency);
  print_loadgen_cpu(stdout, cpu_w, window_s);
  probes.print(stdout, window_s);

  {
    json errors = {{"total", e.total()}};
    put_error_counts(errors, e);
    errors["first_error"] = total.first_error;
    const json doc = {
        {"mode", "storm"},
        {"url", opts.url},
        {"config",
         {{"clients", opts.connections},
          {"tokens", opts.token_count},
          {"duration_s", opts.duration_s},
          {"warmup_s", opts.warmup_s},
          {"threads", opts.threads}}},
        {"window",
         {{"seconds", rounded(nominal_s, 3)},
          {"sampled_seconds", rounded(window_s, 3)},
          {"handshakes", total.handshakes_window},
          {"handshakes_per_s", rounded(handshakes_per_s, 1)},
          {"closes", total.cycles_window},
          {"closes_per_s", rounded(cycles_per_s, 1)}}},
        {"run", {{"handshakes", total.established}, {"closes", total.cycles}, {"abandoned", total.abandoned}}},
        {"errors", errors},
        {"latency_ms", latency_ms_json(total.latency)},
        {"cpu", probes.cpu_json(cpu_w, cpu_run, window_s)},
        {"interrupted", interrupted},
        {"failed", failed},
    };
    return finish_run(opts, doc, failed);
  }
}

}  // namespace loadgen
