#include "rooms.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "clock.hpp"
#include "histogram.hpp"
#include "json_file.hpp"
#include "process.hpp"
#include "report.hpp"
#include "rooms_layout.hpp"
#include "rooms_worker.hpp"
#include "server_probe.hpp"
#include "thread_share.hpp"
#include "window_report.hpp"

namespace loadgen {

namespace {

struct second_point {
  double t_s;
  std::uint64_t published, delivered;
};

}  // namespace

int run_rooms(const options& opts) {
  install_signal_handlers();
  if (opts.publishers_join && opts.publishers > opts.members) {
    std::fprintf(stderr, "framegate-loadgen: --publishers-join yes needs --publishers <= --members\n");
    return 2;
  }
  const layout lay = make_layout(opts);
  double offered = 0;
  for (std::uint32_t p = 0; p < lay.publishers; ++p) offered += opts.publish_rate * lay.room_size[p % lay.rooms];

  raise_nofile_limit();

  shared_phase shared;
  const std::uint64_t run_start = now_ns();
  const cpu_usage cpu_start = process_cpu();
  probe_set probes(opts);

  std::vector<std::unique_ptr<rooms_progress>> progs;
  std::vector<std::unique_ptr<rooms_worker>> workers;
  for (unsigned t = 0; t < opts.threads; ++t) {
    progs.push_back(std::make_unique<rooms_progress>());
    workers.push_back(std::make_unique<rooms_worker>(opts, lay, thread_share(t, opts.threads, lay.connections), shared,
                                                     *progs.back(), thread_seed(run_start, t)));
  }
  std::vector<std::thread> threads;
  threads.reserve(workers.size());
  for (auto& w : workers) threads.emplace_back([&w] { w->run(); });

  struct totals {
    std::uint64_t open = 0, settled = 0, errors = 0, published = 0, expected = 0, delivered = 0, duplicates = 0,
                  bad = 0;
    bool finished = true;
  };
  auto read = [&] {
    totals t;
    for (const auto& p : progs) {
      t.open += p->open.load(std::memory_order_relaxed);
      t.settled += p->settled.load(std::memory_order_relaxed);
      t.errors += p->errors.load(std::memory_order_relaxed);
      t.published += p->published.load(std::memory_order_relaxed);
      t.expected += p->expected.load(std::memory_order_relaxed);
      t.delivered += p->delivered.load(std::memory_order_relaxed);
      t.duplicates += p->duplicates.load(std::memory_order_relaxed);
      t.bad += p->bad.load(std::memory_order_relaxed);
      t.finished = t.finished && p->finished.load(std::memory_order_acquire);
    }
    return t;
  };
  auto secs_since = [&](std::uint64_t now) { return static_cast<double>(now - run_start) / 1e9; };

  // Connect.
  const std::uint64_t connect_deadline = run_start + static_cast<std::uint64_t>(opts.connect_timeout_s * 1e9);
  std::uint64_t next_print = run_start + ns_per_s;
  for (;;) {
    const std::uint64_t now = now_ns();
    const totals t = read();
    if (t.settled >= lay.connections || now >= connect_deadline || stop_signalled()) break;
    if (opts.progress && now >= next_print) {
      std::fprintf(stderr, "[loadgen] t=%.1fs connect open=%llu/%u errors=%llu\n", secs_since(now),
                   static_cast<unsigned long long>(t.open), lay.connections, static_cast<unsigned long long>(t.errors));
      next_print += ns_per_s;
    }
    sleep_until(std::min(now + 5 * ns_per_ms, connect_deadline));
  }
  // Join, then let the subscriptions settle before the first publish.
  shared.stage.store(1, std::memory_order_release);
  const totals at_join = read();
  std::fprintf(stderr, "[loadgen] joining: %llu/%u connections open (errors=%llu); settling %.1f s\n",
               static_cast<unsigned long long>(at_join.open), lay.connections,
               static_cast<unsigned long long>(at_join.errors), opts.join_settle_s);
  const std::uint64_t settle_end = now_ns() + static_cast<std::uint64_t>(opts.join_settle_s * 1e9);
  while (now_ns() < settle_end && !stop_signalled()) sleep_until(std::min(settle_end, now_ns() + 50 * ns_per_ms));
  const totals at_start = read();
  shared.load = now_ns() + 20 * ns_per_ms;
  shared.measure = shared.load + static_cast<std::uint64_t>(opts.warmup_s * 1e9);
  shared.end = shared.measure + static_cast<std::uint64_t>(opts.duration_s * 1e9);
  shared.drain_end = shared.end + static_cast<std::uint64_t>(opts.drain_max_s * 1e9);
  shared.stage.store(2, std::memory_order_release);
  std::fprintf(stderr, "[loadgen] ready: %llu/%u connections open; publishing %.0f deliveries/s offered\n",
               static_cast<unsigned long long>(at_start.open), lay.connections, offered);
  std::fflush(stderr);

  // The measured window's edges: what was delivered and published by then,
  // and the CPU of this process and of the probed ones.
  struct window_edge {
    bool taken = false;
    cpu_usage cpu;
    std::uint64_t delivered = 0, published = 0, at = 0;
  };
  window_edge m0, m1;
  auto take_edge = [&](window_edge& edge, const totals& t, std::uint64_t now, bool at_end) {
    edge.cpu = process_cpu();
    probes.sample(at_end);
    edge.delivered = t.delivered;
    edge.published = t.published;
    edge.at = now;
    edge.taken = true;
  };
  std::vector<second_point> timeline;
  totals last = at_start;
  std::uint64_t last_print = shared.load;
  next_print = shared.load + ns_per_s;
  const std::uint64_t hard_stop = shared.drain_end + 3 * ns_per_s;
  bool interrupted = false, all_delivered_early = false;
  for (;;) {
    std::uint64_t wake = next_print;
    if (!m0.taken) wake = std::min(wake, shared.measure);
    if (!m1.taken) wake = std::min(wake, shared.end);
    sleep_until(std::min(wake, now_ns() + 50 * ns_per_ms));
    const std::uint64_t now = now_ns();
    if (!m0.taken && now >= shared.measure) take_edge(m0, read(), now, false);
    if (!m1.taken && now >= shared.end) take_edge(m1, read(), now, true);
    const totals t = read();
    if (now >= next_print) {
      const double dt = static_cast<double>(now - last_print) / 1e9;
      const char* phase = now < shared.measure ? "warmup" : now < shared.end ? "measure" : "drain";
      if (opts.progress) {
        std::fprintf(stderr,
                     "[loadgen] t=%.1fs %s open=%llu pub/s=%.0f deliveries/s=%.0f delivered=%llu/%llu dup=%llu "
                     "bad=%llu errors=%llu\n",
                     secs_since(now), phase, static_cast<unsigned long long>(t.open),
                     static_cast<double>(t.published - last.published) / dt,
                     static_cast<double>(t.delivered - last.delivered) / dt,
                     static_cast<unsigned long long>(t.delivered), static_cast<unsigned long long>(t.expected),
                     static_cast<unsigned long long>(t.duplicates), static_cast<unsigned long long>(t.bad),
                     static_cast<unsigned long long>(t.errors));
      }
      timeline.push_back(
          {static_cast<double>(now - shared.load) / 1e9, t.published - last.published, t.delivered - last.delivered});
      last = t;
      last_print = now;
      next_print += ns_per_s;
      if (next_print <= now) next_print = now + ns_per_s;
    }
    if (t.finished) break;
    // Everything delivered after the end: no need to wait for the drain gap.
    if (m1.taken && now >= shared.end + 100 * ns_per_ms && t.delivered >= t.expected && !shared.stop.load()) {
      all_delivered_early = true;
      shared.stop.store(true);
    }
    if ((stop_signalled() || now >= hard_stop) && !shared.stop.load()) {
      interrupted = stop_signalled();
      if (!m1.taken) take_edge(m1, t, now, true);
      shared.stop.store(true);
    }
  }
  for (auto& th : threads) th.join();
  const std::uint64_t finished_at = now_ns();

  rooms_result total;
  for (const auto& w : workers) total.merge(w->res());
  const double window_s = m0.taken && m1.taken && m1.at > m0.at ? static_cast<double>(m1.at - m0.at) / 1e9 : 0;
  const double drain_s = static_cast<double>(finished_at - std::min(finished_at, shared.end)) / 1e9;
  const std::uint64_t window_delivered = m1.delivered - m0.delivered;
  const std::uint64_t window_published = m1.published - m0.published;
  const double delivered_per_s = window_s > 0 ? static_cast<double>(window_delivered) / window_s : 0;
  const double delivered_pct =
      total.expected ? 100.0 * static_cast<double>(total.delivered) / static_cast<double>(total.expected) : 0;
  const std::uint64_t undelivered = total.expected > total.delivered ? total.expected - total.delivered : 0;
  const cpu_usage cpu_w = m1.cpu - m0.cpu;
  const cpu_usage cpu_run = process_cpu() - cpu_start;
  const histogram& h = *total.latency;
  const bool failed = total.duplicates + total.reorders + total.misrouted + total.malformed + total.server_errors +
                              total.unexpected + total.errors.closed_by_server + total.errors.disconnected +
                              total.errors.protocol_error >
                          0 ||
                      total.established == 0;

  std::printf("framegate-loadgen rooms summary\n");
  std::printf("  target        %s  rooms=%u members=%u publishers=%u (join=%s) rate=%g/s each  threads=%u\n",
              opts.url.c_str(), lay.rooms, lay.members, lay.publishers, lay.publishers_join ? "yes" : "no",
              opts.publish_rate, opts.threads);
  std::printf("  connections   established=%llu/%u errors=%llu%s%s\n",
              static_cast<unsigned long long>(total.established), lay.connections,
              static_cast<unsigned long long>(total.errors.total()),
              total.first_error.empty() ? "" : "  first: ", total.first_error.c_str());
  std::printf("  offered       %.0f deliveries/s (%.0f publishes/s)\n", offered, opts.publish_rate * lay.publishers);
  std::printf("  window        %.2f s: %.0f deliveries/s, %.0f publishes/s\n", window_s, delivered_per_s,
              window_s > 0 ? static_cast<double>(window_published) / window_s : 0);
  std::printf("  delivered     %llu of %llu expected (%.2f%%), undelivered=%llu after %.1f s of drain%s\n",
              static_cast<unsigned long long>(total.delivered), static_cast<unsigned long long>(total.expected),
              delivered_pct, static_cast<unsigned long long>(undelivered), drain_s,
              all_delivered_early ? " (all in)" : "");
  std::printf("  offsets       %llu deliveries carried the room's offset (history on)\n",
              static_cast<unsigned long long>(total.with_offset));
  std::printf("  losses        holes=%llu (sequences missing below a later delivery from the same publisher)\n",
              static_cast<unsigned long long>(total.holes));
  std::printf(
      "  correctness   duplicates=%llu reorders=%llu misrouted=%llu malformed=%llu server_errors=%llu "
      "unexpected=%llu\n",
      static_cast<unsigned long long>(total.duplicates), static_cast<unsigned long long>(total.reorders),
      static_cast<unsigned long long>(total.misrouted), static_cast<unsigned long long>(total.malformed),
      static_cast<unsigned long long>(total.server_errors), static_cast<unsigned long long>(total.unexpected));
  if (!total.first_bad_message.empty()) std::printf("  first bad     %s\n", total.first_bad_message.c_str());
  const auto mb_per_s = [&](std::uint64_t bytes) {
    return window_s > 0 ? static_cast<double>(bytes) / window_s / 1e6 : 0;
  };
  std::printf("  wire          %.1f MB/s in, %.1f MB/s out in the window", mb_per_s(total.wire_in),
              mb_per_s(total.wire_out));
  if (opts.deflate)
    std::printf("; permessage-deflate: %llu deliveries arrived compressed, %llu sends compressed",
                static_cast<unsigned long long>(total.compressed_in),
                static_cast<unsigned long long>(total.compressed_out));
  std::printf("\n");
  print_latency_ms(stdout, h);
  print_loadgen_cpu(stdout, cpu_w, window_s);
  probes.print(stdout, window_s);

  {
    json connections = {{"target", lay.connections}, {"established", total.established}};
    put_error_counts(connections, total.errors);
    connections["first_error"] = total.first_error;
    json seconds = json::array();
    for (const auto& point : timeline)
      seconds.push_back(
          {{"t", rounded(point.t_s, 2)}, {"publishes", point.published}, {"deliveries", point.delivered}});
    const json doc = {
        {"mode", "rooms"},
        {"url", opts.url},
        {"config",
         {{"rooms", lay.rooms},
          {"members", lay.members},
          {"publishers", lay.publishers},
          {"publishers_join", lay.publishers_join},
          {"publish_rate", opts.publish_rate},
          {"duration_s", opts.duration_s},
          {"warmup_s", opts.warmup_s},
          {"join_settle_s", opts.join_settle_s},
          {"drain_s", opts.drain_s},
          {"drain_max_s", opts.drain_max_s},
          {"threads", opts.threads},
          {"publish_size", opts.publish_size},
          {"deflate", opts.deflate},
          {"deflate_threshold", opts.deflate_threshold}}},
        {"wire",
         {{"bytes_in", total.wire_in},
          {"bytes_out", total.wire_out},
          {"compressed_in", total.compressed_in},
          {"compressed_out", total.compressed_out}}},
        {"connections", connections},
        {"offered_deliveries_per_s", rounded(offered, 1)},
        {"window",
         {{"seconds", rounded(window_s, 3)},
          {"deliveries", window_delivered},
          {"deliveries_per_s", rounded(delivered_per_s, 1)},
          {"publishes", window_published},
          {"publishes_per_s", rounded(window_s > 0 ? static_cast<double>(window_published) / window_s : 0, 1)}}},
        {"delivery",
         {{"publishes", total.published},
          {"expected", total.expected},
          {"delivered", total.delivered},
          {"delivered_pct", rounded(delivered_pct, 3)},
          {"undelivered", undelivered},
          {"holes", total.holes},
          {"drain_s", rounded(drain_s, 3)},
          {"all_delivered", undelivered == 0},
          {"duplicates", total.duplicates},
          {"reorders", total.reorders},
          {"misrouted", total.misrouted},
          {"malformed", total.malformed},
          {"server_errors", total.server_errors},
          {"unexpected", total.unexpected},
          {"with_offset", total.with_offset},
          {"first_bad_message", total.first_bad_message}}},
        {"latency_ms", latency_ms_json(h)},
        {"cpu", probes.cpu_json(cpu_w, cpu_run, window_s)},
        {"timeline", seconds},
        {"interrupted", interrupted},
        {"failed", failed},
    };
    return finish_run(opts, doc, failed);
  }
}

}  // namespace loadgen
