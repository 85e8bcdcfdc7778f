#include "gateway/net/accept_backoff.hpp"

#include <cstring>
#include <utility>

#include "common/logging.hpp"

namespace fg::gateway {

accept_backoff::accept_backoff(event_loop& loop, std::string listener, std::function<void()> retry)
    : loop_(loop), listener_(std::move(listener)), retry_(std::move(retry)) {}

accept_backoff::~accept_backoff() {
  if (timer_) loop_.cancel(*timer_);
}

void accept_backoff::rest(int err) {
  ++rests_;
  if (!std::exchange(failing_, true))
    component_logger("gateway")->warn("accept on {} failed: {}; retrying every {} ms, connections queue meanwhile",
                                      listener_, std::strerror(err), retry_after.count());
  if (timer_) return;
  timer_ = loop_.every(retry_after, [this] {
    loop_.cancel(*std::exchange(timer_, std::nullopt));
    retry_();
  });
}

void accept_backoff::accepted() {
  if (std::exchange(failing_, false))
    component_logger("gateway")->info("accepting on {} again ({} rests so far)", listener_, rests_);
}

}  // namespace fg::gateway
