#pragma once
// The socket side of a worker thread, the same for the echo modes (worker.hpp)
// and the rooms mode (rooms_worker.hpp): the event loop and its stages, one
// edge-triggered epoll set over this thread's connections, connects paced to
// --connect-rate, the opening handshake, the recv() and send() loops, frame
// header checks, deflate on both directions, and the count of connections
// pending, open and settled.
//
// What the messages mean is the mode's. Self (the derived worker, CRTP so the
// per-frame calls stay direct) provides, privately with this class a friend:
//   void step(std::uint64_t now, std::uint64_t& deadline);  see run_stages()
//   void send_closes();       the run is over: close frames to the open connections
//   void report_progress();   after each loop turn
//   static constexpr std::uint64_t max_frame_len;   larger frames are errors
//   static bool may_be_compressed(std::uint8_t op); RSV1 allowed on this opcode
//   R& tally();  the result counted into: established, errors (error_counts),
//                first_error, compressed_in, compressed_out
//   void on_frame(Conn&, const frame_header&, bool compressed, const std::uint8_t* payload,
//                 std::size_t n, std::uint64_t now);  a checked, complete frame
//   void count_in(std::size_t bytes, std::uint64_t now);
//   void count_out(std::size_t bytes);
// and, where the defaults below (do nothing; the turn's time) do not serve:
//   void on_open(Conn&);                       the handshake completed
//   void send_more(Conn&, std::uint64_t now);  bytes arrived or the socket drained
//   void on_closed(Conn&);                     the connection is being closed
//   std::uint64_t arrival_time(std::uint64_t turn);  when this recv()'s bytes count
//                                                    as received (turn: epoll's return)
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "clock.hpp"
#include "connection.hpp"
#include "deflate.hpp"
#include "handshake.hpp"
#include "options.hpp"
#include "splitmix.hpp"
#include "ws_codec.hpp"

namespace loadgen {

template <class Self, class Conn>
class connection_driver {
 public:
  connection_driver(const connection_driver&) = delete;
  connection_driver& operator=(const connection_driver&) = delete;

 protected:
  connection_driver(const options& opts, std::size_t connections, std::uint64_t seed)
      : opts_(opts), conns_(connections), scratch_(scratch_size), events_(1024), rng_(seed) {}
  ~connection_driver() {
    for (auto& c : conns_) {
      if (c.fd >= 0) ::close(c.fd);
    }
    if (epfd_ >= 0) ::close(epfd_);
  }

  // False (errno set) if there is no epoll set; the connect pacing counts from here.
  bool open_event_loop() {
    epfd_ = epoll_create1(EPOLL_CLOEXEC);
    if (epfd_ < 0) return false;
    connect_start_ = now_ns();
    return true;
  }

  // Waits for events until deadline (absolute) and handles them.
  void wait_events(std::uint64_t deadline) {
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
      const auto& ev = events_[static_cast<std::size_t>(i)];
      on_event(*static_cast<Conn*>(ev.data.ptr), ev.events, after);
    }
  }

  // Starts as many connects as --connect-rate allows by now (this thread's
  // share), never more than max_pending at once.
  void start_connections(std::uint64_t now) {
    const double per_worker_rate = opts_.connect_rate / static_cast<double>(opts_.threads);
    const auto allowed =
        static_cast<std::uint64_t>(static_cast<double>(now - connect_start_) / 1e9 * per_worker_rate) + 1;
    while (next_to_start_ < conns_.size() && next_to_start_ < allowed && pending_ < max_pending) {
      start_one(conns_[next_to_start_++]);
    }
  }

  // Connects c now, whatever --connect-rate says: a slot that was never
  // started or is closed (storm mode's next cycle). Its buffers and deflate
  // agreement start afresh.
  void connect_slot(Conn& c) {
    c.state = conn_state::idle;
    c.deflate = {};
    start_one(c);
  }

  // Connections still connecting or handshaking count as failed.
  void fail_pending(std::uint64_t& counter, std::string_view why) {
    for (auto& c : conns_) {
      if (c.state == conn_state::connecting || c.state == conn_state::handshaking) fail(c, counter, why);
    }
  }

  void fail(Conn& c, std::uint64_t& counter, std::string_view why, int err = 0) {
    ++counter;
    auto& first_error = self().tally().first_error;
    if (first_error.empty()) {
      first_error = std::string(why);
      if (err != 0) first_error += std::string(": ") + std::strerror(err);
    }
    close_link(c);
  }

  void close_link(Conn& c) {
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
    self().on_closed(c);
    if (c.fd >= 0) ::close(c.fd);  // closing the fd also removes it from the epoll set
    c.fd = -1;
    c.state = conn_state::closed;
    c.want_write = false;
    c.in.release();
    c.out.release();
  }

  // At the end of the run: whatever still has a socket.
  void close_all() {
    for (auto& c : conns_) {
      if (c.state != conn_state::closed && c.state != conn_state::idle) close_link(c);
    }
  }

