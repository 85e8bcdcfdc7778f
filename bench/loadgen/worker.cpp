#include "worker.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "clock.hpp"
#include "handshake.hpp"
#include "payload.hpp"
#include "ws_codec.hpp"

namespace loadgen {

namespace {

constexpr std::size_t scratch_size = 256 * 1024;
constexpr std::uint64_t max_pending_per_worker = 512;  // keeps the server's accept backlog from overflowing
constexpr std::uint64_t max_frame_len = 256ULL << 20;
constexpr std::uint64_t close_wait_ns = 1 * ns_per_s;

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

timespec to_timespec(std::uint64_t ns) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(ns / ns_per_s);
  ts.tv_nsec = static_cast<long>(ns % ns_per_s);
  return ts;
}

}  // namespace

worker::worker(const options& opts, std::vector<std::uint32_t> global_indices, shared_state& shared,
               worker_progress& progress, std::uint64_t seed)
    : opts_(opts),
      shared_(shared),
      progress_(progress),
      times_(shared.times),
      conns_(global_indices.size()),
      payloads_(opts.json_payload ? payload_variants(opts.size) : 1),
      scratch_(scratch_size),
      events_(1024),
      rng_(seed),
      drain_gap_ns_(static_cast<std::uint64_t>(opts.drain_s * 1e9)),
      out_cap_(std::max<std::size_t>(256 * 1024, 2 * client_frame_size(opts.size))) {
  for (std::size_t i = 0; i < conns_.size(); ++i) conns_[i].global_index = global_indices[i];
  for (std::size_t v = 0; v < payloads_.size(); ++v)
    payloads_[v] = opts.json_payload ? make_json_payload_template(opts.size, static_cast<std::uint32_t>(v))
                                     : make_payload_template(opts.size);
  workload_ = make_workload(opts_, times_, *this);
}

worker::~worker() {
  for (auto& c : conns_) {
    if (c.fd >= 0) ::close(c.fd);
  }
  if (epfd_ >= 0) ::close(epfd_);
}

std::uint32_t worker::next_mask() { return static_cast<std::uint32_t>(splitmix64(rng_)); }

void worker::run() noexcept {
  try {
    epfd_ = epoll_create1(EPOLL_CLOEXEC);
    if (epfd_ < 0) {
      result_.first_error = std::string("epoll_create1: ") + std::strerror(errno);
      result_.errors.connect_failed += conns_.size();
      progress_.finished.store(true);
      return;
    }
    connect_start_ = now_ns();
    std::uint64_t close_deadline = 0;
    while (stage_ != stage::done) {
      std::uint64_t now = now_ns();
      turn_now_ = now;
      if (shared_.stop.load(std::memory_order_relaxed) && stage_ != stage::closing) {
        if (stage_ == stage::connecting && shared_.started.load(std::memory_order_acquire)) begin_load(now);
        begin_closing(now);
        close_deadline = now + close_wait_ns;
      }
      std::uint64_t deadline = now + 10 * ns_per_ms;
      switch (stage_) {
        case stage::connecting:
          if (shared_.started.load(std::memory_order_acquire)) {
            begin_load(now);
            deadline = now;
          } else {
            start_connections(now);
            // Pace connects finely while some remain; otherwise poll the
            // start flag every 10 ms.
            if (next_to_start_ < conns_.size()) deadline = now + 1 * ns_per_ms;
          }
          break;
        case stage::loading:
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
            begin_closing(now);
            close_deadline = now + close_wait_ns;
            deadline = now;
          }
          break;
        case stage::closing:
          if (open_ == 0 || now >= close_deadline) {
            stage_ = stage::done;
            continue;
          }
          deadline = std::min(close_deadline, now + 50 * ns_per_ms);
          break;
        case stage::done: break;
      }
      loop_turn(deadline);
      publish();
    }
    for (auto& c : conns_) {
      if (c.state != conn_state::closed && c.state != conn_state::idle) close_fd(c);
    }
  } catch (const std::exception& e) {
    // Out of memory or similar: report it, never crash the whole run.
    if (result_.first_error.empty()) result_.first_error = std::string("worker aborted: ") + e.what();
    result_.errors.protocol_error++;
  }
  publish();
  progress_.finished.store(true, std::memory_order_release);
}

