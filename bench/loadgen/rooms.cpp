#include "rooms.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "byte_buffer.hpp"
#include "clock.hpp"
#include "connection.hpp"
#include "deflate.hpp"
#include "handshake.hpp"
#include "histogram.hpp"
#include "payload.hpp"
#include "server_probe.hpp"
#include "ws_codec.hpp"

namespace loadgen {

namespace {

constexpr std::size_t scratch_size = 256 * 1024;
constexpr std::uint64_t max_pending_per_worker = 512;
constexpr std::uint64_t max_frame_len = 1ULL << 20;
constexpr std::uint64_t close_wait_ns = 1 * ns_per_s;
constexpr std::uint64_t max_tracked_seq = 1ULL << 24;  // bitset bound per (member, publisher)

volatile std::sig_atomic_t g_rooms_signalled = 0;
extern "C" void on_rooms_signal(int) { g_rooms_signalled = 1; }

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

void sleep_until(std::uint64_t t) {
  const timespec ts = to_timespec(t);
  clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
}

// The fixed layout of the benchmark, derived once from the options.
struct layout {
  std::uint32_t rooms = 1, members = 0, publishers = 0;
  bool publishers_join = true;
  std::uint32_t connections = 0;
  std::vector<std::uint32_t> room_size;      // members per room
  std::vector<std::string> delivery_prefix;  // {"room":"r<k>","data":{"t":
  std::vector<std::string> publish_prefix;   // {"op":"publish","room":"r<k>","data":{"t":
  std::vector<std::string> join_text;        // {"op":"join","room":"r<k>"}
  // After the seq: }}, or with --publish-size ,"x":[...]}} in one of
  // payload_variants() versions, picked by the seq.
  std::vector<std::string> data_tails;
  const std::string& tail_of(std::uint64_t seq) const { return data_tails[seq % data_tails.size()]; }

  bool is_member(std::uint32_t i) const { return i < members; }
  bool is_publisher(std::uint32_t i) const { return publishers_join ? i < publishers : i >= members; }
  std::uint32_t pub_id(std::uint32_t i) const { return publishers_join ? i : i - members; }
  std::uint32_t room_of(std::uint32_t i) const { return is_member(i) ? i % rooms : pub_id(i) % rooms; }
  std::uint32_t room_of_pub(std::uint64_t p) const { return static_cast<std::uint32_t>(p % rooms); }
};

struct shared_phase {
  std::atomic<int> stage{0};  // 0 connect, 1 join, 2 load (times valid), read with acquire
  std::atomic<bool> stop{false};
  std::uint64_t load = 0, measure = 0, end = 0, drain_end = 0;
};

struct progress {
  std::atomic<std::uint64_t> open{0}, settled{0}, errors{0}, published{0}, expected{0}, delivered{0}, duplicates{0},
      bad{0};
  std::atomic<bool> finished{false};
};

struct pub_track {
  std::uint64_t max_seen = 0;
  bool any = false;
  std::vector<std::uint64_t> bits;
};

struct rconn {
  int fd = -1;
  conn_state state = conn_state::idle;
  bool want_write = false;
  bool member = false, publisher = false, joined = false;
  std::uint32_t index = 0, room = 0, pub_id = 0;
  std::uint64_t phase_ns = 0, next_seq = 0;
  std::string expected_accept;
  byte_buffer in, out;
  std::vector<pub_track> seen;  // by publisher id, sized on the first delivery
  deflate_state deflate;        // --deflate: what this connection agreed to
};

struct result {
  std::unique_ptr<histogram> latency = std::make_unique<histogram>();
  std::uint64_t established = 0, connect_failed = 0, connect_timeout = 0, handshake_rejected = 0, closed_by_server = 0,
                disconnected = 0, protocol_error = 0;
  std::uint64_t published = 0, expected = 0, delivered = 0, duplicates = 0, reorders = 0, misrouted = 0, malformed = 0,
                server_errors = 0, unexpected = 0;
  // Sequences missing below the highest one a member got from a publisher:
  // lost for good (a connection is FIFO), unlike the tail still in flight
  // when the drain ended.
  std::uint64_t holes = 0;
  std::uint64_t wire_in = 0, wire_out = 0;  // socket bytes in the measured window
  std::uint64_t compressed_in = 0, compressed_out = 0;
  std::string first_error, first_bad_message;

