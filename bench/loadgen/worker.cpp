#include "worker.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "clock.hpp"
#include "payload.hpp"
#include "ws_codec.hpp"

namespace loadgen {

worker::worker(const options& opts, std::vector<std::uint32_t> global_indices, shared_state& shared,
               worker_progress& progress, std::uint64_t seed)
    : connection_driver(opts, global_indices.size(), seed),
      shared_(shared),
      progress_(progress),
      times_(shared.times),
      payloads_(opts.json_payload ? payload_variants(opts.size) : 1),
      drain_gap_ns_(static_cast<std::uint64_t>(opts.drain_s * 1e9)),
      out_cap_(std::max<std::size_t>(256 * 1024, 2 * client_frame_size(opts.size))) {
  for (std::size_t i = 0; i < conns_.size(); ++i) conns_[i].global_index = global_indices[i];
  for (std::size_t v = 0; v < payloads_.size(); ++v)
    payloads_[v] = opts.json_payload ? make_json_payload_template(opts.size, static_cast<std::uint32_t>(v))
                                     : make_payload_template(opts.size);
  workload_ = make_workload(opts_, times_, *this);
}

void worker::run() noexcept {
  try {
    if (!open_event_loop()) {
      result_.first_error = std::string("epoll_create1: ") + std::strerror(errno);
      result_.errors.connect_failed += conns_.size();
      progress_.finished.store(true);
      return;
    }
    run_stages();
    close_all();
  } catch (const std::exception& e) {
    // Out of memory or similar: report it, never crash the whole run.
    if (result_.first_error.empty()) result_.first_error = std::string("worker aborted: ") + e.what();
    result_.errors.protocol_error++;
  }
  report_progress();
  progress_.finished.store(true, std::memory_order_release);
}

void worker::step(std::uint64_t now, std::uint64_t& deadline) {
  if (shared_.stop.load(std::memory_order_relaxed)) {
    if (stage_ == stage::connecting && shared_.started.load(std::memory_order_acquire)) begin_load();
    start_closing(now);
    return;
  }
  if (stage_ == stage::connecting) {
    if (shared_.started.load(std::memory_order_acquire)) {
      begin_load();
      deadline = now;
    } else {
      start_connections(now);
      // Pace connects finely while some remain; otherwise poll the
      // start flag every 10 ms.
      if (next_to_start_ < conns_.size()) deadline = now + 1 * ns_per_ms;
    }
    return;
  }
  if (!end_seen_ && now >= times_.end) {
    // Late wake-up past the end: still send what was due before it.
    if (load_begun_) workload_->tick(now);
    end_seen_ = true;
    result_.open_at_end = open_;
  }
  if (now >= times_.load && !load_begun_) {
    load_begun_ = true;
    workload_->begin(conns_, now);
  }
  if (now < times_.load) {
    deadline = times_.load;
  } else if (now < times_.end) {
    deadline = std::min({workload_->tick(now), times_.end, now < times_.measure ? times_.measure : UINT64_MAX});
  } else if (now < times_.drain_end && !drained() && now - std::max(last_echo_, times_.end) < drain_gap_ns_) {
    deadline = std::min(times_.drain_end, now + 50 * ns_per_ms);
  } else {
    start_closing(now);
  }
}

void worker::report_progress() {
  progress_.sent.store(result_.sent, std::memory_order_relaxed);
  progress_.received.store(result_.received, std::memory_order_relaxed);
  progress_.open.store(open_, std::memory_order_relaxed);
  progress_.settled.store(settled_, std::memory_order_relaxed);
  progress_.errors.store(result_.errors.total(), std::memory_order_relaxed);
}

void worker::on_frame(connection& c, const frame_header& h, bool compressed, const std::uint8_t* payload,
                      std::size_t plen, std::uint64_t now) {
  if (is_control(h.op)) {
    if (!h.fin || plen > 125) {
      fail(c, result_.errors.protocol_error, "fragmented or oversized control frame");
      return;
    }
    on_control_frame(c, h.op, payload, plen);
  } else if (h.op == static_cast<std::uint8_t>(opcode::continuation)) {
    if (c.frag_opcode == 0) {
      fail(c, result_.errors.protocol_error, "continuation frame without a started message");
      return;
    }
    c.fragments.append(payload, plen);
    if (h.fin) {
      deliver(c, c.frag_opcode, c.deflate.message_compressed, c.fragments.data(), c.fragments.size(), now);
      c.frag_opcode = 0;
      c.fragments.release();
    }
  } else if (h.op == static_cast<std::uint8_t>(opcode::text) || h.op == static_cast<std::uint8_t>(opcode::binary)) {
    if (c.frag_opcode != 0) {
      fail(c, result_.errors.protocol_error, "new data frame inside a fragmented message");
      return;
    }
    if (h.fin) {
      deliver(c, h.op, compressed, payload, plen, now);
    } else {
      c.frag_opcode = h.op;
      c.deflate.message_compressed = compressed;
      c.fragments.append(payload, plen);
    }
  } else {
    fail(c, result_.errors.protocol_error, "reserved opcode from the server");
  }
}

void worker::deliver(connection& c, std::uint8_t op, bool compressed, const std::uint8_t* p, std::size_t n,
                     std::uint64_t now) {
  if (open_payload(c, compressed, p, n)) on_data_message(c, op, p, n, now);
}

void worker::on_data_message(connection& c, std::uint8_t op, const std::uint8_t* p, std::size_t n, std::uint64_t now) {
  if (c.state != conn_state::open) return;  // late echoes while closing are not counted
  ++result_.received;
  last_echo_ = now;
  const bool started = stage_ == stage::loading;
  if (started && now >= times_.measure && now < times_.end) ++result_.received_window;
  if (c.outstanding == 0)
    ++result_.unexpected_echoes;
  else
    --c.outstanding;
  if (op != static_cast<std::uint8_t>(opts_.message_opcode)) ++result_.mismatched_opcode;
  if (n != opts_.size) {
    ++result_.mismatched_length;
    return;
  }
  if (n < stamp_bytes) {
    if (n && std::memcmp(p, payloads_[0].data(), n) != 0) ++result_.mismatched_payload;
    return;
  }
  std::uint64_t stamp = 0;
  if (!decode_stamp(p, stamp) || times_.base + stamp > now ||
      std::memcmp(p + stamp_bytes, payloads_[variant_of_stamp(stamp, payloads_.size())].data() + stamp_bytes,
                  n - stamp_bytes) != 0) {
    ++result_.mismatched_payload;
    return;
  }
  const std::uint64_t sent_at = times_.base + stamp;
  if (started && sent_at >= times_.measure && sent_at < times_.end) result_.latency.record(now - sent_at);
}

void worker::on_control_frame(connection& c, std::uint8_t op, const std::uint8_t* p, std::size_t n) {
  if (op == static_cast<std::uint8_t>(opcode::ping)) {
    if (c.state == conn_state::open) {
      append_client_frame(c.out, opcode::pong, p, n, next_mask());
      flush(c);
    }
  } else if (op == static_cast<std::uint8_t>(opcode::close)) {
    if (c.state == conn_state::closing) {
      close_link(c);  // the answer to our close: done
      return;
    }
    const unsigned code = n >= 2 ? (unsigned{p[0]} << 8) | p[1] : 1005;
    if (code == 1009)
      ++result_.close_codes_1009;
    else if (code == 1008)
      ++result_.close_codes_1008;
    else
      ++result_.close_codes_other;
    // Answer with the same code, as RFC 6455 asks, then drop the TCP connection.
    append_client_frame(c.out, opcode::close, p, std::min<std::size_t>(n, 2), next_mask());
    flush(c);
    if (c.state != conn_state::closed) {
      fail(c, result_.errors.closed_by_server, "server sent close code " + std::to_string(code));
    }
  }
  // pong: nothing to do (we never ping).
}

bool worker::has_room(const connection& c) const { return c.state == conn_state::open && c.out.size() < out_cap_; }

void worker::queue_message(connection& c, std::uint64_t send_time_ns) {
  const std::uint64_t stamp = send_time_ns - times_.base;
  auto& payload = payloads_[opts_.size >= stamp_bytes ? variant_of_stamp(stamp, payloads_.size()) : 0];
  if (opts_.size >= stamp_bytes) encode_stamp(payload.data(), stamp);
  queue_frame(c, opts_.message_opcode, payload.data(), opts_.size);
  ++c.outstanding;
  ++result_.sent;
  if (send_time_ns >= times_.measure && send_time_ns < times_.end) {
    ++result_.sent_window;
    if (opts_.run_mode == mode::rate) result_.send_lag.record(turn_now_ > send_time_ns ? turn_now_ - send_time_ns : 0);
  }
}

void worker::on_closed(connection& c) {
  if (c.outstanding) {
    result_.unanswered_closed += c.outstanding;
    c.outstanding = 0;
  }
  c.fragments.release();
}

void worker::begin_load() {
  // The connect phase is over: whatever is not open by now never will be.
  for (auto& c : conns_) {
    if (c.state == conn_state::idle) {
      ++result_.errors.connect_timeout;
      ++settled_;
      c.state = conn_state::closed;
    }
  }
  fail_pending(result_.errors.connect_timeout, "connect phase ended before the handshake completed");
  stage_ = stage::loading;  // the workload begins at times_.load, in run()
}

bool worker::drained() const {
  for (const auto& c : conns_) {
    if (c.state == conn_state::open && (c.outstanding != 0 || !c.out.empty())) return false;
  }
  return true;
}

void worker::send_closes() {
  if (!end_seen_) {
    end_seen_ = true;
    result_.open_at_end = open_;
  }
  result_.backlog_at_end = workload_->backlog_at_end();
  for (auto& c : conns_) {
    if (c.state != conn_state::open) continue;
    result_.unanswered += c.outstanding;
    c.outstanding = 0;
    send_close(c);
  }
}

}  // namespace loadgen
