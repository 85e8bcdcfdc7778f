#include "worker/runtime/gateway_link.hpp"

#include <random>
#include <string>

#include <unistd.h>
#include <utility>

#include <boost/asio/error.hpp>
#include <boost/asio/write.hpp>

#include "common/link/link_dir_trust.hpp"
#include "common/link/send_encoder.hpp"
#include "common/link/write_now.hpp"
#include "worker/runtime/send_bytes.hpp"

namespace fg::worker {

namespace asio = boost::asio;
namespace pb = framegate::link;

namespace {

std::uint64_t backoff_seed(std::uint32_t index) {
  std::random_device rd;
  return (std::uint64_t{rd()} << 32) ^ rd() ^ index;
}

}  // namespace

gateway_link::gateway_link(asio::io_context& io, std::uint32_t index, std::string path, const link_options& options,
                           pb::Register hello, link_events& events, std::shared_ptr<spdlog::logger> log)
    : io_(io),
      index_(index),
      path_(std::move(path)),
      options_(options),
      hello_(std::move(hello)),
      events_(events),
      log_(std::move(log)),
      socket_(io),
      timer_(io),
      backoff_(options.backoff_min, options.backoff_max, backoff_seed(index)),
      sndbuf_(options.sndbuf, log_),
      decoder_(options.max_envelope),
      rd_buf_(std::make_unique<std::array<std::uint8_t, read_buffer_bytes>>()) {
  hello_.set_link_index(index_);
}

void gateway_link::start() {
  if (state_ != state::idle) return;
  do_connect();
}

void gateway_link::stop() {
  if (state_ == state::stopped) return;
  state_ = state::stopped;
  reset_io();
}

void gateway_link::reset_io() {
  ++generation_;
  boost::system::error_code ignored;
  socket_.close(ignored);
  timer_.cancel();
  // The aborted operations of the old socket complete later but touch no
  // buffer once the socket is closed; their generation no longer matches.
  wr_batch_.clear();
  rd_paused_ = false;
  decoder_ = fg::link::decoder(options_.max_envelope);
  fail_reason_.clear();
}

void gateway_link::do_connect() {
  events_.on_link_connecting(*this);
  if (state_ == state::stopped) return;
  state_ = state::connecting;
  ++generation_;
  socket_ = socket_type(io_);
  socket_.async_connect(asio::local::stream_protocol::endpoint(path_),
                        [this, gen = generation_](const boost::system::error_code& ec) {
                          if (gen == generation_) on_connect(ec);
                        });
}

void gateway_link::on_connect(const boost::system::error_code& ec) {
  if (ec) {
    fail("connect: " + ec.message());
    return;
  }
  // Only a gateway of our own user gets our Register (and our clients).
  if (const auto uid = fg::link::peer_uid(socket_.native_handle()); !uid || *uid != ::geteuid()) {
    fail("the socket's owner is uid " + (uid ? std::to_string(*uid) : std::string("?")) + ", not this worker's uid " +
         std::to_string(::geteuid()));
    return;
  }
  sndbuf_.apply(socket_.native_handle());
  state_ = state::registering;
  // The first envelope on every link; queue() accepts nothing before Welcome.
  pb::Envelope env;
  *env.mutable_register_() = hello_;
  fg::link::encode(env, wr_batch_.next_envelope());
  flush();
  timer_.expires_after(options_.welcome_timeout);
  timer_.async_wait([this, gen = generation_](const boost::system::error_code& wait_ec) {
    if (!wait_ec && gen == generation_ && state_ == state::registering) on_welcome_timeout();
  });
  do_read();
}

void gateway_link::on_welcome_timeout() {
  fail("no Welcome within " + std::to_string(options_.welcome_timeout.count()) + " ms of Register");
}

void gateway_link::do_read() {
  socket_.async_read_some(asio::buffer(*rd_buf_),
                          [this, gen = generation_](const boost::system::error_code& ec, std::size_t n) {
                            if (gen == generation_) on_read(ec, n);
                          });
}

void gateway_link::on_read(const boost::system::error_code& ec, std::size_t n) {
  // Not a guard object: what the end writes may throw (bad_alloc), which
  // must reach the worker's handler, not std::terminate from a destructor.
  events_.on_link_read_begin(*this);
  handle_read(ec, n);
  events_.on_link_read_end(*this);
}

void gateway_link::handle_read(const boost::system::error_code& ec, std::size_t n) {
  if (ec) {
    fail(ec == asio::error::eof ? std::string("the gateway closed the link") : "read: " + ec.message());
    return;
  }
  stats_.bytes_read += n;
  // Never fail() inside feed(): that would replace the decoder while it
  // runs. A protocol error stops handling and fails after feed returns.
  const auto take_message = [this](std::span<const std::uint8_t> bytes) {
    // Before Welcome every envelope goes the checked way (on_envelope).
    if (state_ != state::ready) return false;
    const auto m = fg::link::message_view::parse(bytes);
    if (!m) return false;
    if (fail_reason_.empty()) events_.on_link_message(*this, *m);
    return true;
  };
  const auto err =
      decoder_.feed(std::span<const std::uint8_t>(rd_buf_->data(), n), take_message, [this](const pb::Envelope& e) {
        if (fail_reason_.empty()) on_envelope(e);
      });
  if (err != fg::link::decode_error::none) {
    fail("decode error: " + std::string(fg::link::to_string(err)));
    return;
  }
  if (!fail_reason_.empty()) {
    fail(std::string(fail_reason_));
    return;
  }
  if (state_ == state::ready) events_.on_link_batch_end(*this);
  if (output_bytes() > options_.output_high_water) {
    // The gateway is not taking our output: stop taking its input until
    // it has (on_write resumes), rather than grow without bound.
    rd_paused_ = true;
    log_->debug("link {}: {} bytes of output pending; pausing reads", index_, output_bytes());
    return;
  }
  do_read();
}

bool gateway_link::on_envelope(const pb::Envelope& e) {
  if (state_ == state::ready) {
    events_.on_link_envelope(*this, e);
    return true;
  }
  if (e.body_case() != pb::Envelope::kWelcome) {
    fail_reason_ = "expected Welcome, got envelope body " + std::to_string(static_cast<int>(e.body_case()));
    return false;
  }
  const pb::Welcome& w = e.welcome();
  timer_.cancel();
  state_ = state::ready;
  backoff_.reset();
  logged_waiting_ = false;
  ++stats_.connects;
  if (w.link_index() != index_)
    log_->warn("link {}: the gateway's Welcome names link {}; keeping {} (the socket's name)", index_, w.link_index(),
               index_);
  events_.on_link_ready(*this, w);
  return true;
}

bool gateway_link::accepting() noexcept {
  if (state_ == state::ready) return true;
  ++stats_.envelopes_dropped;
  return false;
}

void gateway_link::queue(const pb::Envelope& e) {
  if (accepting()) fg::link::encode(e, wr_batch_.next_envelope());
}

void gateway_link::queue_send(std::span<const std::uint64_t> to, bool binary, std::string_view payload,
                              deflated_segment pre) {
  if (accepting())
    fg::link::encode_send(wr_batch_.next_envelope(), to, binary, byte_span(payload), send_compression_of(pre));
}

void gateway_link::flush() {
  if (state_ != state::registering && state_ != state::ready) return;
  const auto bytes = wr_batch_.begin_write();
  if (bytes.empty()) return;
  ++stats_.writes;
  const std::size_t done = fg::link::write_now(socket_.native_handle(), bytes);
  if (done == bytes.size()) {
    on_written(done);
    return;
  }
  ++stats_.write_waits;
  asio::async_write(socket_, asio::buffer(bytes.data() + done, bytes.size() - done),
                    [this, gen = generation_, done](const boost::system::error_code& ec, std::size_t n) {
                      if (gen == generation_) on_write(ec, done + n);
                    });
}

void gateway_link::on_write(const boost::system::error_code& ec, std::size_t n) {
  if (ec) {
    wr_batch_.complete_write();
    fail("write: " + ec.message());
    return;
  }
  on_written(n);
}

void gateway_link::on_written(std::size_t n) {
  wr_batch_.complete_write();
  stats_.bytes_written += n;
  flush();
  if (rd_paused_ && output_bytes() <= options_.output_high_water / 2) {
    rd_paused_ = false;
    do_read();
  }
}

void gateway_link::fail(std::string_view reason) {
  if (state_ == state::stopped) return;
  const bool was_ready = state_ == state::ready;
  const std::string why(reason);  // `reason` may point into fail_reason_, cleared below
  reset_io();
  ++stats_.failures;
  state_ = state::waiting;
  const auto delay = backoff_.next();
  if (was_ready) {
    log_->info("link {} ({}) lost: {}; reconnecting", index_, path_, why);
    events_.on_link_down(*this, why);
  } else if (!logged_waiting_) {
    logged_waiting_ = true;
    log_->info("link {}: cannot register at {}: {}; retrying with backoff (up to {} ms)", index_, path_, why,
               options_.backoff_max.count());
  } else {
    log_->debug("link {}: attempt failed: {}; next in {} ms", index_, why, delay.count());
  }
  timer_.expires_after(delay);
  timer_.async_wait([this, gen = generation_](const boost::system::error_code& ec) {
    if (!ec && gen == generation_ && state_ == state::waiting) do_connect();
  });
}

}  // namespace fg::worker