  std::uint64_t errors() const {
    return connect_failed + connect_timeout + handshake_rejected + closed_by_server + disconnected + protocol_error;
  }
  void merge(const result& o) {
    latency->merge(*o.latency);
    established += o.established;
    connect_failed += o.connect_failed;
    connect_timeout += o.connect_timeout;
    handshake_rejected += o.handshake_rejected;
    closed_by_server += o.closed_by_server;
    disconnected += o.disconnected;
    protocol_error += o.protocol_error;
    published += o.published;
    expected += o.expected;
    delivered += o.delivered;
    duplicates += o.duplicates;
    reorders += o.reorders;
    misrouted += o.misrouted;
    malformed += o.malformed;
    server_errors += o.server_errors;
    unexpected += o.unexpected;
    holes += o.holes;
    wire_in += o.wire_in;
    wire_out += o.wire_out;
    compressed_in += o.compressed_in;
    compressed_out += o.compressed_out;
    if (first_error.empty()) first_error = o.first_error;
    if (first_bad_message.empty()) first_bad_message = o.first_bad_message;
  }
};

// Parses a run of 1..20 ASCII digits at p; advances p.
inline bool take_digits(const std::uint8_t*& p, const std::uint8_t* e, std::uint64_t& out) {
  const std::uint8_t* start = p;
  std::uint64_t v = 0;
  while (p < e && *p >= '0' && *p <= '9' && p - start < 20) v = v * 10 + static_cast<std::uint64_t>(*p++ - '0');
  out = v;
  return p != start;
}

void append_number(std::string& s, std::uint64_t v) {
  char num[24];
  const auto r = std::to_chars(num, num + sizeof num, v);
  s.append(num, r.ptr);
}

inline bool take_literal(const std::uint8_t*& p, const std::uint8_t* e, std::string_view lit) {
  if (static_cast<std::size_t>(e - p) < lit.size() || std::memcmp(p, lit.data(), lit.size()) != 0) return false;
  p += lit.size();
  return true;
}

class rooms_worker {
 public:
  rooms_worker(const options& opts, const layout& lay, std::vector<std::uint32_t> indices, shared_phase& shared,
               progress& prog, std::uint64_t seed)
      : opts_(opts),
        lay_(lay),
        shared_(shared),
        prog_(prog),
        conns_(indices.size()),
        scratch_(scratch_size),
        events_(1024),
        rng_(seed),
        interval_ns_(static_cast<std::uint64_t>(1e9 / opts.publish_rate)),
        drain_gap_ns_(static_cast<std::uint64_t>(opts.drain_s * 1e9)) {
    for (std::size_t k = 0; k < conns_.size(); ++k) {
      rconn& c = conns_[k];
      c.index = indices[k];
      c.member = lay.is_member(c.index);
      c.publisher = lay.is_publisher(c.index);
      c.room = lay.room_of(c.index);
      if (c.publisher) {
        c.pub_id = lay.pub_id(c.index);
        // Publishers' slots spread evenly over one interval.
        c.phase_ns = interval_ns_ * c.pub_id / std::max<std::uint32_t>(1, lay.publishers);
        pubs_.push_back(&c);
      }
    }
  }
  ~rooms_worker() {
    for (auto& c : conns_)
      if (c.fd >= 0) ::close(c.fd);
    if (epfd_ >= 0) ::close(epfd_);
  }

  void run() noexcept {
    try {
      loop();
    } catch (const std::exception& e) {
      if (res_.first_error.empty()) res_.first_error = std::string("worker aborted: ") + e.what();
      ++res_.protocol_error;
    }
    for (auto& c : conns_)
      if (c.fd >= 0) close_fd(c);
    count_holes();
    publish_progress();
    prog_.finished.store(true, std::memory_order_release);
  }

  const result& res() const { return res_; }

 private:
  enum class stage { connecting, loading, closing, done };

