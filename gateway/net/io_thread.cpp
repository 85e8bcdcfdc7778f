#include "gateway/net/io_thread.hpp"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <span>
#include <utility>

#include "common/buffer_pool.hpp"
#include "common/logging.hpp"
#include "common/memory_release.hpp"
#include "gateway/ws/inflater.hpp"

namespace fg::gateway {

namespace asio = boost::asio;

io_thread::io_thread(gateway_shared& shared, unsigned index)
    : shared_(shared),
      index_(index),
      epoch_(shared.epoch),
      batch_(shared.config.io_uring != io_uring_mode::off),
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
  close_acceptor();
  if (tick_) loop_.cancel(*tick_);
  for (session* s = head_; s != nullptr; s = s->next_) s->terminate();
  io_.restart();
  io_.run();
}

void io_thread::start(acceptor_type acceptor) {
  acceptor_ = std::make_unique<acceptor_type>(std::move(acceptor));
  boost::system::error_code ec;
  listen_protocol_ = acceptor_->local_endpoint(ec).protocol();
  if (!ec) acceptor_->non_blocking(true, ec);
  if (ec || !loop_.poller().add(acceptor_->native_handle(), listener_))
    throw std::system_error(ec ? ec.value() : errno, std::generic_category(), "cannot watch the listening socket");
  tick_ = loop_.every(tick_interval_, [this] { on_tick(); });
  next_pool_shed_ms_ = pool_shed_period_ms();
  thread_ = std::thread([this] { loop_.run(); });
}

void io_thread::join() {
  if (thread_.joinable()) thread_.join();
}

void io_thread::request_shutdown() {
  loop_.post([this] { begin_shutdown(); });
}

void io_thread::keys_reloaded(std::shared_ptr<const auth::key_set> keys, std::function<void()> applied) {
  loop_.post([this, keys = std::move(keys), applied = std::move(applied)]() mutable {
    if (index_ == 0) ++counters_.auth_key_reloads[keys ? 0 : 1];
    if (keys) jwt_keys_ = std::move(keys);
    if (applied) applied();
  });
}

std::uint64_t io_thread::now_ms() const noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - epoch_).count());
}

void io_thread::listener::on_poll(std::uint32_t events) {
  if (events & (EPOLLIN | EPOLLERR)) thread.accept_ready();
}

void io_thread::accept_ready() {
  if (shutting_down_ || accept_backoff_.resting() || !acceptor_) return;
  const int listening = acceptor_->native_handle();
  for (int i = 0; i < kAcceptsPerTurn; ++i) {
    const int fd = ::accept4(listening, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      if (err == EAGAIN || err == EWOULDBLOCK) return;                     // drained: the next connect is a new edge
      if (err == EINTR || err == ECONNABORTED || err == EPROTO) continue;  // that one is gone; the next
      // Out of descriptors or memory (or worse): rest, then try again.
      ++counters().accept_backoffs;
      accept_backoff_.rest(err);
      return;
    }
    accept_backoff_.accepted();
    tcp_socket socket(io_);
    boost::system::error_code ec;
    socket.assign(listen_protocol_, fd, ec);
    if (ec) {
      ::close(fd);
      continue;
    }
    session_ref(new session(*this, std::move(socket)))->start();
  }
  loop_.poller().redeliver(listening, EPOLLIN);  // budget spent: the rest on the next turn
}

void io_thread::close_acceptor() noexcept {
  if (!acceptor_ || !acceptor_->is_open()) return;
  loop_.poller().remove(acceptor_->native_handle());
  boost::system::error_code ignored;
  acceptor_->close(ignored);
}

void io_thread::on_tick() {
  const std::uint64_t now = now_ms();
  for (session* s = head_; s != nullptr;) {
    session* next = s->next_;  // a session only unlinks itself when destroyed, never during this loop
    s->on_tick(now);
    s = next;
  }
  flush_everything();
  if (next_pool_shed_ms_ != 0 && now >= next_pool_shed_ms_) {
    next_pool_shed_ms_ = now + pool_shed_period_ms();
    shed_pools();
  }
  if (shutting_down_) {
    if (session_count_ == 0) {
      sink_->stop();
      loop_.stop();
      return;
    }
    if (now >= shutdown_deadline_ms_) {
      component_logger("gateway")->warn("thread {}: {} connections did not close in time", index_, session_count_);
      sink_->stop();
      loop_.stop();
      return;
    }
  }
}

std::uint64_t io_thread::pool_shed_period_ms() const noexcept {
  return static_cast<std::uint64_t>(shared_.config.pool_shed_period.count());
}