void worker::loop_turn(std::uint64_t deadline) {
  const std::uint64_t now = now_ns();
  const timespec timeout = to_timespec(deadline > now ? deadline - now : 0);
  // epoll_pwait2 takes nanoseconds: epoll_wait's millisecond timeout would
  // make every scheduled send up to 1 ms late, and that would show as latency.
  int n = epoll_pwait2(epfd_, events_.data(), static_cast<int>(events_.size()), &timeout, nullptr);
  if (n < 0 && errno == ENOSYS) {
    const auto ms = static_cast<int>((timeout.tv_sec * 1000) + (timeout.tv_nsec + 999'999) / 1'000'000);
    n = epoll_wait(epfd_, events_.data(), static_cast<int>(events_.size()), ms);
  }
  const std::uint64_t after = now_ns();
  turn_now_ = after;
  if (n <= 0) return;  // timeout or EINTR
  for (int i = 0; i < n; ++i) {
    auto* c = static_cast<connection*>(events_[static_cast<std::size_t>(i)].data.ptr);
    on_event(*c, events_[static_cast<std::size_t>(i)].events, after);
  }
}

void worker::publish() {
  progress_.sent.store(result_.sent, std::memory_order_relaxed);
  progress_.received.store(result_.received, std::memory_order_relaxed);
  progress_.open.store(open_, std::memory_order_relaxed);
  progress_.settled.store(settled_, std::memory_order_relaxed);
  progress_.errors.store(result_.errors.total(), std::memory_order_relaxed);
}

void worker::start_connections(std::uint64_t now) {
  const double per_worker_rate = opts_.connect_rate / static_cast<double>(opts_.threads);
  const auto allowed =
      static_cast<std::uint64_t>(static_cast<double>(now - connect_start_) / 1e9 * per_worker_rate) + 1;
  while (next_to_start_ < conns_.size() && next_to_start_ < allowed && pending_ < max_pending_per_worker) {
    start_one(conns_[next_to_start_++]);
  }
}

void worker::start_one(connection& c) {
  c.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c.fd < 0) {
    fail(c, result_.errors.connect_failed, "socket", errno);
    return;
  }
  c.state = conn_state::connecting;
  ++pending_;
  const int one = 1;
  // Echo latency is the point: never let Nagle hold a small frame back.
  ::setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (!opts_.source_ips.empty()) {
    // Bind the source address but let connect() pick the port: the port
    // is then unique per (source, destination) pair, not per source, so
    // each extra source address adds a whole ephemeral port range.
    ::setsockopt(c.fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
    sockaddr_in src{};
    src.sin_family = AF_INET;
    src.sin_addr = opts_.source_ips[c.global_index % opts_.source_ips.size()];
    if (::bind(c.fd, reinterpret_cast<const sockaddr*>(&src), sizeof src) != 0) {
      fail(c, result_.errors.connect_failed, "bind", errno);
      return;
    }
  }
  if (::connect(c.fd, reinterpret_cast<const sockaddr*>(&opts_.target), sizeof opts_.target) != 0 &&
      errno != EINPROGRESS) {
    fail(c, result_.errors.connect_failed, "connect", errno);
    return;
  }
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
  ev.data.ptr = &c;
  if (::epoll_ctl(epfd_, EPOLL_CTL_ADD, c.fd, &ev) != 0) {
    fail(c, result_.errors.connect_failed, "epoll_ctl", errno);
    return;
  }
  // Readiness is reported on insertion, so an already completed connect
  // shows up as EPOLLOUT on the next turn.
}

void worker::on_event(connection& c, std::uint32_t events, std::uint64_t now) {
  if (c.state == conn_state::closed) return;
  if (c.state == conn_state::connecting) {
    if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) finish_connect(c);
    return;
  }
  if (events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP)) read_ready(c, now);
  if (c.state == conn_state::closed) return;
  if ((events & EPOLLOUT) && c.want_write) {
    c.want_write = false;
    flush(c);
    if (c.state == conn_state::open && load_begun_) workload_->top_up(c, now);
  }
}

void worker::finish_connect(connection& c) {
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err != 0) {
    fail(c, result_.errors.connect_failed, "connect", err);
    return;
  }
  const auto req = make_handshake_request(opts_.host_header, opts_.path, splitmix64(rng_), splitmix64(rng_),
                                          opts_.deflate ? deflate_offer : std::string_view{});
  c.expected_accept = req.expected_accept;
  c.state = conn_state::handshaking;
  c.out.append(req.text.data(), req.text.size());
  flush(c);
}