  // Our close frame (1000); the connection then waits for the server's.
  void send_close(Conn& c) {
    static constexpr std::uint8_t normal_closure[2] = {0x03, 0xE8};  // 1000
    append_client_frame(c.out, opcode::close, normal_closure, sizeof normal_closure, next_mask());
    c.state = conn_state::closing;
    flush(c);
  }

  // Queues one message, compressed (RSV1) when --deflate was agreed and it
  // has at least --deflate-threshold bytes.
  void queue_frame(Conn& c, opcode op, const std::uint8_t* p, std::size_t n) {
    if (c.deflate.agreed.enabled && n >= opts_.deflate_threshold) {
      compressor_.append_frame(c.out, op, p, n, c.deflate.agreed.client_bits, next_mask());
      ++self().tally().compressed_out;
    } else {
      append_client_frame(c.out, op, p, n, next_mask());
    }
  }

  // A complete message's payload for the mode, inflated if it came
  // compressed (p and n then point into inflated_). False: c failed.
  bool open_payload(Conn& c, bool compressed, const std::uint8_t*& p, std::size_t& n) {
    if (compressed) ++self().tally().compressed_in;
    if (open_message(c.deflate, compressed, p, n, inflated_, Self::max_frame_len)) return true;
    fail(c, self().tally().errors.protocol_error, "compressed message does not inflate");
    return false;
  }

  // Sends what the kernel takes; after a short write, EPOLLOUT resumes.
  void flush(Conn& c) {
    while (!c.want_write && !c.out.empty()) {
      const std::size_t want = c.out.size();
      const ssize_t n = ::send(c.fd, c.out.data(), want, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        self().count_out(static_cast<std::size_t>(n));
        c.out.consume(static_cast<std::size_t>(n));
        // Short write: the socket buffer is full; EPOLLOUT will tell us.
        if (static_cast<std::size_t>(n) < want) c.want_write = true;
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        c.want_write = true;
      } else {
        lost(c, "send", errno);
        return;
      }
    }
  }

  std::uint32_t next_mask() { return static_cast<std::uint32_t>(splitmix64(rng_)); }

  enum class stage { connecting, loading, closing, done };

  // The thread's loop, until every connection is closed. While connecting
  // and loading, Self::step(now, deadline) does the mode's work and sets
  // when it next wants to run (deadline starts 10 ms ahead); it ends the run
  // with start_closing(). Closing waits for the server's close frames, up to
  // a second.
  void run_stages() {
    while (stage_ != stage::done) {
      const std::uint64_t now = now_ns();
      turn_now_ = now;
      std::uint64_t deadline = now + 10 * ns_per_ms;
      if (stage_ != stage::closing) self().step(now, deadline);
      if (stage_ == stage::closing) {
        if (open_ == 0 || now >= close_deadline_) {
          stage_ = stage::done;
          continue;
        }
        deadline = std::min(close_deadline_, now + 50 * ns_per_ms);
      }
      wait_events(deadline);
      self().report_progress();
    }
  }

  void start_closing(std::uint64_t now) {
    self().send_closes();
    stage_ = stage::closing;
    close_deadline_ = now + 1 * ns_per_s;
  }

  // Self's optional hooks (see the top).
  void on_open(Conn&) {}
  void send_more(Conn&, std::uint64_t) {}
  void on_closed(Conn&) {}
  std::uint64_t arrival_time(std::uint64_t turn) const { return turn; }

  const options& opts_;
  std::vector<Conn> conns_;
  std::uint64_t turn_now_ = 0;  // clock read once per loop turn, after epoll returns
  std::uint64_t pending_ = 0;   // connecting or handshaking
  std::uint64_t open_ = 0;
  std::uint64_t settled_ = 0;  // open or failed, counted once per connection
  std::size_t next_to_start_ = 0;
  std::uint64_t connect_start_ = 0;  // when open_event_loop() ran
  stage stage_ = stage::connecting;

 private:
  static constexpr std::size_t scratch_size = 256 * 1024;
  static constexpr std::uint64_t max_pending = 512;  // keeps the server's accept backlog from overflowing

  Self& self() { return static_cast<Self&>(*this); }

