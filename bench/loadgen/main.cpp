// framegate-loadgen: entry point. Parses options, raises the open-file limit,
// runs one worker thread per --threads, drives the phases (connect, warm-up,
// measure, drain, close), prints a progress line every second and the summary.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "clock.hpp"
#include "options.hpp"
#include "process.hpp"
#include "report.hpp"
#include "rooms.hpp"
#include "server_probe.hpp"
#include "storm.hpp"
#include "thread_share.hpp"
#include "worker.hpp"

namespace {

using namespace loadgen;

// Even the hard limit may leave too few descriptors: say so before the connects fail.
void check_nofile_limit(std::uint32_t connections) {
  const rlim_t limit = raise_nofile_limit();
  if (limit != 0 && limit != RLIM_INFINITY && connections + 32 > limit) {
    std::fprintf(stderr, "[loadgen] warning: %u connections but only %llu open files allowed; the rest will fail\n",
                 connections, static_cast<unsigned long long>(limit));
  }
}

struct totals_now {
  std::uint64_t sent = 0, received = 0, open = 0, settled = 0, errors = 0;
  bool all_finished = true;
};

totals_now read_progress(const std::vector<std::unique_ptr<worker_progress>>& progress) {
  totals_now t;
  for (const auto& p : progress) {
    t.sent += p->sent.load(std::memory_order_relaxed);
    t.received += p->received.load(std::memory_order_relaxed);
    t.open += p->open.load(std::memory_order_relaxed);
    t.settled += p->settled.load(std::memory_order_relaxed);
    t.errors += p->errors.load(std::memory_order_relaxed);
    t.all_finished = t.all_finished && p->finished.load(std::memory_order_acquire);
  }
  return t;
}

const char* phase_at(const shared_state& s, std::uint64_t now) {
  if (!s.started.load(std::memory_order_acquire)) return "connect";
  const auto& t = s.times;
  if (now < t.measure) return "warmup";
  if (now < t.end) return "measure";
  if (now < t.drain_end) return "drain";
  return "close";
}

}  // namespace

