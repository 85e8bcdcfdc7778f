#include "storm_worker.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "clock.hpp"
#include "process.hpp"
#include "ws_codec.hpp"

namespace loadgen {

void storm_result::merge(const storm_result& o) {
  latency.merge(o.latency);
  established += o.established;
  handshakes_window += o.handshakes_window;
  cycles += o.cycles;
  cycles_window += o.cycles_window;
  abandoned += o.abandoned;
  errors.merge(o.errors);
  if (first_error.empty()) first_error = o.first_error;
}

storm_worker::storm_worker(const options& opts, std::vector<std::uint32_t> indices, storm_times& times,
                           storm_progress& prog, std::uint64_t seed)
    : connection_driver(opts, indices.size(), seed), times_(times), prog_(prog) {
  for (std::size_t i = 0; i < indices.size(); ++i) conns_[i].global_index = indices[i];
  again_.reserve(conns_.size());
  due_.reserve(conns_.size());
}

void storm_worker::run() noexcept {
  try {
    if (!open_event_loop()) throw std::runtime_error(std::string("epoll_create1: ") + std::strerror(errno));
    run_stages();
  } catch (const std::exception& e) {
    if (res_.first_error.empty()) res_.first_error = std::string("worker aborted: ") + e.what();
    ++res_.errors.protocol_error;
  }
  close_all();
  report_progress();
  prog_.finished.store(true, std::memory_order_release);
}

void storm_worker::connect(storm_connection& c, std::uint64_t now) {
  c.started_ns = now;
  connect_slot(c);
}

void storm_worker::step(std::uint64_t now, std::uint64_t&) {
  if (times_.stop.load(std::memory_order_relaxed) || stop_signalled()) {
    start_closing(now);
    return;
  }
  // The closed-loop storm: every slot at once from the start (the window
  // begins after --warmup), then each again as soon as its cycle ends.
  if (!started_) {
    started_ = true;
    for (auto& c : conns_) connect(c, now);
  }
  const bool running = now < times_.end;
  due_.swap(again_);  // a connect that fails at once queues its slot again, for the next turn
  if (running)
    for (auto* c : due_) connect(*c, now);
  due_.clear();
  // After the window: let the cycles under way finish, then close the rest.
  if (!running && (pending_ + open_ == 0 || now >= times_.end + ns_per_s)) start_closing(now);
}

void storm_worker::on_open(storm_connection& c) {
  const std::uint64_t now = now_ns();
  if (in_window(now)) {
    ++res_.handshakes_window;
    res_.latency.record(now - c.started_ns);
  }
  send_close(c);
}

void storm_worker::on_frame(storm_connection& c, const frame_header& h, bool, const std::uint8_t*, std::size_t,
                            std::uint64_t) {
  if (h.op != static_cast<std::uint8_t>(opcode::close)) {
    fail(c, res_.errors.protocol_error, "a data frame on a connection that only closes");
  } else if (c.state == conn_state::closing) {
    close_link(c);  // the cycle's end: on_closed counts it
  } else {
    fail(c, res_.errors.closed_by_server, "server closed first");
  }
}

void storm_worker::on_closed(storm_connection& c) {
  if (c.state == conn_state::closing) {
    ++res_.cycles;
    if (in_window(turn_now_)) ++res_.cycles_window;
  }
  if (stage_ != stage::closing) again_.push_back(&c);
}

void storm_worker::send_closes() {
  for (auto& c : conns_) {
    if (c.state == conn_state::connecting || c.state == conn_state::handshaking) {
      ++res_.abandoned;
      close_link(c);  // not a failure: the run is over
    }
  }
}

void storm_worker::report_progress() {
  prog_.handshakes.store(res_.established, std::memory_order_relaxed);
  prog_.cycles.store(res_.cycles, std::memory_order_relaxed);
  prog_.errors.store(res_.errors.total(), std::memory_order_relaxed);
}

}  // namespace loadgen