  void start_one(Conn& c) {
    ++c.connects;
    c.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    auto& errors = self().tally().errors;
    if (c.fd < 0) {
      fail(c, errors.connect_failed, "socket", errno);
      return;
    }
    c.state = conn_state::connecting;
    ++pending_;
    const int one = 1;
    // Latency is the point: never let Nagle hold a small frame back.
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
        fail(c, errors.connect_failed, "bind", errno);
        return;
      }
    }
    const sockaddr_in& to = opts_.endpoint_of(c.global_index).addr;
    if (::connect(c.fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0 && errno != EINPROGRESS) {
      fail(c, errors.connect_failed, "connect", errno);
      return;
    }
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    ev.data.ptr = &c;
    if (::epoll_ctl(epfd_, EPOLL_CTL_ADD, c.fd, &ev) != 0) {
      fail(c, errors.connect_failed, "epoll_ctl", errno);
      return;
    }
    // Readiness is reported on insertion, so an already completed connect
    // shows up as EPOLLOUT on the next turn.
  }

  void on_event(Conn& c, std::uint32_t events, std::uint64_t now) {
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
      if (c.state == conn_state::open) self().send_more(c, now);
    }
  }

  void finish_connect(Conn& c) {
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err != 0) {
      fail(c, self().tally().errors.connect_failed, "connect", err);
      return;
    }
    // With a token file, successive connects of all slots walk through it.
    const std::size_t turn = c.global_index + static_cast<std::size_t>(c.connects - 1) * opts_.connections;
    const std::string& target = opts_.targets[turn % opts_.targets.size()];
    const auto req = make_handshake_request(opts_.endpoint_of(c.global_index).host_header, target, splitmix64(rng_),
                                            splitmix64(rng_), opts_.deflate ? deflate_offer : std::string_view{});
    c.expected_accept = req.expected_accept;
    c.state = conn_state::handshaking;
    c.out.append(req.text.data(), req.text.size());
    flush(c);
  }

  void read_ready(Conn& c, std::uint64_t turn) {
    for (;;) {
      const ssize_t n = ::recv(c.fd, scratch_.data(), scratch_.size(), 0);
      if (n > 0) {
        const auto got = static_cast<std::size_t>(n);
        const std::uint64_t now = self().arrival_time(turn);
        self().count_in(got, now);
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
        lost(c, "server closed the TCP connection without a close frame");
        return;
      } else if (errno == EINTR) {
        continue;
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        break;
      } else {
        lost(c, "recv", errno);
        return;
      }
    }
    if (c.state == conn_state::open) self().send_more(c, turn);
  }

  void on_handshake_bytes(Conn& c, std::uint64_t now) {
    std::size_t header_len = 0;
    std::string reason, extensions;
    const auto r = check_handshake_response(reinterpret_cast<const char*>(c.in.data()), c.in.size(), c.expected_accept,
                                            header_len, reason, extensions);
    if (r == handshake_result::need_more) return;
    auto& tally = self().tally();
    if (r == handshake_result::rejected) {
      fail(c, tally.errors.handshake_rejected, "handshake rejected: " + reason);
      return;
    }
    if (opts_.deflate && !parse_deflate_answer(extensions, c.deflate.agreed, reason)) {
      fail(c, tally.errors.handshake_rejected, "permessage-deflate answer: " + reason);
      return;
    }
    c.in.consume(header_len);
    c.expected_accept.clear();
    c.expected_accept.shrink_to_fit();
    c.state = conn_state::open;
    --pending_;
    ++settled_;
    ++open_;
    ++tally.established;
    self().on_open(c);
    if (!c.in.empty()) {
      const std::size_t used = process_frames(c, c.in.data(), c.in.size(), now);
      if (c.state != conn_state::closed) c.in.consume(used);
    }
    if (c.in.empty()) c.in.release();  // an idle connection keeps no buffer
  }

  // Hands each complete frame in data[0..len) to Self::on_frame after the
  // checks every server frame must pass; returns the bytes used (a partial
  // frame is left for the next read).
  std::size_t process_frames(Conn& c, const std::uint8_t* data, std::size_t len, std::uint64_t now) {
    std::size_t pos = 0;
    while (pos < len) {
      frame_header h;
      if (parse_frame_header(data + pos, len - pos, h) == parse_status::need_more) break;
      // RFC 7692 §6: RSV1 only with deflate agreed, on a message's first frame.
      const bool compressed = h.rsv == 0x40 && c.deflate.agreed.enabled && Self::may_be_compressed(h.op);
      if (h.masked || (h.rsv != 0 && !compressed) || h.payload_len > Self::max_frame_len) {
        fail(c, self().tally().errors.protocol_error,
             h.masked ? "server sent a masked frame"
             : h.rsv  ? "server set reserved bits"
                      : "frame too large");
        return pos;
      }
      const std::size_t total = h.header_len + static_cast<std::size_t>(h.payload_len);
      if (len - pos < total) break;
      const std::uint8_t* payload = data + pos + h.header_len;
      pos += total;
      self().on_frame(c, h, compressed, payload, static_cast<std::size_t>(h.payload_len), now);
      if (c.state == conn_state::closed) return pos;
    }
    return pos;
  }

  // The socket failed: expected once our close frame is out, a loss before.
  void lost(Conn& c, std::string_view why, int err = 0) {
    if (c.state == conn_state::closing)
      close_link(c);
    else
      fail(c, self().tally().errors.disconnected, why, err);
  }

  std::vector<std::uint8_t> scratch_;   // shared receive buffer
  std::vector<std::uint8_t> inflated_;  // --deflate: the message last inflated
  send_compressor compressor_;
  std::vector<epoll_event> events_;
  std::uint64_t rng_;
  int epfd_ = -1;
  std::uint64_t close_deadline_ = 0;
};

}  // namespace loadgen
