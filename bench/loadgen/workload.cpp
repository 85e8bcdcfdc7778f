#include "workload.hpp"

#include <algorithm>
#include <cmath>

namespace loadgen {

namespace {

// Open loop. Connection k sends message s at load + phase_k + s * interval,
// whatever happened before: the schedule never slips, and each payload is
// stamped with its *intended* time, so if the server (or a full socket)
// delays a send, that wait is part of the measured latency instead of being
// silently omitted (coordinated omission). Phases spread the connections
// evenly over one interval so the offered load is smooth, not bursts.
class rate_workload final : public workload {
 public:
  rate_workload(const options& opts, const timeline& times, message_sink& sink)
      : times_(times),
        sink_(sink),
        total_(opts.connections),
        interval_(std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(opts.rate_per_conn_ms * 1e6)))) {}

  void begin(std::vector<connection>& conns, std::uint64_t /*now*/) override {
    for (auto& c : conns) {
      // Spread by the global index so that several threads interleave.
      c.phase_ns = static_cast<std::uint64_t>(static_cast<unsigned __int128>(c.global_index) * interval_ / total_);
      if (c.state == conn_state::open) conns_.push_back(&c);
    }
    std::sort(conns_.begin(), conns_.end(), [](auto* a, auto* b) { return a->phase_ns < b->phase_ns; });
  }

  std::uint64_t tick(std::uint64_t now) override {
    if (conns_.empty()) return UINT64_MAX;
    // Visit connections in slot order; slots repeat every interval. One
    // full pass tops up everybody, so if we fell more than a round
    // behind, skipping the remaining slots loses nothing.
    std::size_t steps = 0;
    while (slot_time() <= now) {
      top_up(*conns_[cursor_], now);
      if (++cursor_ == conns_.size()) {
        cursor_ = 0;
        ++round_;
      }
      if (++steps >= conns_.size()) {
        if (slot_time() <= now) round_ = (now - times_.load - conns_[cursor_]->phase_ns) / interval_ + 1;
        break;
      }
    }
    return slot_time() < times_.end ? slot_time() : UINT64_MAX;
  }

  void top_up(connection& c, std::uint64_t now) override {
    bool queued = false;
    while (c.state == conn_state::open && sink_.has_room(c)) {
      const std::uint64_t intended = times_.load + c.phase_ns + c.next_seq * interval_;
      if (intended > now || intended >= times_.end) break;
      sink_.queue_message(c, intended);
      ++c.next_seq;
      queued = true;
    }
    if (queued) sink_.flush(c);
  }

  std::uint64_t backlog_at_end() const override {
    std::uint64_t backlog = 0;
    for (const auto* c : conns_) {
      const std::uint64_t first = times_.load + c->phase_ns;
      if (first >= times_.end) continue;
      const std::uint64_t owed = (times_.end - first + interval_ - 1) / interval_;
      if (owed > c->next_seq) backlog += owed - c->next_seq;
    }
    return backlog;
  }

 private:
  std::uint64_t slot_time() const { return times_.load + conns_[cursor_]->phase_ns + round_ * interval_; }

  const timeline& times_;
  message_sink& sink_;
  std::uint64_t total_;
  std::uint64_t interval_;
  std::vector<connection*> conns_;
  std::size_t cursor_ = 0;
  std::uint64_t round_ = 0;
};

// Closed loop: each connection keeps `window` messages in flight; every echo
// releases the next send. Measures the server's best sustained throughput.
class window_workload final : public workload {
 public:
  window_workload(const options& opts, const timeline& times, message_sink& sink)
      : times_(times), sink_(sink), window_(opts.window) {}

  void begin(std::vector<connection>& conns, std::uint64_t now) override {
    for (auto& c : conns) top_up(c, now);
  }
  std::uint64_t tick(std::uint64_t) override { return UINT64_MAX; }
  void top_up(connection& c, std::uint64_t now) override {
    if (now >= times_.end) return;
    bool queued = false;
    while (c.state == conn_state::open && c.outstanding < window_ && sink_.has_room(c)) {
      sink_.queue_message(c, now);
      queued = true;
    }
    if (queued) sink_.flush(c);
  }

 private:
  const timeline& times_;
  message_sink& sink_;
  std::uint64_t window_;
};

// Connect, then hold: the server's cost per idle connection.
class idle_workload final : public workload {
 public:
  void begin(std::vector<connection>&, std::uint64_t) override {}
  std::uint64_t tick(std::uint64_t) override { return UINT64_MAX; }
  void top_up(connection&, std::uint64_t) override {}
};

}  // namespace

std::unique_ptr<workload> make_workload(const options& opts, const timeline& times, message_sink& sink) {
  switch (opts.run_mode) {
    case mode::rate: return std::make_unique<rate_workload>(opts, times, sink);
    case mode::window: return std::make_unique<window_workload>(opts, times, sink);
    case mode::idle:
    case mode::rooms:  // rooms and storm modes have their own runners (rooms.cpp, storm.cpp)
    case mode::storm: return std::make_unique<idle_workload>();
  }
  return nullptr;
}

}  // namespace loadgen
