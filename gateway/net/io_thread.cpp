#include "gateway/net/io_thread.hpp"

#include <algorithm>

#include <boost/asio/post.hpp>

#include "common/logging.hpp"

namespace fg::gateway {

namespace asio = boost::asio;

io_thread::io_thread(gateway_shared& shared, unsigned index)
    : shared_(shared),
      index_(index),
      tick_(io_.get_executor()),
      epoch_(shared.epoch),
      compressor_(shared.config.deflate(), counters_),
      jwt_keys_(shared.config.jwt_keys) {
  // Tick often enough to honour the shortest configured timeout to within
  // a quarter of it, but no more than 100 times a second.
  const auto& c = shared.config;
  const auto shortest = std::min({c.handshake_timeout, c.close_timeout, c.idle_ping, c.pong_timeout});
  tick_interval_ = std::clamp(shortest / 4, std::chrono::milliseconds(10), std::chrono::milliseconds(1000));
  cork_.reserve(64 * 1024);
  sink_ = shared.make_sink(*this);
}

io_thread::~io_thread() {
  join();
  // After a forced stop some connections may remain: end them while every
  // member is still alive, so their destructors find the thread intact.
  shutting_down_ = true;
  boost::system::error_code ignored;
  if (acceptor_) acceptor_->close(ignored);
  tick_.cancel();
  for (session* s = head_; s != nullptr; s = s->next_) s->terminate();
  poller_.stop();
  io_.restart();
  io_.run();
}

void io_thread::start(acceptor_type acceptor) {
  acceptor_ = std::make_unique<acceptor_type>(std::move(acceptor));
  do_accept();
  schedule_tick();
  poller_.start();
  thread_ = std::thread([this] { io_.run(); });
}

void io_thread::join() {
  if (thread_.joinable()) thread_.join();
}

void io_thread::request_shutdown() {
  asio::post(io_, [this] { begin_shutdown(); });
}

void io_thread::keys_reloaded(std::shared_ptr<const auth::key_set> keys, std::function<void()> applied) {
  asio::post(io_, [this, keys = std::move(keys), applied = std::move(applied)]() mutable {
    if (index_ == 0) ++counters_.auth_key_reloads[keys ? 0 : 1];
    if (keys) jwt_keys_ = std::move(keys);
    if (applied) applied();
  });
}

std::uint64_t io_thread::now_ms() const noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - epoch_).count());
}

void io_thread::do_accept() {
  acceptor_->async_accept([this](boost::system::error_code ec, tcp_socket socket) {
    if (ec == asio::error::operation_aborted || shutting_down_) return;
    if (!ec) {
      session_ref(new session(*this, std::move(socket)))->start();
    } else if (ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space) {
      // Out of file descriptors: back off instead of spinning on accept.
      component_logger("gateway")->warn("accept failed: {}", ec.message());
      auto retry = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(100));
      retry->async_wait([this, retry](boost::system::error_code) { do_accept(); });
      return;
    }
    do_accept();
  });
}

void io_thread::schedule_tick() {
  tick_.expires_after(tick_interval_);
  tick_.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    on_tick();
  });
}

void io_thread::on_tick() {
  const std::uint64_t now = now_ms();
  for (session* s = head_; s != nullptr;) {
    session* next = s->next_;  // a session only unlinks itself when destroyed, never during this loop
    s->on_tick(now);
    s = next;
  }
  uncork();
  if (shutting_down_) {
    if (session_count_ == 0) {
      sink_->stop();
      poller_.stop();
      return;  // nothing keeps the loop alive: run() returns
    }
    if (now >= shutdown_deadline_ms_) {
      component_logger("gateway")->warn("thread {}: {} connections did not close in time", index_, session_count_);
      sink_->stop();
      poller_.stop();
      io_.stop();
      return;
    }
  }
  schedule_tick();
}

void io_thread::begin_shutdown() {
  if (shutting_down_) return;
  shutting_down_ = true;
  boost::system::error_code ignored;
  if (acceptor_) acceptor_->close(ignored);
  for (session* s = head_; s != nullptr; s = s->next_) s->go_away();
  uncork();
  const auto grace = shared_.config.close_timeout + std::chrono::milliseconds(500);
  shutdown_deadline_ms_ = now_ms() + static_cast<std::uint64_t>(grace.count());
  // Notice the last connection leaving quickly, whatever the usual tick.
  tick_interval_ = std::min(tick_interval_, std::chrono::milliseconds(20));
  tick_.cancel();
  schedule_tick();
}

byte_buffer& io_thread::cork_for(session& s) {
  if (cork_owner_ != &s) {
    // A broadcast moves the cork from session to session: keep each one's
    // bytes and write them all once at the end of the turn, so k frames for
    // one client in a turn cost one syscall, not k.
    if (cork_owner_ != nullptr && !cork_.empty()) cork_owner_->defer(cork_);
    cork_.clear();
    cork_owner_ = &s;
  }
  return cork_;
}

void io_thread::uncork() {
  if (cork_owner_ != nullptr) {
    session* owner = cork_owner_;
    cork_owner_ = nullptr;
    if (!cork_.empty()) owner->flush(cork_);
    cork_.clear();
  }
  if (deferred_.empty()) return;
  auto sessions = std::move(deferred_);
  deferred_.clear();
  for (const auto& s : sessions) s->flush_deferred();
}

void io_thread::forget_cork(const session& s) noexcept {
  if (cork_owner_ == &s) {
    cork_owner_ = nullptr;
    cork_.clear();
  }
}

thread_snapshot io_thread::snapshot() const {
  thread_snapshot snap;
  snap.counters = counters_;
  for (const session* s = head_; s != nullptr; s = s->next_) snap.send_queue_bytes += s->queued_bytes();
  snap.send_queue_bytes += cork_.size();
  sink_->snapshot(snap);
  return snap;
}

void io_thread::add(session& s) noexcept {
  s.prev_ = nullptr;
  s.next_ = head_;
  if (head_ != nullptr) head_->prev_ = &s;
  head_ = &s;
  ++session_count_;
}

void io_thread::remove(session& s) noexcept {
  if (s.prev_ != nullptr)
    s.prev_->next_ = s.next_;
  else
    head_ = s.next_;
  if (s.next_ != nullptr) s.next_->prev_ = s.prev_;
  s.prev_ = s.next_ = nullptr;
  --session_count_;
}

}  // namespace fg::gateway
