#include "gateway/routing/worker_link.hpp"

#include <algorithm>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "common/hashing.hpp"
#include "common/link/message_encoder.hpp"
#include "common/logging.hpp"
#include "gateway/routing/worker_router.hpp"

namespace fg::gateway {

namespace asio = boost::asio;
using boost::system::error_code;

worker_link::worker_link(worker_router& router, socket_type socket)
    : router_(router),
      socket_(std::move(socket)),
      // Workers send at most a client-sized message plus its envelope.
      decoder_(static_cast<std::uint32_t>(
          std::min<std::uint64_t>(router.config().reader.limits.max_message_size + 64 * 1024, 1u << 30))) {}

void worker_link::start() {
  error_code ec;
  socket_.non_blocking(true, ec);
  do_wait_read();
}

bool worker_link::serves(std::string_view path) const {
  return std::find(paths_.begin(), paths_.end(), path) != paths_.end();
}

void worker_link::set_registration(const framegate::link::Register& r) {
  registered_ = true;
  worker_id_ = r.worker_id();
  worker_hash_ = hash64(worker_id_);
  paths_.assign(r.paths().begin(), r.paths().end());
  // A Message envelope is the payload plus its 8-byte frame header and at
  // most 40 bytes of fields (conn_id, binary, seq, tags and lengths).
  constexpr std::uint64_t envelope_overhead = 64;
  max_payload_ = r.max_envelope() > envelope_overhead ? r.max_envelope() - envelope_overhead : 0;
}

void worker_link::close(std::string_view why) {
  if (closed_) return;
  closed_ = true;
  component_logger("gateway")->info("link to worker '{}' closed: {}", worker_id_.empty() ? "?" : worker_id_, why);
  error_code ec;
  socket_.close(ec);
  router_.on_link_lost(*this);
}

// ---------------------------------------------------------------- reading

void worker_link::do_wait_read() {
  socket_.async_wait(socket_type::wait_read, [self = shared_from_this()](error_code ec) { self->on_readable(ec); });
}

void worker_link::on_readable(error_code ec) {
  if (closed_) return;
  if (ec) return close(ec.message());
  auto buffer = router_.link_read_buffer();
  const std::size_t n = socket_.read_some(asio::buffer(buffer.data(), buffer.size()), ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again) return do_wait_read();
  if (ec) return close(ec == asio::error::eof ? "worker disconnected" : ec.message());
  const auto self = shared_from_this();  // handlers below may close the link
  const auto err = decoder_.feed(buffer.first(n), [this](const framegate::link::Envelope& e) {
    if (!closed_) router_.on_envelope(*this, e);
  });
  router_.after_link_batch();
  if (err != link::decode_error::none) return close(link::to_string(err));
  if (!closed_) do_wait_read();
}

// ---------------------------------------------------------------- writing

std::uint64_t worker_link::send_message(std::uint64_t conn_id, bool binary, std::span<const std::uint8_t> payload) {
  const std::uint64_t seq = next_seq_++;
  link::encode_message(out_, conn_id, binary, payload, seq);
  const std::size_t offset = unacked_bytes_.size();
  unacked_bytes_.append(payload);
  unacked_.push_back(unacked{seq, conn_id, offset, static_cast<std::uint32_t>(payload.size()), binary});
  ++queued_envelopes_;
  schedule_flush();
  return seq;
}

void worker_link::send(const framegate::link::Envelope& e) {
  link::encode(e, out_);
  ++queued_envelopes_;
  schedule_flush();
}

bool worker_link::has_credit() const noexcept {
  const auto& cfg = router_.config();
  return unacked_.size() < cfg.credit_window && unacked_bytes_.size() - unacked_head_ < cfg.credit_bytes;
}

void worker_link::on_ack(std::uint64_t seq) {
  if (!batch_times_.empty() && batch_times_.front().seq <= seq) {
    const auto now = std::chrono::steady_clock::now();
    auto& rtt = router_.mutable_counters().roundtrip_ns;
    while (!batch_times_.empty() && batch_times_.front().seq <= seq) {
      rtt.observe(static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(now - batch_times_.front().written).count()));
      batch_times_.pop_front();
    }
  }
  while (!unacked_.empty() && unacked_.front().seq <= seq) {
    unacked_head_ = unacked_.front().offset + unacked_.front().size;
    unacked_.pop_front();
  }
  if (unacked_.empty()) {
    unacked_bytes_.clear();
    unacked_head_ = 0;
  } else if (unacked_head_ > unacked_bytes_.size() / 2) {
    // Compact now and then so a link that is never fully acknowledged
    // does not grow forever.
    unacked_bytes_.consume(unacked_head_);
    for (auto& u : unacked_) u.offset -= unacked_head_;
    unacked_head_ = 0;
  }
}

void worker_link::schedule_flush() {
  if (flush_scheduled_ || closed_) return;
  flush_scheduled_ = true;
  asio::post(socket_.get_executor(), [self = shared_from_this()] {
    self->flush_scheduled_ = false;
    self->flush();
  });
}

void worker_link::flush() {
  if (write_in_flight_ || out_.empty() || closed_) return;
  router_.mutable_counters().envelopes_per_write.observe(queued_envelopes_);
  queued_envelopes_ = 0;
  // Bounded: a worker that never acknowledges stops being sampled, not the gateway.
  if (const std::uint64_t last = next_seq_ - 1;
      last != 0 && (batch_times_.empty() || batch_times_.back().seq < last) && batch_times_.size() < 256)
    batch_times_.push_back({last, std::chrono::steady_clock::now()});
  std::swap(out_, writing_);
  write_in_flight_ = true;
  asio::async_write(socket_, asio::buffer(writing_.data(), writing_.size()),
                    [self = shared_from_this()](error_code ec, std::size_t) {
                      self->write_in_flight_ = false;
                      self->writing_.clear();
                      if (ec) return self->close(ec.message());
                      self->flush();
                    });
}

}  // namespace fg::gateway