  void loop() {
    epfd_ = epoll_create1(EPOLL_CLOEXEC);
    if (epfd_ < 0) throw std::runtime_error(std::string("epoll_create1: ") + std::strerror(errno));
    connect_start_ = now_ns();
    const std::uint64_t connect_deadline =
        connect_start_ + static_cast<std::uint64_t>(opts_.connect_timeout_s * 1e9) + 2 * ns_per_s;
    std::uint64_t close_deadline = 0;
    while (stage_ != stage::done) {
      const std::uint64_t now = now_ns();
      const int st = shared_.stage.load(std::memory_order_acquire);
      std::uint64_t deadline = now + 10 * ns_per_ms;
      if (stage_ != stage::closing && (shared_.stop.load(std::memory_order_relaxed) || g_rooms_signalled)) {
        begin_closing();
        close_deadline = now + close_wait_ns;
      }
      switch (stage_) {
        case stage::connecting:
          if (st == 0) {
            start_connections(now);
            if (next_to_start_ < conns_.size()) deadline = now + ns_per_ms;
          }
          if (st >= 1) {
            send_joins();
            // A connection still in progress past the limit is a failed connect.
            if (now >= connect_deadline) expire_pending();
          }
          if (st >= 2) {
            stage_ = stage::loading;
            deadline = now;
          }
          break;
        case stage::loading: {
          if (now >= shared_.end && !end_seen_) {
            publish_due(shared_.end - 1);  // a late wake-up still sends what was due before the end
            end_seen_ = true;
          }
          if (now < shared_.end) {
            deadline = std::min(publish_due(now), shared_.end);
          } else if (now < shared_.drain_end && now - std::max(last_delivery_, shared_.end) < drain_gap_ns_) {
            deadline = std::min(shared_.drain_end, now + 50 * ns_per_ms);
          } else {
            begin_closing();
            close_deadline = now + close_wait_ns;
            deadline = now;
          }
          break;
        }
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
      publish_progress();
    }
  }

  void count_holes() {
    for (const auto& c : conns_) {
      for (const auto& tr : c.seen) {
        if (!tr.any) continue;
        std::uint64_t got = 0;
        const std::size_t last_word = static_cast<std::size_t>(tr.max_seen >> 6);
        for (std::size_t w = 0; w <= last_word && w < tr.bits.size(); ++w) got += std::popcount(tr.bits[w]);
        res_.holes += tr.max_seen + 1 - got;
      }
    }
  }

  void publish_progress() {
    prog_.open.store(open_, std::memory_order_relaxed);
    prog_.settled.store(settled_, std::memory_order_relaxed);
    prog_.errors.store(res_.errors(), std::memory_order_relaxed);
    prog_.published.store(res_.published, std::memory_order_relaxed);
    prog_.expected.store(res_.expected, std::memory_order_relaxed);
    prog_.delivered.store(res_.delivered, std::memory_order_relaxed);
    prog_.duplicates.store(res_.duplicates, std::memory_order_relaxed);
    prog_.bad.store(res_.reorders + res_.misrouted + res_.malformed + res_.server_errors + res_.unexpected,
                    std::memory_order_relaxed);
  }

  void loop_turn(std::uint64_t deadline) {
    const std::uint64_t now = now_ns();
    const timespec timeout = to_timespec(deadline > now ? deadline - now : 0);
    int n = epoll_pwait2(epfd_, events_.data(), static_cast<int>(events_.size()), &timeout, nullptr);
    if (n < 0 && errno == ENOSYS) {
      const auto ms = static_cast<int>((timeout.tv_sec * 1000) + (timeout.tv_nsec + 999'999) / 1'000'000);
      n = epoll_wait(epfd_, events_.data(), static_cast<int>(events_.size()), ms);
    }
    for (int i = 0; i < n; ++i) {
      const auto& ev = events_[static_cast<std::size_t>(i)];
      on_event(*static_cast<rconn*>(ev.data.ptr), ev.events);
    }
  }

  void note_error(std::uint64_t& counter, const std::string& what) {
    ++counter;
    if (res_.first_error.empty()) res_.first_error = what;
  }

  void fail(rconn& c, std::uint64_t& counter, const std::string& what, int err = 0) {
    if (c.state == conn_state::connecting || c.state == conn_state::handshaking) {
      --pending_;
      ++settled_;
    }
    if (c.state == conn_state::open || c.state == conn_state::closing) --open_;
    note_error(counter, err ? what + ": " + std::strerror(err) : what);
    if (c.fd >= 0) ::close(c.fd);
    c.fd = -1;
    c.state = conn_state::closed;
    c.in.release();
    c.out.release();
  }

  void close_fd(rconn& c) {
    if (c.state == conn_state::open || c.state == conn_state::closing) --open_;
    if (c.fd >= 0) ::close(c.fd);
    c.fd = -1;
    c.state = conn_state::closed;
  }

  void start_connections(std::uint64_t now) {
    const double per_worker_rate = opts_.connect_rate / static_cast<double>(opts_.threads);
    const auto allowed =
        static_cast<std::uint64_t>(static_cast<double>(now - connect_start_) / 1e9 * per_worker_rate) + 1;
    while (next_to_start_ < conns_.size() && next_to_start_ < allowed && pending_ < max_pending_per_worker)
      start_one(conns_[next_to_start_++]);
  }

  void expire_pending() {
    for (auto& c : conns_) {
      if (c.state == conn_state::connecting || c.state == conn_state::handshaking)
        fail(c, res_.connect_timeout, "connect phase timed out");
    }
  }

  void start_one(rconn& c) {
    c.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c.fd < 0) {
      ++settled_;
      note_error(res_.connect_failed, std::string("socket: ") + std::strerror(errno));
      c.state = conn_state::closed;
      return;
    }
    c.state = conn_state::connecting;
    ++pending_;
    const int one = 1;
    ::setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (!opts_.source_ips.empty()) {
      ::setsockopt(c.fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
      sockaddr_in src{};
      src.sin_family = AF_INET;
      src.sin_addr = opts_.source_ips[c.index % opts_.source_ips.size()];
      if (::bind(c.fd, reinterpret_cast<const sockaddr*>(&src), sizeof src) != 0) {
        fail(c, res_.connect_failed, "bind", errno);
        return;
      }
    }
    if (::connect(c.fd, reinterpret_cast<const sockaddr*>(&opts_.target), sizeof opts_.target) != 0 &&
        errno != EINPROGRESS) {
      fail(c, res_.connect_failed, "connect", errno);
      return;
    }
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    ev.data.ptr = &c;
    if (::epoll_ctl(epfd_, EPOLL_CTL_ADD, c.fd, &ev) != 0) fail(c, res_.connect_failed, "epoll_ctl", errno);
  }

  void on_event(rconn& c, std::uint32_t events) {
    if (c.state == conn_state::closed) return;
    if (c.state == conn_state::connecting) {
      if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) finish_connect(c);
      return;
    }
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP)) read_ready(c);
    if (c.state == conn_state::closed) return;
    if ((events & EPOLLOUT) && c.want_write) {
      c.want_write = false;
      flush(c);
    }
  }

  void finish_connect(rconn& c) {
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err != 0) {
      fail(c, res_.connect_failed, "connect", err);
      return;
    }
    const auto req = make_handshake_request(opts_.host_header, opts_.path, splitmix64(rng_), splitmix64(rng_),
                                            opts_.deflate ? deflate_offer : std::string_view{});
    c.expected_accept = req.expected_accept;
    c.state = conn_state::handshaking;
    c.out.append(req.text.data(), req.text.size());
    flush(c);
  }

  void flush(rconn& c) {
    while (!c.out.empty()) {
      const ssize_t n = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
      if (n > 0) {
        if (in_window(now_ns())) res_.wire_out += static_cast<std::size_t>(n);
        c.out.consume(static_cast<std::size_t>(n));
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        c.want_write = true;
        return;
      } else {
        if (c.state == conn_state::closing)
          close_fd(c);
        else
          fail(c, res_.disconnected, "send", errno);
        return;
      }
    }
  }

