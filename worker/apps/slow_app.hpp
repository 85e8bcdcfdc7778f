// /slow (test app, mounted only with --enable-test-apps): blocks the
// worker's loop for a fixed time per message, then echoes it. Tests use it
// to saturate a worker and watch the gateway's credits and backpressure;
// it is exactly what a real app must never do.
#pragma once

#include <chrono>
#include <thread>

#include "worker/app.hpp"

namespace fg::worker {

class slow_app final : public app {
 public:
  explicit slow_app(std::chrono::milliseconds delay) : delay_(delay) {}

  void on_message(connection& c, message m) override {
    std::this_thread::sleep_for(delay_);
    api().send(c.id(), m.kind, m.payload);
  }

 private:
  std::chrono::milliseconds delay_;
};

}  // namespace fg::worker