void worker::read_ready(connection& c, std::uint64_t now) {
  for (;;) {
    const ssize_t n = ::recv(c.fd, scratch_.data(), scratch_.size(), 0);
    if (n > 0) {
      const auto got = static_cast<std::size_t>(n);
      if (in_window()) result_.wire_in_window += got;
      if (c.state == conn_state::handshaking) {
        c.in.append(scratch_.data(), got);
        on_handshake_bytes(c, now);
      } else if (c.in.empty()) {
        // Common case: whole frames, parsed straight from the shared buffer.
        const std::size_t used = process_frames(c, scratch_.data(), got, now);
        if (c.state == conn_state::closed) return;
        if (used < got) c.in.append(scratch_.data() + used, got - used);
      } else {
        c.in.append(scratch_.data(), got);
        const std::size_t used = process_frames(c, c.in.data(), c.in.size(), now);
        if (c.state == conn_state::closed) return;
        c.in.consume(used);
      }
      if (c.state == conn_state::closed) return;
      // A short read means the socket was empty at that moment; with
      // edge triggering any later data raises a new event, so the extra
      // recv() that would only return EAGAIN is skipped.
      if (got < scratch_.size()) break;
    } else if (n == 0) {
      if (c.state == conn_state::closing)
        close_fd(c);
      else
        fail(c, result_.errors.disconnected, "server closed the TCP connection without a close frame");
      return;
    } else if (errno == EINTR) {
      continue;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      break;
    } else {
      if (c.state == conn_state::closing)
        close_fd(c);
      else
        fail(c, result_.errors.disconnected, "recv", errno);
      return;
    }
  }
  if (c.state == conn_state::open && load_begun_) workload_->top_up(c, now);
}

void worker::on_handshake_bytes(connection& c, std::uint64_t now) {
  std::size_t header_len = 0;
  std::string reason, extensions;
  const auto r = check_handshake_response(reinterpret_cast<const char*>(c.in.data()), c.in.size(), c.expected_accept,
                                          header_len, reason, extensions);
  if (r == handshake_result::need_more) return;
  if (r == handshake_result::rejected) {
    fail(c, result_.errors.handshake_rejected, "handshake rejected: " + reason);
    return;
  }
  if (opts_.deflate && !parse_deflate_answer(extensions, c.deflate.agreed, reason)) {
    fail(c, result_.errors.handshake_rejected, "permessage-deflate answer: " + reason);
    return;
  }
  c.in.consume(header_len);
  c.expected_accept.clear();
  c.expected_accept.shrink_to_fit();
  c.state = conn_state::open;
  --pending_;
  ++settled_;
  ++open_;
  ++result_.established;
  if (!c.in.empty()) {
    const std::size_t used = process_frames(c, c.in.data(), c.in.size(), now);
    if (c.state != conn_state::closed) c.in.consume(used);
  }
  if (c.in.empty()) c.in.release();  // an idle connection keeps no buffer
}

