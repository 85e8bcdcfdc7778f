#include "gateway/net/socket_poller.hpp"

#include <sys/epoll.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <system_error>

namespace fg::gateway {

namespace {
int make_epoll_set() {
  const int fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "epoll_create1");
  return fd;
}
}  // namespace

socket_poller::socket_poller() : set_(make_epoll_set()) {}

socket_poller::~socket_poller() { ::close(set_); }

bool socket_poller::add(int fd, poll_target& target) noexcept {
  if (fd < 0) return false;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
  ev.data.fd = fd;
  if (::epoll_ctl(set_, EPOLL_CTL_ADD, fd, &ev) != 0) return false;
  const auto slot = static_cast<std::size_t>(fd);
  if (slot >= targets_.size()) targets_.resize(slot + 1, nullptr);
  targets_[slot] = &target;
  ++watched_;
  return true;
}

void socket_poller::remove(int fd) noexcept {
  const auto slot = static_cast<std::size_t>(fd);
  if (fd < 0 || slot >= targets_.size() || targets_[slot] == nullptr) return;
  targets_[slot] = nullptr;
  --watched_;
  epoll_event ev{};  // ignored, but kernels before 2.6.9 wanted one
  ::epoll_ctl(set_, EPOLL_CTL_DEL, fd, &ev);
}

void socket_poller::redeliver(int fd, std::uint32_t events) {
  const auto slot = static_cast<std::size_t>(fd);
  if (fd < 0 || slot >= targets_.size() || targets_[slot] == nullptr) return;
  redeliveries_.push_back({fd, targets_[slot], events});
}

std::size_t socket_poller::wait(int timeout_ms) {
  // One batch per wait: with more ready than this, the set stays readable
  // and the next wait takes the rest, after the loop's other work.
  std::array<epoll_event, 256> ready;
  const int n = ::epoll_wait(set_, ready.data(), static_cast<int>(ready.size()), has_redeliveries() ? 0 : timeout_ms);
  // Taken before delivering: what the targets redeliver now is for the next wait.
  delivering_.swap(redeliveries_);
  std::size_t delivered = 0;
  for (int i = 0; i < n; ++i) {
    const auto slot = static_cast<std::size_t>(ready[static_cast<std::size_t>(i)].data.fd);
    // A target may remove others (or itself) while handling its edge.
    if (slot < targets_.size() && targets_[slot] != nullptr) {
      targets_[slot]->on_poll(ready[static_cast<std::size_t>(i)].events);
      ++delivered;
    }
  }
  for (const redelivery& r : delivering_) {
    const auto slot = static_cast<std::size_t>(r.fd);
    // Removed since, or its descriptor now someone else's: the edge is stale.
    if (slot < targets_.size() && targets_[slot] == r.target) {
      r.target->on_poll(r.events);
      ++delivered;
    }
  }
  delivering_.clear();
  return delivered;
}

}  // namespace fg::gateway