  void read_ready(rconn& c) {
    for (;;) {
      // A partial frame left from the last read goes in front of the new bytes.
      const std::size_t carried = c.in.size();
      if (carried > 0 && c.state != conn_state::handshaking) {
        if (carried >= scratch_.size() / 2) {
          fail(c, res_.protocol_error, "frame larger than the receive buffer");
          return;
        }
        std::memcpy(scratch_.data(), c.in.data(), carried);
        c.in.clear();
      }
      const std::size_t base = c.state == conn_state::handshaking ? 0 : carried;
      const ssize_t n = ::recv(c.fd, scratch_.data() + base, scratch_.size() - base, 0);
      if (n > 0) {
        const auto got = static_cast<std::size_t>(n);
        const std::uint64_t now = now_ns();
        if (in_window(now)) res_.wire_in += got;
        if (c.state == conn_state::handshaking) {
          c.in.append(scratch_.data(), got);
          on_handshake_bytes(c, now);
        } else {
          const std::size_t total = base + got;
          const std::size_t used = process_frames(c, scratch_.data(), total, now);
          if (c.state == conn_state::closed) return;
          if (used < total) c.in.append(scratch_.data() + used, total - used);
        }
        if (c.state == conn_state::closed) return;
        if (got < scratch_.size() - base) break;
      } else if (n == 0) {
        if (carried > 0 && c.state != conn_state::handshaking) c.in.append(scratch_.data(), carried);
        if (c.state == conn_state::closing)
          close_fd(c);
        else
          fail(c, res_.disconnected, "server closed the TCP connection without a close frame");
        return;
      } else {
        if (carried > 0 && c.state != conn_state::handshaking) c.in.append(scratch_.data(), carried);
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        if (c.state == conn_state::closing)
          close_fd(c);
        else
          fail(c, res_.disconnected, "recv", errno);
        return;
      }
    }
  }

  void on_handshake_bytes(rconn& c, std::uint64_t now) {
    std::size_t header_len = 0;
    std::string reason, extensions;
    const auto r = check_handshake_response(reinterpret_cast<const char*>(c.in.data()), c.in.size(), c.expected_accept,
                                            header_len, reason, extensions);
    if (r == handshake_result::need_more) return;
    if (r == handshake_result::rejected) {
      fail(c, res_.handshake_rejected, "handshake rejected: " + reason);
      return;
    }
    if (opts_.deflate && !parse_deflate_answer(extensions, c.deflate.agreed, reason)) {
      fail(c, res_.handshake_rejected, "permessage-deflate answer: " + reason);
      return;
    }
    c.in.consume(header_len);
    c.expected_accept.clear();
    c.expected_accept.shrink_to_fit();
    c.state = conn_state::open;
    --pending_;
    ++settled_;
    ++open_;
    ++res_.established;
    if (shared_.stage.load(std::memory_order_acquire) >= 1) send_join(c);
    if (!c.in.empty()) {
      const std::size_t used = process_frames(c, c.in.data(), c.in.size(), now);
      if (c.state != conn_state::closed) c.in.consume(used);
    }
    if (c.in.empty()) c.in.release();
  }

  void send_joins() {
    if (joins_sent_) return;
    joins_sent_ = true;
    for (auto& c : conns_)
      if (c.state == conn_state::open) send_join(c);
  }

  void send_join(rconn& c) {
    if (!c.member || c.joined) return;
    c.joined = true;
    const std::string& text = lay_.join_text[c.room];
    send_text(c, text);
    if (!c.want_write) flush(c);
  }

  // Sends every publish due at or before now (and before the end); returns
  // the time of the next one.
  std::uint64_t publish_due(std::uint64_t now) {
    std::uint64_t next = UINT64_MAX;
    std::string& msg = publish_text_;
    for (rconn* cp : pubs_) {
      rconn& c = *cp;
      if (c.state != conn_state::open) continue;
      bool queued = false;
      for (;;) {
        const std::uint64_t due = shared_.load + c.phase_ns + c.next_seq * interval_ns_;
        if (due > now || due >= shared_.end) {
          if (due < shared_.end) next = std::min(next, due);
          break;
        }
        msg.assign(lay_.publish_prefix[c.room]);
        append_number(msg, due);
        msg.append(",\"p\":");
        append_number(msg, c.pub_id);
        msg.append(",\"s\":");
        append_number(msg, c.next_seq);
        msg.append(lay_.tail_of(c.next_seq));
        send_text(c, msg);
        ++c.next_seq;
        ++res_.published;
        res_.expected += lay_.room_size[c.room];
        queued = true;
      }
      if (queued && !c.want_write) flush(c);
    }
    return next;
  }

  // A text frame from us, compressed (RSV1) when --deflate agreed and it is large enough.
  void send_text(rconn& c, std::string_view text) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(text.data());
    const auto mask = static_cast<std::uint32_t>(splitmix64(rng_));
    if (c.deflate.agreed.enabled && text.size() >= opts_.deflate_threshold) {
      compressor_.append_frame(c.out, opcode::text, p, text.size(), c.deflate.agreed.client_bits, mask);
      ++res_.compressed_out;
    } else {
      append_client_frame(c.out, opcode::text, p, text.size(), mask);
    }
  }

  bool in_window(std::uint64_t now) const {
    return shared_.stage.load(std::memory_order_acquire) >= 2 && now >= shared_.measure && now < shared_.end;
  }

