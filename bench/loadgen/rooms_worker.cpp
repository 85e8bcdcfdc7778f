#include "rooms_worker.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>

#include "clock.hpp"
#include "process.hpp"
#include "ws_codec.hpp"

namespace loadgen {

namespace {

constexpr std::uint64_t max_tracked_seq = 1ULL << 24;  // bitset bound per (member, publisher)

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

}  // namespace

void rooms_result::merge(const rooms_result& o) {
  latency->merge(*o.latency);
  established += o.established;
  errors.merge(o.errors);
  published += o.published;
  expected += o.expected;
  delivered += o.delivered;
  duplicates += o.duplicates;
  reorders += o.reorders;
  misrouted += o.misrouted;
  malformed += o.malformed;
  server_errors += o.server_errors;
  unexpected += o.unexpected;
  with_offset += o.with_offset;
  holes += o.holes;
  wire_in += o.wire_in;
  wire_out += o.wire_out;
  compressed_in += o.compressed_in;
  compressed_out += o.compressed_out;
  if (first_error.empty()) first_error = o.first_error;
  if (first_bad_message.empty()) first_bad_message = o.first_bad_message;
}

rooms_worker::rooms_worker(const options& opts, const layout& lay, std::vector<std::uint32_t> indices,
                           shared_phase& shared, rooms_progress& prog, std::uint64_t seed)
    : connection_driver(opts, indices.size(), seed),
      lay_(lay),
      shared_(shared),
      prog_(prog),
      interval_ns_(static_cast<std::uint64_t>(1e9 / opts.publish_rate)),
      drain_gap_ns_(static_cast<std::uint64_t>(opts.drain_s * 1e9)) {
  for (std::size_t k = 0; k < conns_.size(); ++k) {
    rooms_connection& c = conns_[k];
    c.global_index = indices[k];
    c.member = lay.is_member(c.global_index);
    c.publisher = lay.is_publisher(c.global_index);
    c.room = lay.room_of(c.global_index);
    if (c.publisher) {
      c.pub_id = lay.pub_id(c.global_index);
      // Publishers' slots spread evenly over one interval.
      c.phase_ns = interval_ns_ * c.pub_id / std::max<std::uint32_t>(1, lay.publishers);
      pubs_.push_back(&c);
    }
  }
}

void rooms_worker::run() noexcept {
  try {
    loop();
  } catch (const std::exception& e) {
    if (res_.first_error.empty()) res_.first_error = std::string("worker aborted: ") + e.what();
    ++res_.errors.protocol_error;
  }
  close_all();
  count_holes();
  report_progress();
  prog_.finished.store(true, std::memory_order_release);
}

void rooms_worker::loop() {
  if (!open_event_loop()) throw std::runtime_error(std::string("epoll_create1: ") + std::strerror(errno));
  connect_deadline_ = connect_start_ + static_cast<std::uint64_t>(opts_.connect_timeout_s * 1e9) + 2 * ns_per_s;
  run_stages();
}

void rooms_worker::step(std::uint64_t now, std::uint64_t& deadline) {
  if (shared_.stop.load(std::memory_order_relaxed) || stop_signalled()) {
    start_closing(now);
    return;
  }
  if (stage_ == stage::connecting) {
    const int st = shared_.stage.load(std::memory_order_acquire);
    if (st == 0) {
      start_connections(now);
      if (next_to_start_ < conns_.size()) deadline = now + ns_per_ms;
    }
    if (st >= 1) {
      send_joins();
      if (now >= connect_deadline_) fail_pending(res_.errors.connect_timeout, "connect phase timed out");
    }
    if (st >= 2) {
      stage_ = stage::loading;
      deadline = now;
    }
    return;
  }
  if (now >= shared_.end && !end_seen_) {
    publish_due(shared_.end - 1);  // a late wake-up still sends what was due before the end
    end_seen_ = true;
  }
  if (now < shared_.end) {
    deadline = std::min(publish_due(now), shared_.end);
  } else if (now < shared_.drain_end && now - std::max(last_delivery_, shared_.end) < drain_gap_ns_) {
    deadline = std::min(shared_.drain_end, now + 50 * ns_per_ms);
  } else {
    start_closing(now);
  }
}

void rooms_worker::count_holes() {
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

void rooms_worker::report_progress() {
  prog_.open.store(open_, std::memory_order_relaxed);
  prog_.settled.store(settled_, std::memory_order_relaxed);
  prog_.errors.store(res_.errors.total(), std::memory_order_relaxed);
  prog_.published.store(res_.published, std::memory_order_relaxed);
  prog_.expected.store(res_.expected, std::memory_order_relaxed);
  prog_.delivered.store(res_.delivered, std::memory_order_relaxed);
  prog_.duplicates.store(res_.duplicates, std::memory_order_relaxed);
  prog_.bad.store(res_.reorders + res_.misrouted + res_.malformed + res_.server_errors + res_.unexpected,
                  std::memory_order_relaxed);
}

void rooms_worker::send_joins() {
  if (joins_sent_) return;
  joins_sent_ = true;
  for (auto& c : conns_)
    if (c.state == conn_state::open) send_join(c);
}

void rooms_worker::send_join(rooms_connection& c) {
  if (!c.member || c.joined) return;
  c.joined = true;
  const std::string& text = lay_.join_text[c.room];
  queue_frame(c, opcode::text, reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  flush(c);
}

std::uint64_t rooms_worker::publish_due(std::uint64_t now) {
  std::uint64_t next = UINT64_MAX;
  std::string& msg = publish_text_;
  for (rooms_connection* cp : pubs_) {
    rooms_connection& c = *cp;
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
      queue_frame(c, opcode::text, reinterpret_cast<const std::uint8_t*>(msg.data()), msg.size());
      ++c.next_seq;
      ++res_.published;
      res_.expected += lay_.room_size[c.room];
      queued = true;
    }
    if (queued) flush(c);
  }
  return next;
}

void rooms_worker::on_frame(rooms_connection& c, const frame_header& h, bool compressed, const std::uint8_t* payload,
                            std::size_t plen, std::uint64_t now) {
  if (h.op == static_cast<std::uint8_t>(opcode::text) && h.fin) {
    if (open_payload(c, compressed, payload, plen)) on_message(c, payload, plen, now);
  } else if (h.op == static_cast<std::uint8_t>(opcode::ping)) {
    if (c.state == conn_state::open) {
      append_client_frame(c.out, opcode::pong, payload, plen, next_mask());
      flush(c);
    }
  } else if (h.op == static_cast<std::uint8_t>(opcode::pong)) {
    // unsolicited pong: ignored
  } else if (h.op == static_cast<std::uint8_t>(opcode::close)) {
    if (c.state == conn_state::closing) {
      close_link(c);
    } else {
      const unsigned code = plen >= 2 ? (unsigned{payload[0]} << 8) | payload[1] : 1005;
      fail(c, res_.errors.closed_by_server, "server closed the connection with code " + std::to_string(code));
    }
  } else {
    fail(c, res_.errors.protocol_error, "unexpected frame (binary, fragmented or reserved opcode)");
  }
}

void rooms_worker::note_bad(std::uint64_t& counter, const std::uint8_t* p, std::size_t n) {
  ++counter;
  if (res_.first_bad_message.empty())
    res_.first_bad_message.assign(reinterpret_cast<const char*>(p), std::min<std::size_t>(n, 200));
}

// The hot path: one delivery.
void rooms_worker::on_message(rooms_connection& c, const std::uint8_t* p, std::size_t n, std::uint64_t now) {
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
  std::uint64_t t = 0, pub = 0, seq = 0, offset = 0;
  bool ok = take_digits(q, e, t) && take_literal(q, e, ",\"p\":") && take_digits(q, e, pub) &&
            take_literal(q, e, ",\"s\":") && take_digits(q, e, seq);
  if (ok) {
    std::string_view data_end = lay_.tail_of(seq);  // "}}": the data's, then the delivery's
    data_end.remove_suffix(1);
    ok = take_literal(q, e, data_end);
  }
  // With history on, the room's offset comes last: ...},"offset":N} (docs/PROTOCOL.md).
  const bool has_offset = ok && take_literal(q, e, ",\"offset\":");
  if (has_offset) ok = take_digits(q, e, offset);
  if (!ok || !take_literal(q, e, "}") || q != e || seq >= max_tracked_seq) {
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
  if (has_offset) ++res_.with_offset;
  if (t >= shared_.measure) res_.latency->record(now > t ? now - t : 0);
}

void rooms_worker::send_closes() {
  for (auto& c : conns_) {
    if (c.state == conn_state::connecting || c.state == conn_state::handshaking)
      close_link(c);  // not a failure: the run is over
    else if (c.state == conn_state::open)
      send_close(c);
  }
}

}  // namespace loadgen
