#include "gateway/net/event_loop.hpp"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

#include <boost/asio/post.hpp>

namespace fg::gateway {

namespace {
int make_doorbell() {
  const int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
  return fd;
}

int duplicate(int fd) {
  const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) throw std::system_error(errno, std::generic_category(), "dup of the epoll set");
  return copy;
}
}  // namespace

event_loop::event_loop(boost::asio::io_context& io)
    : io_(io), doorbell_(make_doorbell()), nested_(io.get_executor(), duplicate(poller_.native_handle())) {
  if (!poller_.add(doorbell_, *this)) {
    const int err = errno;
    ::close(doorbell_);
    throw std::system_error(err, std::generic_category(), "epoll_ctl of the loop's doorbell");
  }
}

event_loop::~event_loop() {
  poller_.remove(doorbell_);
  ::close(doorbell_);
}

void event_loop::post(std::function<void()> fn) {
  boost::asio::post(io_, std::move(fn));
  const std::uint64_t one = 1;
  // Cannot fail short of a counter at 2^64-2: the loop reads it to zero.
  [[maybe_unused]] const auto n = ::write(doorbell_, &one, sizeof one);
}

void event_loop::on_poll(std::uint32_t events) {
  if ((events & EPOLLIN) == 0) return;
  std::uint64_t rung = 0;
  [[maybe_unused]] const auto n = ::read(doorbell_, &rung, sizeof rung);  // back to zero: the next ring is an edge
}

event_loop::timer_id event_loop::every(std::chrono::milliseconds interval, std::function<void()> fn) {
  timer t{clock::now() + interval, interval, std::move(fn), true};
  for (timer_id id = 0; id < timers_.size(); ++id) {
    if (!timers_[id].live) {
      timers_[id] = std::move(t);
      return id;
    }
  }
  timers_.push_back(std::move(t));
  return timers_.size() - 1;
}

void event_loop::reschedule(timer_id id, std::chrono::milliseconds interval) {
  if (id >= timers_.size() || !timers_[id].live) return;
  timers_[id].interval = interval;
  timers_[id].due = clock::now() + interval;
}

void event_loop::cancel(timer_id id) noexcept {
  if (id >= timers_.size()) return;
  timers_[id].live = false;
  timers_[id].fn = nullptr;
}

void event_loop::at_turn_end(std::shared_ptr<turn_end_task> task, turn_end_order order) {
  (order == turn_end_order::first ? turn_end_first_ : turn_end_).push_back(std::move(task));
}

void event_loop::at_next_turn_end(std::shared_ptr<turn_end_task> task) { next_turn_end_.push_back(std::move(task)); }

void event_loop::release_at_turn_end(std::shared_ptr<void> owner) { released_.push_back(std::move(owner)); }

void event_loop::run() {
  stopping_ = false;
  while (!stopping_) run_one_turn();
  // Left pending, our wait would keep io_context::run() from ever returning.
  if (nested_wait_pending_) {
    boost::system::error_code ignored;
    nested_.cancel(ignored);
  }
}

void event_loop::run_one_turn(int max_wait_ms) {
  run_asio();
  fire_due_timers();
  end_turn();
  if (stopping_) return;
  int timeout = next_wait_ms();
  if (max_wait_ms >= 0 && (timeout < 0 || timeout > max_wait_ms)) timeout = max_wait_ms;
  if (asio_idle_ || timeout == 0)
    poller_.wait(timeout);
  else
    wait_in_asio(timeout);
  for (auto& task : next_turn_end_) turn_end_.push_back(std::move(task));
  next_turn_end_.clear();
  end_turn();
}

void event_loop::run_asio() {
  // Our own wait in Asio would keep it busy forever: withdraw it first, so
  // that poll() tells whether anything else is outstanding.
  if (nested_wait_pending_) {
    boost::system::error_code ignored;
    nested_.cancel(ignored);
  }
  if (io_.stopped()) io_.restart();
  // With nothing outstanding this returns at once, without a system call.
  io_.poll();
  asio_idle_ = io_.stopped();
}

void event_loop::wait_in_asio(int timeout_ms) {
  if (!nested_wait_pending_) {
    nested_wait_pending_ = true;
    nested_.async_wait(decltype(nested_)::wait_read, [this](boost::system::error_code ec) {
      nested_wait_pending_ = false;
      if (!ec) poller_.wait(0);
    });
  }
  if (timeout_ms < 0)
    io_.run_one();
  else
    io_.run_one_for(std::chrono::milliseconds(timeout_ms));
}

void event_loop::fire_due_timers() {
  const auto now = clock::now();
  // By index: a timer may add or cancel timers.
  for (timer_id id = 0; id < timers_.size(); ++id) {
    if (!timers_[id].live || timers_[id].due > now) continue;
    timers_[id].due = now + timers_[id].interval;
    auto fn = timers_[id].fn;  // a copy: the timer may cancel itself
    fn();
  }
}

int event_loop::next_wait_ms() const {
  return poller_.has_redeliveries() || !next_turn_end_.empty() ? 0 : ms_to_next_timer();
}

int event_loop::ms_to_next_timer() const {
  bool any = false;
  clock::time_point next{};
  for (const timer& t : timers_) {
    if (!t.live) continue;
    if (!any || t.due < next) next = t.due;
    any = true;
  }
  if (!any) return -1;
  const auto left = next - clock::now();
  if (left <= clock::duration::zero()) return 0;
  // Rounded up: a wait that ends early would find the timer not yet due.
  return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count());
}

void event_loop::end_turn() {
  // A task may add tasks of either order: each pass takes the first ones
  // while there are any.
  while (!turn_end_first_.empty() || !turn_end_.empty()) {
    ending_.swap(turn_end_first_.empty() ? turn_end_ : turn_end_first_);
    for (const auto& task : ending_) task->on_turn_end();
    ending_.clear();
  }
  if (released_.empty()) return;
  // Swapped out first: an owner's destructor may release another.
  std::vector<std::shared_ptr<void>> done;
  done.swap(released_);
}

}  // namespace fg::gateway