  std::size_t process_frames(rconn& c, const std::uint8_t* data, std::size_t len, std::uint64_t now) {
    std::size_t pos = 0;
    while (pos < len) {
      frame_header h;
      if (parse_frame_header(data + pos, len - pos, h) == parse_status::need_more) break;
      // RFC 7692 §6: RSV1 only with deflate agreed, on a (whole) text message here.
      const bool compressed = h.rsv == 0x40 && c.deflate.agreed.enabled && h.op == 0x1;
      if (h.masked || (h.rsv != 0 && !compressed) || h.payload_len > max_frame_len) {
        fail(c, res_.protocol_error,
             h.masked ? "server sent a masked frame"
             : h.rsv  ? "server set reserved bits"
                      : "frame too large");
        return pos;
      }
      const std::size_t total = h.header_len + static_cast<std::size_t>(h.payload_len);
      if (len - pos < total) break;
      const std::uint8_t* payload = data + pos + h.header_len;
      auto plen = static_cast<std::size_t>(h.payload_len);
      pos += total;
      if (h.op == static_cast<std::uint8_t>(opcode::text) && h.fin) {
        if (compressed) ++res_.compressed_in;
        if (!open_message(c.deflate, compressed, payload, plen, inflated_, max_frame_len)) {
          fail(c, res_.protocol_error, "compressed message does not inflate");
          return pos;
        }
        on_message(c, payload, plen, now);
      } else if (h.op == static_cast<std::uint8_t>(opcode::ping)) {
        if (c.state == conn_state::open) {
          append_client_frame(c.out, opcode::pong, payload, plen, static_cast<std::uint32_t>(splitmix64(rng_)));
          if (!c.want_write) flush(c);
        }
      } else if (h.op == static_cast<std::uint8_t>(opcode::pong)) {
        // unsolicited pong: ignored
      } else if (h.op == static_cast<std::uint8_t>(opcode::close)) {
        if (c.state == conn_state::closing) {
          close_fd(c);
        } else {
          const unsigned code = plen >= 2 ? (unsigned{payload[0]} << 8) | payload[1] : 1005;
          fail(c, res_.closed_by_server, "server closed the connection with code " + std::to_string(code));
        }
        return pos;
      } else {
        fail(c, res_.protocol_error, "unexpected frame (binary, fragmented or reserved opcode)");
        return pos;
      }
      if (c.state == conn_state::closed) return pos;
    }
    return pos;
  }

  void note_bad(std::uint64_t& counter, const std::uint8_t* p, std::size_t n) {
    ++counter;
    if (res_.first_bad_message.empty())
      res_.first_bad_message.assign(reinterpret_cast<const char*>(p), std::min<std::size_t>(n, 200));
  }

  // The hot path: one delivery.
  void on_message(rconn& c, const std::uint8_t* p, std::size_t n, std::uint64_t now) {
    if (c.state != conn_state::open) return;
    last_delivery_ = now;
    if (!c.member) {
      note_bad(res_.unexpected, p, n);
      return;
    }
    const std::string& pre = lay_.delivery_prefix[c.room];
    if (n < pre.size() || std::memcmp(p, pre.data(), pre.size()) != 0) {
      constexpr std::string_view room_start = "{\"room\":\"";
      if (n >= 9 && std::memcmp(p, "{\"error\":", 9) == 0)
        note_bad(res_.server_errors, p, n);
      else if (n >= room_start.size() && std::memcmp(p, room_start.data(), room_start.size()) == 0)
        note_bad(res_.misrouted, p, n);
      else
        note_bad(res_.malformed, p, n);
      return;
    }
    const std::uint8_t* q = p + pre.size();
    const std::uint8_t* const e = p + n;
    std::uint64_t t = 0, pub = 0, seq = 0;
    if (!take_digits(q, e, t) || !take_literal(q, e, ",\"p\":") || !take_digits(q, e, pub) ||
        !take_literal(q, e, ",\"s\":") || !take_digits(q, e, seq) || !take_literal(q, e, lay_.tail_of(seq)) || q != e ||
        seq >= max_tracked_seq) {
      note_bad(res_.malformed, p, n);
      return;
    }
    if (pub >= lay_.publishers || lay_.room_of_pub(pub) != c.room) {
      note_bad(res_.misrouted, p, n);
      return;
    }
    if (c.seen.empty()) c.seen.resize(lay_.publishers);
    pub_track& tr = c.seen[pub];
    const std::size_t word = static_cast<std::size_t>(seq >> 6);
    if (tr.bits.size() <= word) tr.bits.resize(std::max<std::size_t>(word + 1, tr.bits.size() * 2));
    const std::uint64_t bit = 1ULL << (seq & 63);
    if (tr.bits[word] & bit) {
      ++res_.duplicates;
      return;
    }
    tr.bits[word] |= bit;
    if (tr.any && seq < tr.max_seen) ++res_.reorders;
    if (!tr.any || seq > tr.max_seen) tr.max_seen = seq;
    tr.any = true;
    ++res_.delivered;
    if (t >= shared_.measure) res_.latency->record(now > t ? now - t : 0);
  }

  void begin_closing() {
    if (stage_ == stage::closing || stage_ == stage::done) return;
    stage_ = stage::closing;
    const std::uint8_t code[2] = {0x03, 0xE8};  // 1000
    for (auto& c : conns_) {
      if (c.state == conn_state::connecting || c.state == conn_state::handshaking) {
        --pending_;
        ++settled_;
        ::close(c.fd);
        c.fd = -1;
        c.state = conn_state::closed;
      } else if (c.state == conn_state::open) {
        append_client_frame(c.out, opcode::close, code, 2, static_cast<std::uint32_t>(splitmix64(rng_)));
        c.state = conn_state::closing;
        if (!c.want_write) flush(c);
      }
    }
  }

  const options& opts_;
  const layout& lay_;
  shared_phase& shared_;
  progress& prog_;
  std::vector<rconn> conns_;
  std::vector<rconn*> pubs_;
  std::vector<std::uint8_t> scratch_;
  std::vector<epoll_event> events_;
  std::uint64_t rng_;
  std::uint64_t interval_ns_;
  std::uint64_t drain_gap_ns_;
  int epfd_ = -1;
  stage stage_ = stage::connecting;
  std::size_t next_to_start_ = 0;
  std::uint64_t pending_ = 0, settled_ = 0, open_ = 0;
  std::uint64_t connect_start_ = 0, last_delivery_ = 0;
  bool joins_sent_ = false, end_seen_ = false;
  result res_;
  std::string publish_text_;
  std::vector<std::uint8_t> inflated_;  // --deflate: the delivery last inflated
  send_compressor compressor_;
};

struct cpu_times {
  double user_s = 0, sys_s = 0;
};