void io_thread::shed_pools() {
  std::size_t bytes = buffer_pool::this_thread().shed_unused();
  bytes += ws::inflater_pool::this_thread().shed_unused() * ws::inflater::memory_bound(15);
  counters_.pool_bytes_shed += bytes;
  // Connections gone for good since the period's peak freed their sessions
  // (and the sink's tables may hand back buckets sized for the peak): after
  // a wave of clients leaves, their heap pages go back with the pools'. A
  // steady churn keeps its peak near its count and adds nothing.
  const std::size_t sessions_gone = session_peak_since_shed_ - session_count_;
  session_peak_since_shed_ = session_count_;
  const std::size_t tables = sink_->shed_unused();
  if (release_shed_memory(bytes + tables + sessions_gone * sizeof(session))) ++counters_.memory_trims;
}

void io_thread::begin_shutdown() {
  if (shutting_down_) return;
  shutting_down_ = true;
  close_acceptor();
  for (session* s = head_; s != nullptr; s = s->next_) s->go_away();
  flush_everything();
  const auto grace = shared_.config.close_timeout + std::chrono::milliseconds(500);
  shutdown_deadline_ms_ = now_ms() + static_cast<std::uint64_t>(grace.count());
  // Notice the last connection leaving quickly, whatever the usual tick.
  tick_interval_ = std::min(tick_interval_, std::chrono::milliseconds(20));
  if (tick_) loop_.reschedule(*tick_, tick_interval_);
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
  if (cork_owner_ == nullptr) return;
  session* owner = cork_owner_;
  cork_owner_ = nullptr;
  if (!cork_.empty()) owner->flush(cork_);
  cork_.clear();
}

void io_thread::write_deferred(std::span<session_ref> group) {
  batch_.clear();
  std::array<std::size_t, send_batch::kCapacity> slot{};
  constexpr std::size_t none = send_batch::kCapacity;
  for (std::size_t i = 0; i < group.size(); ++i) {
    const auto bytes = group[i]->deferred_write();
    slot[i] = bytes.empty() ? none : batch_.add(group[i]->write_fd(), bytes);
  }
  if (batch_.size() != 0) {
    const bool had_ring = batch_.uses_ring();
    counters_.socket_write_calls += batch_.submit();
    if (had_ring && !batch_.uses_ring()) {
      component_logger("gateway")->warn("thread {}: {}; its client writes are one send() each from now on", index_,
                                        batch_.ring_problem());
    }
  }
  for (std::size_t i = 0; i < group.size(); ++i) {
    if (slot[i] == none) {
      group[i]->flush_deferred();
    } else {
      group[i]->flush_deferred(batch_.result(slot[i]));
    }
  }
}

void io_thread::flush_everything() {
  uncork();
  deferred_.write_all([this](std::span<session_ref> group) { write_deferred(group); });
}

void io_thread::after_read() {
  if (!batch_.uses_ring() || deferred_.size() >= send_batch::kCapacity) return uncork();
  uncork_at_turn_end();
  if (deferred_.size() + 1 < send_batch::kCapacity) return;  // the cork's owner would make a batch
  uncork_into_wave();
  deferred_.write_group([this](std::span<session_ref> group) { write_deferred(group); });
}

void io_thread::uncork_into_wave() {
  // Only with a ring (without one a batch is a send each anyway), and only
  // into a wave that fits one batch: at the back of a long one, the
  // owner's bytes would wait for the slices before it.
  if (cork_owner_ == nullptr || cork_.empty() || !batch_.uses_ring() || deferred_.empty() ||
      deferred_.size() >= send_batch::kCapacity)
    return uncork();
  session* owner = cork_owner_;
  cork_owner_ = nullptr;
  owner->defer(cork_);  // a reply or two: copied into its backlog, which joins the wave
  cork_.clear();
}

void io_thread::uncork_at_turn_end() {
  if (std::exchange(turn_end_uncork_.scheduled, true)) return;
  // Not owned: the thread outlives its loop's turns (the aliasing constructor with no owner).
  loop_.at_turn_end(std::shared_ptr<turn_end_task>(std::shared_ptr<void>(), &turn_end_uncork_));
}

void io_thread::turn_end_uncork::on_turn_end() {
  thread.uncork_into_wave();
  if (!thread.deferred_.write_for(kWriteSlice,
                                  [this](std::span<session_ref> group) { thread.write_deferred(group); })) {
    scheduled = false;
    return;
  }
  thread.loop_.at_next_turn_end(std::shared_ptr<turn_end_task>(std::shared_ptr<void>(), this));
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
  snap.counters.write_slices = deferred_.slices();
  snap.counters.write_slices_cut = deferred_.slices_cut();
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
  session_peak_since_shed_ = std::max(session_peak_since_shed_, ++session_count_);
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
