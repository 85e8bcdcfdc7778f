#include "gateway/routing/worker_link.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "common/link/message_encoder.hpp"
#include "common/link/write_now.hpp"
#include "common/metrics/elapsed.hpp"

namespace fg::gateway {

namespace asio = boost::asio;
using boost::system::error_code;

worker_link::worker_link(socket_type socket, link_events& events, std::span<std::uint8_t> read_buffer,
                         std::uint32_t max_envelope, routing_counters& counters)
    : socket_(std::move(socket)),
      events_(events),
      read_buffer_(read_buffer),
      counters_(counters),
      decoder_(max_envelope) {}

void worker_link::start() {
  error_code ec;
  socket_.non_blocking(true, ec);
  events_.on_link_opened(*this);
  do_wait_read();
}

void worker_link::close(std::string_view why) {
  if (closed_) return;
  closed_ = true;
  error_code ec;
  socket_.close(ec);
  events_.on_link_lost(*this, why);
}

// ---------------------------------------------------------------- reading

void worker_link::do_wait_read() {
  socket_.async_wait(socket_type::wait_read, [self = shared_from_this()](error_code ec) { self->on_readable(ec); });
}

void worker_link::on_readable(error_code ec) {
  if (closed_) return;
  if (ec) return close(ec.message());
  const auto started = std::chrono::steady_clock::now();
  const auto self = shared_from_this();  // handlers below may close the link
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
  for (int reads = 0; reads < kReadsPerTurn; ++reads) {
    const std::size_t n = socket_.read_some(asio::buffer(read_buffer_.data(), read_buffer_.size()), ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) break;
    if (ec) {
      failure = ec == asio::error::eof ? "worker disconnected" : ec.message();
      break;
    }
    took = true;
    if (const auto err = decoder_.feed(read_buffer_.first(n), take_send, take_envelope);
        err != link::decode_error::none) {
      failure = link::to_string(err);
      break;
    }
    if (closed_ || n < read_buffer_.size()) break;  // a short read drained the socket: no read to say so
  }
  // Even if an envelope closed the link: what the others made ready goes out.
  if (took) events_.on_link_batch_end();
  counters_.link_turn_ns.observe(metrics::ns_since(started));
  if (!failure.empty()) return close(failure);
  if (!closed_) do_wait_read();
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

void worker_link::send_message(std::uint64_t conn_id, bool binary, std::span<const std::uint8_t> payload,
                               std::uint64_t seq) {
  if (closed_) return;
  link::encode_message(out_.next_envelope(), conn_id, binary, payload, seq);
  last_seq_ = seq;
  schedule_flush();
}

void worker_link::send(const framegate::link::Envelope& e) {
  if (closed_) return;
  link::encode(e, out_.next_envelope());
  schedule_flush();
}

void worker_link::schedule_flush() {
  if (flush_scheduled_) return;
  flush_scheduled_ = true;
  asio::post(socket_.get_executor(), [self = shared_from_this()] {
    self->flush_scheduled_ = false;
    self->flush();
  });
}

void worker_link::flush() {
  if (closed_) return;
  const std::uint32_t envelopes = out_.queued_envelopes();
  const auto bytes = out_.begin_write();
  if (bytes.empty()) return;  // a write is in flight (its completion flushes again), or nothing is queued
  counters_.envelopes_per_write.observe(envelopes);
  // Bounded: a worker that never acknowledges stops being sampled, not the gateway.
  if (last_seq_ != 0 && (batch_times_.empty() || batch_times_.back().seq < last_seq_) && batch_times_.size() < 256)
    batch_times_.push_back({last_seq_, std::chrono::steady_clock::now()});
  const std::size_t done = link::write_now(socket_.native_handle(), bytes);
  if (done == bytes.size()) {
    out_.complete_write();
    return;
  }
  asio::async_write(socket_, asio::buffer(bytes.data() + done, bytes.size() - done),
                    [self = shared_from_this()](error_code ec, std::size_t) {
                      self->out_.complete_write();
                      if (ec) return self->close(ec.message());
                      self->flush();
                    });
}

}  // namespace fg::gateway