cpu_times self_cpu() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto secs = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; };
  return {secs(ru.ru_utime), secs(ru.ru_stime)};
}

std::string json_escape(std::string_view s) {
  std::string out;
  for (const char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (u < 0x20 || u >= 0x7F) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", u);
      out += b;
    } else {
      out += ch;
    }
  }
  return out;
}

struct probe_state {
  std::string name;
  int pid = 0;
  bool ok = true;
  server_sample start, end;
};

struct second_point {
  double t_s;
  std::uint64_t published, delivered;
};

}  // namespace

int run_rooms(const options& opts) {
  std::signal(SIGPIPE, SIG_IGN);
  struct sigaction sa {};
  sa.sa_handler = on_rooms_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  layout lay;
  lay.rooms = opts.rooms;
  lay.members = opts.members;
  lay.publishers = opts.publishers;
  lay.publishers_join = opts.publishers_join;
  if (lay.publishers_join && lay.publishers > lay.members) {
    std::fprintf(stderr, "framegate-loadgen: --publishers-join yes needs --publishers <= --members\n");
    return 2;
  }
  lay.connections = lay.members + (lay.publishers_join ? 0 : lay.publishers);
  lay.room_size.assign(lay.rooms, 0);
  for (std::uint32_t i = 0; i < lay.members; ++i) ++lay.room_size[i % lay.rooms];
  for (std::uint32_t r = 0; r < lay.rooms; ++r) {
    const std::string name = "r" + std::to_string(r);
    lay.delivery_prefix.push_back("{\"room\":\"" + name + "\",\"data\":{\"t\":");
    lay.publish_prefix.push_back("{\"op\":\"publish\",\"room\":\"" + name + "\",\"data\":{\"t\":");
    lay.join_text.push_back("{\"op\":\"join\",\"room\":\"" + name + "\"}");
  }
  // --publish-size: a JSON array of records after the sequence number.
  if (opts.publish_size == 0) lay.data_tails.assign(1, "}}");
  for (std::size_t v = 0; opts.publish_size > 0 && v < payload_variants(opts.publish_size); ++v) {
    std::string tail = ",\"x\":[";
    tail.append(
        json_records(opts.publish_size - std::min<std::size_t>(opts.publish_size, 64), static_cast<std::uint32_t>(v)));
    lay.data_tails.push_back(tail.append("]}}"));
  }
  double offered = 0;
  for (std::uint32_t p = 0; p < lay.publishers; ++p) offered += opts.publish_rate * lay.room_size[p % lay.rooms];

  {
    rlimit rl{};
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
      rl.rlim_cur = rl.rlim_max;
      setrlimit(RLIMIT_NOFILE, &rl);
    }
  }

  shared_phase shared;
  const std::uint64_t run_start = now_ns();
  const cpu_times cpu_start = self_cpu();
  std::vector<probe_state> probes;
  for (const auto& [name, pid] : opts.probe_pids) probes.push_back({name, pid, true, {}, {}});
  auto sample_probes = [&](bool at_end) {
    for (auto& p : probes) {
      if (!p.ok) continue;
      if (auto s = sample_server(static_cast<pid_t>(p.pid)))
        (at_end ? p.end : p.start) = *s;
      else
        p.ok = false;
    }
  };

  std::vector<std::unique_ptr<progress>> progs;
  std::vector<std::unique_ptr<rooms_worker>> workers;
  for (unsigned t = 0; t < opts.threads; ++t) {
    std::vector<std::uint32_t> mine;
    for (std::uint32_t i = t; i < lay.connections; i += opts.threads) mine.push_back(i);
    progs.push_back(std::make_unique<progress>());
    workers.push_back(std::make_unique<rooms_worker>(opts, lay, std::move(mine), shared, *progs.back(),
                                                     run_start ^ (0x9E3779B97F4A7C15ULL * (t + 1))));
  }
  std::vector<std::thread> threads;
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
    if (t.settled >= lay.connections || now >= connect_deadline || g_rooms_signalled) break;
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
  while (now_ns() < settle_end && !g_rooms_signalled) sleep_until(std::min(settle_end, now_ns() + 50 * ns_per_ms));
  const totals at_start = read();
  shared.load = now_ns() + 20 * ns_per_ms;
  shared.measure = shared.load + static_cast<std::uint64_t>(opts.warmup_s * 1e9);
  shared.end = shared.measure + static_cast<std::uint64_t>(opts.duration_s * 1e9);
  shared.drain_end = shared.end + static_cast<std::uint64_t>(opts.drain_max_s * 1e9);
  shared.stage.store(2, std::memory_order_release);
  std::fprintf(stderr, "[loadgen] ready: %llu/%u connections open; publishing %.0f deliveries/s offered\n",
               static_cast<unsigned long long>(at_start.open), lay.connections, offered);
  std::fflush(stderr);

  cpu_times cpu_m0{}, cpu_m1{};
  bool have_m0 = false, have_m1 = false;
  std::uint64_t delivered_m0 = 0, delivered_m1 = 0, published_m0 = 0, published_m1 = 0;
  std::uint64_t m0_at = 0, m1_at = 0;
  std::vector<second_point> timeline;
  totals last = at_start;
  std::uint64_t last_print = shared.load;
  next_print = shared.load + ns_per_s;
  const std::uint64_t hard_stop = shared.drain_end + 3 * ns_per_s;
  bool interrupted = false, all_delivered_early = false;
  for (;;) {
    std::uint64_t wake = next_print;
    if (!have_m0) wake = std::min(wake, shared.measure);
    if (!have_m1) wake = std::min(wake, shared.end);
    sleep_until(std::min(wake, now_ns() + 50 * ns_per_ms));
    const std::uint64_t now = now_ns();
    if (!have_m0 && now >= shared.measure) {
      const totals t = read();
      cpu_m0 = self_cpu();
      sample_probes(false);
      delivered_m0 = t.delivered;
      published_m0 = t.published;
      m0_at = now;
      have_m0 = true;
    }
    if (!have_m1 && now >= shared.end) {
      const totals t = read();
      cpu_m1 = self_cpu();
      sample_probes(true);
      delivered_m1 = t.delivered;
      published_m1 = t.published;
      m1_at = now;
      have_m1 = true;
    }
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
    if (have_m1 && now >= shared.end + 100 * ns_per_ms && t.delivered >= t.expected && !shared.stop.load()) {
      all_delivered_early = true;
      shared.stop.store(true);
    }
    if ((g_rooms_signalled || now >= hard_stop) && !shared.stop.load()) {
      interrupted = g_rooms_signalled != 0;
      if (!have_m1) {
        cpu_m1 = self_cpu();
        sample_probes(true);
        delivered_m1 = t.delivered;
        published_m1 = t.published;
        m1_at = now;
        have_m1 = true;
      }
      shared.stop.store(true);
    }
  }
  for (auto& th : threads) th.join();
  const std::uint64_t finished_at = now_ns();

  result total;
  for (const auto& w : workers) total.merge(w->res());
  const double window_s = have_m0 && have_m1 && m1_at > m0_at ? static_cast<double>(m1_at - m0_at) / 1e9 : 0;
  const double drain_s = static_cast<double>(finished_at - std::min(finished_at, shared.end)) / 1e9;
  const std::uint64_t window_delivered = delivered_m1 - delivered_m0;
  const std::uint64_t window_published = published_m1 - published_m0;
  const double delivered_per_s = window_s > 0 ? static_cast<double>(window_delivered) / window_s : 0;
  const double delivered_pct =
      total.expected ? 100.0 * static_cast<double>(total.delivered) / static_cast<double>(total.expected) : 0;
  const std::uint64_t undelivered = total.expected > total.delivered ? total.expected - total.delivered : 0;
  const cpu_times cpu_w{cpu_m1.user_s - cpu_m0.user_s, cpu_m1.sys_s - cpu_m0.sys_s};
  const cpu_times cpu_end = self_cpu();
  const cpu_times cpu_run{cpu_end.user_s - cpu_start.user_s, cpu_end.sys_s - cpu_start.sys_s};
  const histogram& h = *total.latency;
  auto ms = [](std::uint64_t ns) { return static_cast<double>(ns) / 1e6; };
  auto pct = [&](double s) { return window_s > 0 ? 100.0 * s / window_s : 0.0; };
  const bool failed = total.duplicates + total.reorders + total.misrouted + total.malformed + total.server_errors +
                              total.unexpected + total.closed_by_server + total.disconnected + total.protocol_error >
                          0 ||
                      total.established == 0;

  std::printf("framegate-loadgen rooms summary\n");
  std::printf("  target        %s  rooms=%u members=%u publishers=%u (join=%s) rate=%g/s each  threads=%u\n",
              opts.url.c_str(), lay.rooms, lay.members, lay.publishers, lay.publishers_join ? "yes" : "no",
              opts.publish_rate, opts.threads);
  std::printf("  connections   established=%llu/%u errors=%llu%s%s\n",
              static_cast<unsigned long long>(total.established), lay.connections,
              static_cast<unsigned long long>(total.errors()),
              total.first_error.empty() ? "" : "  first: ", total.first_error.c_str());
  std::printf("  offered       %.0f deliveries/s (%.0f publishes/s)\n", offered, opts.publish_rate * lay.publishers);
  std::printf("  window        %.2f s: %.0f deliveries/s, %.0f publishes/s\n", window_s, delivered_per_s,
              window_s > 0 ? static_cast<double>(window_published) / window_s : 0);
  std::printf("  delivered     %llu of %llu expected (%.2f%%), undelivered=%llu after %.1f s of drain%s\n",
              static_cast<unsigned long long>(total.delivered), static_cast<unsigned long long>(total.expected),
              delivered_pct, static_cast<unsigned long long>(undelivered), drain_s,
              all_delivered_early ? " (all in)" : "");
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
  std::printf("  latency ms    p50=%.3f p90=%.3f p99=%.3f p99.9=%.3f max=%.3f (n=%llu)\n", ms(h.percentile(0.5)),
              ms(h.percentile(0.9)), ms(h.percentile(0.99)), ms(h.percentile(0.999)), ms(h.max()),
              static_cast<unsigned long long>(h.count()));
  std::printf("  cpu loadgen   %.1f%% of one core in the window (user %.2f s, sys %.2f s)\n",
              pct(cpu_w.user_s + cpu_w.sys_s), cpu_w.user_s, cpu_w.sys_s);
  for (const auto& p : probes) {
    if (!p.ok) {
      std::printf("  cpu %-9s pid %d: not sampled (gone)\n", p.name.c_str(), p.pid);
      continue;
    }
    const double u = p.end.user_s - p.start.user_s, s = p.end.sys_s - p.start.sys_s;
    std::printf("  cpu %-9s %.1f%% (pid %d, user %.2f s, sys %.2f s, rss %lu KiB)\n", p.name.c_str(), pct(u + s), p.pid,
                u, s, p.end.rss_kib);
  }

  if (!opts.json_path.empty()) {
    std::FILE* f = std::fopen(opts.json_path.c_str(), "w");
    if (f == nullptr) {
      std::fprintf(stderr, "framegate-loadgen: cannot write %s: %s\n", opts.json_path.c_str(), std::strerror(errno));
      return 1;
    }
    auto u64 = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
    std::fprintf(f, "{\n  \"mode\": \"rooms\",\n  \"url\": \"%s\",\n", json_escape(opts.url).c_str());
    std::fprintf(f,
                 "  \"config\": {\"rooms\": %u, \"members\": %u, \"publishers\": %u, \"publishers_join\": %s, "
                 "\"publish_rate\": %g, \"duration_s\": %g, \"warmup_s\": %g, \"join_settle_s\": %g, \"drain_s\": %g, "
                 "\"drain_max_s\": %g, \"threads\": %u, \"publish_size\": %zu, \"deflate\": %s, "
                 "\"deflate_threshold\": %zu},\n",
                 lay.rooms, lay.members, lay.publishers, lay.publishers_join ? "true" : "false", opts.publish_rate,
                 opts.duration_s, opts.warmup_s, opts.join_settle_s, opts.drain_s, opts.drain_max_s, opts.threads,
                 opts.publish_size, opts.deflate ? "true" : "false", opts.deflate_threshold);
    std::fprintf(f,
                 "  \"wire\": {\"bytes_in\": %llu, \"bytes_out\": %llu, \"compressed_in\": %llu, "
                 "\"compressed_out\": %llu},\n",
                 u64(total.wire_in), u64(total.wire_out), u64(total.compressed_in), u64(total.compressed_out));
    std::fprintf(f,
                 "  \"connections\": {\"target\": %u, \"established\": %llu, \"connect_failed\": %llu, "
                 "\"connect_timeout\": %llu, \"handshake_rejected\": %llu, \"closed_by_server\": %llu, "
                 "\"disconnected\": %llu, \"protocol_error\": %llu, \"first_error\": \"%s\"},\n",
                 lay.connections, u64(total.established), u64(total.connect_failed), u64(total.connect_timeout),
                 u64(total.handshake_rejected), u64(total.closed_by_server), u64(total.disconnected),
                 u64(total.protocol_error), json_escape(total.first_error).c_str());
    std::fprintf(f, "  \"offered_deliveries_per_s\": %.1f,\n", offered);
    std::fprintf(f,
                 "  \"window\": {\"seconds\": %.3f, \"deliveries\": %llu, \"deliveries_per_s\": %.1f, "
                 "\"publishes\": %llu, \"publishes_per_s\": %.1f},\n",
                 window_s, u64(window_delivered), delivered_per_s, u64(window_published),
                 window_s > 0 ? static_cast<double>(window_published) / window_s : 0);
    std::fprintf(
        f,
        "  \"delivery\": {\"publishes\": %llu, \"expected\": %llu, \"delivered\": %llu, \"delivered_pct\": "
        "%.3f, \"undelivered\": %llu, \"holes\": %llu, \"drain_s\": %.3f, \"all_delivered\": %s, \"duplicates\": %llu, "
        "\"reorders\": %llu, \"misrouted\": %llu, \"malformed\": %llu, \"server_errors\": %llu, "
        "\"unexpected\": %llu, \"first_bad_message\": \"%s\"},\n",
        u64(total.published), u64(total.expected), u64(total.delivered), delivered_pct, u64(undelivered),
        u64(total.holes), drain_s, undelivered == 0 ? "true" : "false", u64(total.duplicates), u64(total.reorders),
        u64(total.misrouted), u64(total.malformed), u64(total.server_errors), u64(total.unexpected),
        json_escape(total.first_bad_message).c_str());
    std::fprintf(f,
                 "  \"latency_ms\": {\"count\": %llu, \"min\": %.4f, \"mean\": %.4f, \"p50\": %.4f, \"p90\": %.4f, "
                 "\"p99\": %.4f, \"p99_9\": %.4f, \"max\": %.4f},\n",
                 u64(h.count()), ms(h.min()), h.mean() / 1e6, ms(h.percentile(0.5)), ms(h.percentile(0.9)),
                 ms(h.percentile(0.99)), ms(h.percentile(0.999)), ms(h.max()));
    std::fprintf(f,
                 "  \"cpu\": {\"loadgen\": {\"user_s\": %.3f, \"sys_s\": %.3f, \"pct\": %.1f, \"run_user_s\": %.3f, "
                 "\"run_sys_s\": %.3f}",
                 cpu_w.user_s, cpu_w.sys_s, pct(cpu_w.user_s + cpu_w.sys_s), cpu_run.user_s, cpu_run.sys_s);
    for (const auto& p : probes) {
      if (!p.ok) {
        std::fprintf(f, ", \"%s\": null", json_escape(p.name).c_str());
        continue;
      }
      const double u = p.end.user_s - p.start.user_s, s = p.end.sys_s - p.start.sys_s;
      std::fprintf(f,
                   ", \"%s\": {\"pid\": %d, \"user_s\": %.3f, \"sys_s\": %.3f, \"pct\": %.1f, \"rss_kib\": %lu, "
                   "\"hwm_kib\": %lu}",
                   json_escape(p.name).c_str(), p.pid, u, s, pct(u + s), p.end.rss_kib, p.end.hwm_kib);
    }
    std::fprintf(f, "},\n  \"timeline\": [");
    for (std::size_t i = 0; i < timeline.size(); ++i) {
      std::fprintf(f, "%s{\"t\": %.2f, \"publishes\": %llu, \"deliveries\": %llu}", i ? ", " : "", timeline[i].t_s,
                   u64(timeline[i].published), u64(timeline[i].delivered));
    }
    std::fprintf(f, "],\n  \"interrupted\": %s,\n  \"failed\": %s\n}\n", interrupted ? "true" : "false",
                 failed ? "true" : "false");
    std::fclose(f);
  }
  return failed ? 1 : 0;
}

}  // namespace loadgen
