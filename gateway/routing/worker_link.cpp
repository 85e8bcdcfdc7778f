#include "gateway/routing/worker_link.hpp"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/link/message_encoder.hpp"
#include "common/link/write_now.hpp"
#include "common/metrics/elapsed.hpp"

namespace fg::gateway {

worker_link::worker_link(int fd, event_loop& loop, link_events& events, std::span<std::uint8_t> read_buffer,
                         std::uint32_t max_envelope, routing_counters& counters)
    : fd_(fd), loop_(loop), events_(events), read_buffer_(read_buffer), counters_(counters), decoder_(max_envelope) {}

worker_link::~worker_link() {
  if (fd_ >= 0) ::close(fd_);
}

void worker_link::start() {
  events_.on_link_opened(*this);
  if (!loop_.poller().add(fd_, *this)) return close(std::string("cannot watch the link: ") + std::strerror(errno));
  // Bytes the worker sent before this are reported too: epoll_ctl(ADD)
  // queues the socket's current readiness as its first edge.
  watched_self_ = shared_from_this();
}

void worker_link::close(std::string_view why) {
  if (closed_) return;
  closed_ = true;
  loop_.poller().remove(fd_);
  ::close(fd_);
  fd_ = -1;
  // Nothing will be written: the blocks the ledger holds keep their bytes for replay.
  in_flight_ = {};
  out_.clear();
  // Callers up the stack (this link's own read, the route table) may still
  // use it: the loop's hold ends with the turn.
  if (watched_self_) loop_.release_at_turn_end(std::move(watched_self_));
  events_.on_link_lost(*this, why);
}

void worker_link::on_poll(std::uint32_t events) {
  if (closed_) return;
  const auto self = shared_from_this();  // handlers below may close the link
  if ((events & EPOLLOUT) && !in_flight_.empty() && write_in_flight()) {
    out_.complete_write();
    flush();  // what was queued while this write waited
  }
  if (!closed_ && (events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP))) on_readable(events);
}

// ---------------------------------------------------------------- reading

void worker_link::on_readable(std::uint32_t events) {
  // After the worker's last bytes comes its end of stream, and it raises no
  // edge of its own: when the edge says the peer is gone, read to the end.
  const bool peer_gone = (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0;
  const auto started = std::chrono::steady_clock::now();
  const auto take_send = [this](std::span<const std::uint8_t> bytes) {
    const auto send = link::send_view::parse(bytes);
    if (!send) return false;
    if (!closed_) events_.on_link_send(*this, *send);
    return true;
  };
  const auto take_envelope = [this](const framegate::link::Envelope& e) {
    if (closed_) return;
    if (e.body_case() == framegate::link::Envelope::kAck) on_ack(e.ack().seq());
    events_.on_link_envelope(*this, e);
  };
  // A worker answers a gateway batch with one write, often larger than the
  // buffer. Taking all of it before the batch ends lets each client get its
  // replies in one TCP write: on loopback a send costs ~4 us before its
  // bytes, so replies split over several turns cost more than the link hop.
  // Bounded, so that one busy worker cannot starve the thread's clients.
  std::string failure;
  bool took = false;
  bool drained = false;
  for (int reads = 0; reads < kReadsPerTurn; ++reads) {
    const ssize_t n = ::recv(fd_, read_buffer_.data(), read_buffer_.size(), MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        drained = true;
        break;
      }
      if (errno == EINTR) continue;
      failure = std::strerror(errno);
      break;
    }
    if (n == 0) {
      failure = "worker disconnected";
      break;
    }
    took = true;
    const auto got = static_cast<std::size_t>(n);
    if (const auto err = decoder_.feed(read_buffer_.first(got), take_send, take_envelope);
        err != link::decode_error::none) {
      failure = link::to_string(err);
      break;
    }
    if (closed_) break;
    if (got < read_buffer_.size() && !peer_gone) {  // a short read drained the socket: no read to say so
      drained = true;
      break;
    }
  }
  // Even if an envelope closed the link: what the others made ready goes out.
  if (took) events_.on_link_batch_end();
  counters_.link_turn_ns.observe(metrics::ns_since(started));
  if (!failure.empty()) return close(failure);
  // The budget ran out with bytes left: edge-triggered, they raise no new edge.
  if (!closed_ && !drained) loop_.poller().redeliver(fd_, EPOLLIN);
}

void worker_link::on_ack(std::uint64_t seq) {
  if (batch_times_.empty() || batch_times_.front().seq > seq) return;
  const auto now = std::chrono::steady_clock::now();
  while (!batch_times_.empty() && batch_times_.front().seq <= seq) {
    counters_.roundtrip_ns.observe(static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(now - batch_times_.front().written).count()));
    batch_times_.pop_front();
  }
}

// ---------------------------------------------------------------- writing

stored_payload worker_link::send_message(std::uint64_t conn_id, bool binary, std::span<const std::uint8_t> payload,
                                         std::uint64_t seq) {
  // Encoded even when closed: the caller keeps the payload where it lands.
  // A closed link keeps only the last message, so that a caller that goes
  // on sending to it does not grow it without bound.
  if (closed_) out_.clear();
  const std::size_t at = link::encode_message(out_.next_envelope(), conn_id, binary, payload, seq);
  if (!closed_) {
    last_seq_ = seq;
    schedule_flush();
  }
  return {out_.queued_block(), at};
}

void worker_link::send(const framegate::link::Envelope& e) {
  if (closed_) return;
  link::encode(e, out_.next_envelope());
  schedule_flush();
}

void worker_link::schedule_flush() {
  if (flush_scheduled_) return;
  flush_scheduled_ = true;
  // The aliasing constructor: the base is private, a cast in shared_ptr's code could not see it.
  loop_.at_turn_end(std::shared_ptr<turn_end_task>(shared_from_this(), static_cast<turn_end_task*>(this)),
                    event_loop::turn_end_order::first);
}

void worker_link::on_turn_end() {
  flush_scheduled_ = false;
  flush();
}

void worker_link::flush() {
  if (closed_) return;
  const std::uint32_t envelopes = out_.queued_envelopes();
  const auto bytes = out_.begin_write();
  if (bytes.empty()) return;  // a write is in flight (its end flushes again), or nothing is queued
  counters_.envelopes_per_write.observe(envelopes);
  // Bounded: a worker that never acknowledges stops being sampled, not the gateway.
  if (last_seq_ != 0 && (batch_times_.empty() || batch_times_.back().seq < last_seq_) && batch_times_.size() < 256)
    batch_times_.push_back({last_seq_, std::chrono::steady_clock::now()});
  in_flight_ = bytes;
  if (write_in_flight()) {
    out_.complete_write();
    return;
  }
  ++counters_.link_write_waits;
  // The socket's next writable edge (on_poll) writes the rest. A
  // failed socket raises EPOLLERR or EPOLLHUP there, and the read reports it.
}

bool worker_link::write_in_flight() {
  // Until the socket takes no more: only a full socket raises the next writable edge.
  while (!in_flight_.empty()) {
    const std::size_t n = link::write_now(fd_, in_flight_);
    if (n == 0) return false;
    in_flight_ = in_flight_.subspan(n);
  }
  return true;
}

}  // namespace fg::gateway