int main(int argc, char** argv) {
  std::string error;
  options parsed;
  try {
    parsed = parse_options(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(usage_text().c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "framegate-loadgen: %s\n", e.what());
    return 2;
  }
  const options& opts = parsed;
  if (opts.run_mode == mode::rooms) return run_rooms(opts);
  if (opts.run_mode == mode::storm) return run_storm(opts);

  install_signal_handlers();
  check_nofile_limit(opts.connections);

  shared_state shared;
  const std::uint64_t run_start = now_ns();
  shared.times.base = run_start;
  const cpu_usage cpu_start = process_cpu();
  // Server samples: missing ones (no --server-pid, or the process is gone) leave have_server false.
  bool server_ok = opts.server_pid > 0;
  auto probe = [&](server_sample& into) {
    if (!server_ok) return;
    if (auto s = sample_server(static_cast<pid_t>(opts.server_pid)))
      into = *s;
    else
      server_ok = false;
  };
  server_sample server_before, server_measure_start, server_measure_end, server_after;
  bool machine_ok = true;
  machine_sample machine_measure_start, machine_measure_end;
  auto probe_machine = [&](machine_sample& into) {
    if (auto m = sample_machine(getpid(), static_cast<pid_t>(opts.server_pid)))
      into = *m;
    else
      machine_ok = false;
  };
  probe(server_before);

  std::vector<std::unique_ptr<worker_progress>> progress;
  std::vector<std::unique_ptr<worker>> workers;
  for (unsigned t = 0; t < opts.threads; ++t) {
    progress.push_back(std::make_unique<worker_progress>());
    workers.push_back(std::make_unique<worker>(opts, thread_share(t, opts.threads, opts.connections), shared,
                                               *progress.back(), thread_seed(run_start, t)));
  }
  std::vector<std::thread> threads;
  threads.reserve(workers.size());
  for (auto& w : workers) threads.emplace_back([&w] { w->run(); });

  // Connect phase: until every connection is open or failed, or the limit.
  const std::uint64_t connect_deadline = run_start + static_cast<std::uint64_t>(opts.connect_timeout_s * 1e9);
  std::uint64_t next_print = run_start + ns_per_s;
  for (;;) {
    const std::uint64_t now = now_ns();
    const totals_now t = read_progress(progress);
    if (t.settled >= opts.connections || now >= connect_deadline || stop_signalled()) break;
    if (opts.progress && now >= next_print) {
      std::fprintf(stderr, "[loadgen] t=%.1fs connect open=%llu settled=%llu/%u errors=%llu\n",
                   static_cast<double>(now - run_start) / 1e9, static_cast<unsigned long long>(t.open),
                   static_cast<unsigned long long>(t.settled), opts.connections,
                   static_cast<unsigned long long>(t.errors));
      next_print += ns_per_s;
    }
    sleep_until(std::min(now + 5 * ns_per_ms, connect_deadline));
  }
  {
    auto& times = shared.times;
    times.load = now_ns() + 20 * ns_per_ms;  // lets every worker see the flag before the first slot
    times.measure = times.load + static_cast<std::uint64_t>(opts.warmup_s * 1e9);
    times.end = times.measure + static_cast<std::uint64_t>(opts.duration_s * 1e9);
    times.drain_end =
        times.end + (opts.run_mode == mode::idle ? 0 : static_cast<std::uint64_t>(opts.drain_max_s * 1e9));
    shared.started.store(true, std::memory_order_release);
  }
  const totals_now at_start = read_progress(progress);
  // run_echo.sh waits for this line before sampling the server's memory.
  std::fprintf(stderr, "[loadgen] ready: %llu/%u connections established (errors=%llu)\n",
               static_cast<unsigned long long>(at_start.open), opts.connections,
               static_cast<unsigned long long>(at_start.errors));
  std::fflush(stderr);

  // Load phases: a progress line per second; CPU sampled at the window edges.
  const auto& times = shared.times;
  cpu_usage cpu_measure_start{}, cpu_measure_end{};
  bool have_measure_start = false, have_measure_end = false;
  auto sample_edge = [&](cpu_usage& cpu, server_sample& server, machine_sample& machine, bool& have) {
    cpu = process_cpu();
    probe(server);
    probe_machine(machine);
    have = true;
  };
  std::uint64_t last_print = times.load;
  std::uint64_t last_received = at_start.received, last_sent = at_start.sent;
  next_print = times.load + ns_per_s;
  const std::uint64_t hard_stop = times.drain_end + 3 * ns_per_s;  // workers close within ~1 s of drain_end
  bool interrupted = false;
  std::uint64_t measure_end_at = times.end;
  for (;;) {
    std::uint64_t wake = next_print;
    if (!have_measure_start) wake = std::min(wake, times.measure);
    if (!have_measure_end) wake = std::min(wake, times.end);
    sleep_until(std::min(wake, now_ns() + 50 * ns_per_ms));
    const std::uint64_t now = now_ns();
    if (!have_measure_start && now >= times.measure)
      sample_edge(cpu_measure_start, server_measure_start, machine_measure_start, have_measure_start);
    if (!have_measure_end && now >= times.end)
      sample_edge(cpu_measure_end, server_measure_end, machine_measure_end, have_measure_end);
    const totals_now t = read_progress(progress);
    if (now >= next_print) {
      const double dt = static_cast<double>(now - last_print) / 1e9;
      if (opts.progress) {
        std::fprintf(stderr, "[loadgen] t=%.1fs %s open=%llu sent=%llu recv=%llu msg/s=%.0f sent/s=%.0f errors=%llu\n",
                     static_cast<double>(now - run_start) / 1e9, phase_at(shared, now),
                     static_cast<unsigned long long>(t.open), static_cast<unsigned long long>(t.sent),
                     static_cast<unsigned long long>(t.received), static_cast<double>(t.received - last_received) / dt,
                     static_cast<double>(t.sent - last_sent) / dt, static_cast<unsigned long long>(t.errors));
      }
      last_print = now;
      last_received = t.received;
      last_sent = t.sent;
      next_print += ns_per_s;
      if (next_print <= now) next_print = now + ns_per_s;
    }
    if (t.all_finished) break;
    if ((stop_signalled() || now >= hard_stop) && !shared.stop.load()) {
      interrupted = stop_signalled();
      if (!have_measure_end) {
        sample_edge(cpu_measure_end, server_measure_end, machine_measure_end, have_measure_end);
        measure_end_at = now;
      }
      shared.stop.store(true);
    }
  }
  for (auto& th : threads) th.join();

  run_summary summary;
  summary.opts = &opts;
  for (const auto& w : workers) summary.totals.merge(w->result());
  const std::uint64_t measure_stop = std::min(measure_end_at, times.end);
  summary.measured_s = measure_stop > times.measure ? static_cast<double>(measure_stop - times.measure) / 1e9 : 0;
  if (have_measure_start && have_measure_end) summary.cpu_window = cpu_measure_end - cpu_measure_start;
  summary.cpu_run = process_cpu() - cpu_start;
  summary.wall_s = static_cast<double>(now_ns() - run_start) / 1e9;
  summary.interrupted = interrupted;
  probe(server_after);
  summary.have_server = server_ok && have_measure_start && have_measure_end;
  summary.server_before = server_before;
  summary.server_measure_start = server_measure_start;
  summary.server_measure_end = server_measure_end;
  summary.server_after = server_after;
  summary.have_machine = machine_ok && have_measure_start && have_measure_end;
  summary.machine_measure_start = machine_measure_start;
  summary.machine_measure_end = machine_measure_end;

  print_summary(stdout, summary);
  if (!opts.json_path.empty() && !write_json(opts.json_path, summary, error)) {
    std::fprintf(stderr, "framegate-loadgen: %s\n", error.c_str());
    return 1;
  }
  return summary.failed() ? 1 : 0;
}
