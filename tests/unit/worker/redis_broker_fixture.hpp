// The Redis broker tests' fixture: a real redis-server on a free port
// (stopped by PID) and brokers on one io_context driven by the test.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "common/logging.hpp"
#include "tests/unit/worker/redis_server.hpp"
#include "tests/unit/worker/run_loop.hpp"
#include "worker/broker/redis_broker.hpp"
#include "worker/broker/redis_url.hpp"

namespace fg::test {

using namespace fg::worker;
using namespace std::chrono_literals;

// Fast reconnects keep the tests short; the rules are the same.
inline redis_broker_options fast_reconnects() {
  redis_broker_options o;
  o.connection.backoff_min = 20ms;
  o.connection.backoff_max = 200ms;
  return o;
}

struct worker_under_test {
  std::vector<std::string> got;        // "room payload"
  std::vector<std::uint64_t> offsets;  // of each delivery (0: not numbered)
  std::vector<std::string> segments;   // of each delivery: its publisher's compression ("": none)
  std::vector<std::size_t> covers;
  std::unique_ptr<redis_broker> broker;
};

class RedisBrokerFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fg::test::redis_server::installed()) GTEST_SKIP() << "redis-server is not installed";
    ASSERT_TRUE(server_.start());
  }
  void TearDown() override {
    for (auto& w : workers_) w->broker->stop();
  }

  worker_under_test& add_worker(std::size_t buffer = 10000,
                                const std::function<void(redis_broker_options&)>& tweak = {}) {
    auto w = std::make_unique<worker_under_test>();
    redis_broker_options o = fast_reconnects();
    o.buffer = buffer;
    o.history_size = history_size_;
    if (tweak) tweak(o);
    auto* raw = w.get();
    w->broker = std::make_unique<redis_broker>(
        io_, parse_redis_url(server_.url()), o,
        [raw](std::string_view room, std::string_view payload, room_position at, deflated_segment pre) {
          raw->got.push_back(std::string(room) + " " + std::string(payload));
          raw->offsets.push_back(at.offset);
          raw->segments.emplace_back(pre.bytes);
          raw->covers.push_back(pre.covers);
        },
        fg::component_logger("redis-test"));
    w->broker->start();
    workers_.push_back(std::move(w));
    return *workers_.back();
  }

  // Runs the loop until `done` or the deadline; false on timeout.
  bool run_until(const std::function<bool()>& done, std::chrono::milliseconds limit = 5000ms) {
    return fg::test::run_until(io_, done, limit);
  }
  void run_for(std::chrono::milliseconds d) {
    run_until([] { return false; }, d);
  }

  // Subscribes `a` and `b` to `room` and runs until Redis confirmed both
  // and `a` can publish; false on timeout.
  bool subscribe_both(worker_under_test& a, worker_under_test& b, const std::string& room) {
    a.broker->subscribe(room);
    b.broker->subscribe(room);
    return run_until([&] { return a.broker->flowing() && a.broker->confirmed(room) && b.broker->confirmed(room); });
  }

  std::string numsub(const std::string& channel) {
    const std::string r = server_.command({"PUBSUB", "NUMSUB", channel});
    return r.substr(r.rfind(' ') + 1);
  }

  std::size_t history_size_ = redis_broker_options{}.history_size;
  redis_server server_;
  boost::asio::io_context io_;
  std::vector<std::unique_ptr<worker_under_test>> workers_;
};

}  // namespace fg::test