std::size_t worker::process_frames(connection& c, const std::uint8_t* data, std::size_t len, std::uint64_t now) {
  std::size_t pos = 0;
  while (pos < len) {
    frame_header h;
    if (parse_frame_header(data + pos, len - pos, h) == parse_status::need_more) break;
    // RFC 7692 §6: RSV1 only with deflate agreed, on a data message's first frame.
    const bool compressed = h.rsv == 0x40 && c.deflate.agreed.enabled && (h.op == 0x1 || h.op == 0x2);
    if (h.masked || (h.rsv != 0 && !compressed) || h.payload_len > max_frame_len) {
      fail(c, result_.errors.protocol_error,
           h.masked ? "server sent a masked frame"
           : h.rsv  ? "server set reserved bits"
                    : "frame too large");
      return pos;
    }
    const std::size_t total = h.header_len + static_cast<std::size_t>(h.payload_len);
    if (len - pos < total) break;
    const std::uint8_t* payload = data + pos + h.header_len;
    const auto plen = static_cast<std::size_t>(h.payload_len);
    pos += total;
    if (is_control(h.op)) {
      if (!h.fin || plen > 125) {
        fail(c, result_.errors.protocol_error, "fragmented or oversized control frame");
        return pos;
      }
      on_control_frame(c, h.op, payload, plen);
    } else if (h.op == static_cast<std::uint8_t>(opcode::continuation)) {
      if (c.frag_opcode == 0) {
        fail(c, result_.errors.protocol_error, "continuation frame without a started message");
        return pos;
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
        return pos;
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
      return pos;
    }
    if (c.state == conn_state::closed) return pos;
  }
  return pos;
}

void worker::deliver(connection& c, std::uint8_t op, bool compressed, const std::uint8_t* p, std::size_t n,
                     std::uint64_t now) {
  if (compressed) ++result_.compressed_in;
  if (!open_message(c.deflate, compressed, p, n, inflated_, max_frame_len)) {
    fail(c, result_.errors.protocol_error, "compressed message does not inflate");
    return;
  }
  on_data_message(c, op, p, n, now);
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
      close_fd(c);  // the answer to our close: done
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
  if (c.deflate.agreed.enabled && opts_.size >= opts_.deflate_threshold) {
    compressor_.append_frame(c.out, opts_.message_opcode, payload.data(), opts_.size, c.deflate.agreed.client_bits,
                             next_mask());
    ++result_.compressed_out;
  } else {
    append_client_frame(c.out, opts_.message_opcode, payload.data(), opts_.size, next_mask());
  }
  ++c.outstanding;
  ++result_.sent;
  if (send_time_ns >= times_.measure && send_time_ns < times_.end) {
    ++result_.sent_window;
    if (opts_.run_mode == mode::rate) result_.send_lag.record(turn_now_ > send_time_ns ? turn_now_ - send_time_ns : 0);
  }
}

void worker::flush(connection& c) {
  while (!c.want_write && !c.out.empty()) {
    const std::size_t want = c.out.size();
    const ssize_t n = ::send(c.fd, c.out.data(), want, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      if (in_window()) result_.wire_out_window += static_cast<std::size_t>(n);
      c.out.consume(static_cast<std::size_t>(n));
      // Short write: the socket buffer is full; EPOLLOUT will tell us.
      if (static_cast<std::size_t>(n) < want) c.want_write = true;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      c.want_write = true;
    } else {
      if (c.state == conn_state::closing)
        close_fd(c);
      else
        fail(c, result_.errors.disconnected, "send", errno);
      return;
    }
  }
}

void worker::fail(connection& c, std::uint64_t& counter, std::string_view why, int err) {
  ++counter;
  if (result_.first_error.empty()) {
    result_.first_error = std::string(why);
    if (err != 0) result_.first_error += std::string(": ") + std::strerror(err);
  }
  if (c.outstanding) {
    result_.unanswered_closed += c.outstanding;
    c.outstanding = 0;
  }
  close_fd(c);
}

void worker::close_fd(connection& c) {
  switch (c.state) {
    case conn_state::idle:  // failed before it had a socket
      ++settled_;
      break;
    case conn_state::connecting:
    case conn_state::handshaking:
      --pending_;
      ++settled_;
      break;
    case conn_state::open:
    case conn_state::closing: --open_; break;
    case conn_state::closed: return;
  }
  if (c.fd >= 0) ::close(c.fd);  // closing the fd also removes it from the epoll set
  c.fd = -1;
  c.state = conn_state::closed;
  c.want_write = false;
  c.in.release();
  c.out.release();
  c.fragments.release();
}

void worker::begin_load(std::uint64_t now) {
  // The connect phase is over: whatever is not open by now never will be.
  for (auto& c : conns_) {
    if (c.state == conn_state::idle) {
      ++result_.errors.connect_timeout;
      ++settled_;
      c.state = conn_state::closed;
    } else if (c.state == conn_state::connecting || c.state == conn_state::handshaking) {
      fail(c, result_.errors.connect_timeout, "connect phase ended before the handshake completed");
    }
  }
  stage_ = stage::loading;
  (void)now;  // the workload begins at times_.load, in run()
}

bool worker::drained() const {
  for (const auto& c : conns_) {
    if (c.state == conn_state::open && (c.outstanding != 0 || !c.out.empty())) return false;
  }
  return true;
}

void worker::begin_closing(std::uint64_t now) {
  if (!end_seen_) {
    end_seen_ = true;
    result_.open_at_end = open_;
  }
  result_.backlog_at_end = workload_->backlog_at_end();
  (void)now;
  for (auto& c : conns_) {
    if (c.state != conn_state::open) continue;
    result_.unanswered += c.outstanding;
    c.outstanding = 0;
    static constexpr std::uint8_t normal_closure[2] = {0x03, 0xE8};  // 1000
    append_client_frame(c.out, opcode::close, normal_closure, sizeof normal_closure, next_mask());
    c.state = conn_state::closing;
    flush(c);
  }
  stage_ = stage::closing;
}

}  // namespace loadgen
