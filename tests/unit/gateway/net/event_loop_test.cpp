// The I/O thread's own loop: a post() from another thread wakes it while it
// waits in its own epoll set, Asio's work and the set's edges both go on
// while Asio has work outstanding, its timers run every interval
// until cancelled, turn-end work runs once after the batch, redelivered
// edges do not let the loop block, and run() leaves nothing of its own
// pending in Asio.
#include "gateway/net/event_loop.hpp"
#include "tests/unit/gateway/net/poll_fixtures.hpp"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace fg::gateway {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

using poll_fixtures::recorder;
using poll_fixtures::socket_pair;

struct task_fn final : turn_end_task {
  explicit task_fn(std::function<void()> f) : fn(std::move(f)) {}
  void on_turn_end() override { fn(); }
  std::function<void()> fn;
};

// A loop run on the test thread. Every test stops it itself; the safety net
// stops it should the test's own stop never come, and fails the test.
class EventLoop : public ::testing::Test {
 protected:
  void SetUp() override {
    loop.every(2s, [this] {
      safety_net_fired = true;
      loop.stop();
    });
  }
  void TearDown() override { EXPECT_FALSE(safety_net_fired) << "the loop did not stop by itself within 2 s"; }

  // Counts EPOLLIN deliveries of one byte sent once, redelivering each until
  // three came; with `asio_busy`, while Asio has a timer outstanding.
  std::size_t deliveries_of_one_byte(bool asio_busy) {
    socket_pair p;
    recorder r;
    EXPECT_TRUE(loop.poller().add(p.ours, r));
    r.on_edge = [&](std::uint32_t e) {
      if ((e & EPOLLIN) == 0) return;
      if (r.readable() < 3)
        loop.poller().redeliver(p.ours, EPOLLIN);
      else
        loop.stop();
    };
    asio::steady_timer busy(io, 1h);
    if (asio_busy) busy.async_wait([](boost::system::error_code) {});
    p.send("a");
    loop.run();
    loop.poller().remove(p.ours);
    for (std::size_t i = 1; i < r.events.size(); ++i) EXPECT_EQ(r.events[i], std::uint32_t{EPOLLIN}) << i;
    return r.readable();
  }

  asio::io_context io{1};
  event_loop loop{io};
  bool safety_net_fired = false;
};

TEST_F(EventLoop, PostFromAnotherThreadWakesALoopWaitingInItsSet) {
  // Nothing is outstanding in Asio, so the loop blocks in its own set, where
  // Asio's wake-up would go unheard: only post()'s doorbell can end the wait
  // before the safety net does.
  bool ran = false;
  std::thread::id ran_on;
  std::thread poster([&] {
    std::this_thread::sleep_for(50ms);  // so that the loop is waiting by then
    loop.post([&] {
      ran = true;
      ran_on = std::this_thread::get_id();
      loop.stop();
    });
  });
  loop.run();
  poster.join();
  EXPECT_TRUE(ran);
  EXPECT_EQ(ran_on, std::this_thread::get_id()) << "the posted function runs on the loop's thread";
}

TEST_F(EventLoop, AsioWorkStillCompletes) {
  boost::system::error_code result = asio::error::would_block;
  asio::steady_timer timer(io, 20ms);
  timer.async_wait([&](boost::system::error_code ec) {
    result = ec;
    loop.stop();
  });
  loop.run();
  EXPECT_FALSE(result) << result.message();
}

TEST_F(EventLoop, SocketEdgesArriveWhileAsioHasWorkOutstanding) {
  // The pending timer keeps the loop waiting in Asio, where the set is only
  // one descriptor of Asio's reactor.
  bool asio_timer_fired = false;
  asio::steady_timer asio_work(io, 1h);
  asio_work.async_wait([&](boost::system::error_code ec) { asio_timer_fired = !ec; });
  socket_pair p;
  recorder r;
  ASSERT_TRUE(loop.poller().add(p.ours, r));
  r.on_edge = [&](std::uint32_t e) {
    if (e & EPOLLIN) loop.stop();
  };
  std::thread sender([&] {
    std::this_thread::sleep_for(50ms);  // so that the loop is waiting by then
    p.send("a");
  });
  loop.run();
  sender.join();
  loop.poller().remove(p.ours);
  EXPECT_EQ(r.readable(), 1u);
  EXPECT_FALSE(asio_timer_fired);
}

TEST_F(EventLoop, TimersRunEveryIntervalUntilCancelled) {
  int runs = 0;
  event_loop::timer_id counter = 0;
  counter = loop.every(10ms, [&] {
    if (++runs < 5) return;
    loop.cancel(counter);
    // Ten more intervals: a timer that outlived its cancel would show.
    loop.every(100ms, [&] { loop.stop(); });
  });
  loop.run();
  EXPECT_EQ(runs, 5);
}

TEST_F(EventLoop, RescheduleTakesTheNewInterval) {
  int fast_runs = 0;
  event_loop::timer_id fast = 0;
  fast = loop.every(10ms, [&] {
    ++fast_runs;
    loop.reschedule(fast, 1h);
  });
  int late_runs = 0;
  const auto late = loop.every(1h, [&] { ++late_runs; });
  loop.reschedule(late, 30ms);
  // Due after both, so once it runs both had their turn (timers due
  // together run in the order they were made).
  loop.every(200ms, [&] { loop.stop(); });
  loop.run();
  EXPECT_EQ(fast_runs, 1) << "rescheduled to an hour, it does not run again";
  EXPECT_GE(late_runs, 1) << "rescheduled to 30 ms, it does not wait an hour";
}

TEST_F(EventLoop, TurnEndTasksRunOnceAfterTheBatch) {
  std::vector<std::string> order;
  auto added_at_turn_end = std::make_shared<task_fn>([&] { order.push_back("added at turn end"); });
  auto task = std::make_shared<task_fn>([&] {
    order.push_back("turn end");
    loop.at_turn_end(added_at_turn_end);
    loop.stop();  // the turn still ends: what its end adds runs before run() returns
  });
  socket_pair p;
  recorder r;
  ASSERT_TRUE(loop.poller().add(p.ours, r));
  r.on_edge = [&](std::uint32_t e) {
    if ((e & EPOLLIN) == 0) return;
    order.push_back("edge");
    loop.at_turn_end(task);
    order.push_back("edge handled");
  };
  p.send("a");
  loop.run();
  order.push_back("run returned");
  // One more turn: a task the loop still held would run again in it.
  loop.every(20ms, [&] {
    order.push_back("next turn");
    loop.stop();
  });
  loop.run();
  loop.poller().remove(p.ours);
  EXPECT_EQ(order, (std::vector<std::string>{"edge", "edge handled", "turn end", "added at turn end", "run returned",
                                             "next turn"}));
}

TEST_F(EventLoop, FirstTurnEndTasksRunBeforeTheRestWhenEverTheyWereAdded) {
  std::vector<std::string> order;
  auto task = [&](std::string name) { return std::make_shared<task_fn>([&order, name] { order.push_back(name); }); };
  auto late_first = task("first, added by a last task");
  auto stop = std::make_shared<task_fn>([&] { loop.stop(); });
  loop.at_turn_end(task("last 1"));
  loop.at_turn_end(std::make_shared<task_fn>([&] {
    order.push_back("last 2");
    loop.at_turn_end(late_first, event_loop::turn_end_order::first);
    loop.at_turn_end(stop);
  }));
  loop.at_turn_end(task("first 1"), event_loop::turn_end_order::first);
  loop.at_turn_end(task("first 2"), event_loop::turn_end_order::first);
  loop.run();
  EXPECT_EQ(order, (std::vector<std::string>{"first 1", "first 2", "last 1", "last 2", "first, added by a last task"}));
}

TEST_F(EventLoop, ANextTurnTaskRunsAfterTheNextWaitWhichDoesNotBlock) {
  // A task cut into pieces: each piece at a turn's end, the edges that came
  // meanwhile handled in between, and no wait for a timer in between.
  std::vector<std::string> order;
  socket_pair p;
  recorder r;
  ASSERT_TRUE(loop.poller().add(p.ours, r));
  r.on_edge = [&](std::uint32_t e) {
    if ((e & EPOLLIN) != 0) order.push_back("edge");
  };
  int pieces = 0;
  std::vector<int> waits;  // next_wait_ms() before the run, then after each piece that leaves another
  std::shared_ptr<task_fn> piece;
  piece = std::make_shared<task_fn>([&] {
    order.push_back("piece " + std::to_string(++pieces));
    if (pieces == 1) p.send("a");  // comes while the work is not done
    if (pieces < 3) {
      loop.at_next_turn_end(piece);
      waits.push_back(loop.next_wait_ms());
    } else {
      loop.stop();
    }
  });
  waits.push_back(loop.next_wait_ms());
  loop.at_turn_end(piece);
  loop.run();
  EXPECT_GT(waits[0], 0) << "with nothing pending, the wait blocks until the safety net's timer";
  EXPECT_EQ(waits, (std::vector<int>{waits[0], 0, 0})) << "a wait blocked with a piece pending";
  loop.poller().remove(p.ours);
  piece.reset();
  EXPECT_EQ(order, (std::vector<std::string>{"piece 1", "edge", "piece 2", "piece 3"}));
}

TEST_F(EventLoop, ReleasedOwnersLiveUntilTheTurnEnds) {
  // The flag is shared: an owner the loop never let go would end with the
  // loop, after this test's locals.
  struct flags_its_end {
    explicit flags_its_end(std::shared_ptr<bool> f) : ended(std::move(f)) {}
    ~flags_its_end() { *ended = true; }
    std::shared_ptr<bool> ended;
  };
  const auto ended = std::make_shared<bool>(false);
  bool alive_after_release = false;
  socket_pair p;
  recorder r;
  ASSERT_TRUE(loop.poller().add(p.ours, r));
  r.on_edge = [&](std::uint32_t e) {
    if ((e & EPOLLIN) == 0) return;
    auto owner = std::make_shared<flags_its_end>(ended);
    loop.release_at_turn_end(std::move(owner));  // the last reference but the loop's
    alive_after_release = !*ended;
    loop.stop();  // this turn is the last: its end is all that runs after us
  };
  p.send("a");
  loop.run();
  loop.poller().remove(p.ours);
  EXPECT_TRUE(alive_after_release);
  EXPECT_TRUE(*ended) << "released by the end of the turn";
}

TEST_F(EventLoop, RedeliveryDoesNotBlockTheWaitInTheSet) { EXPECT_EQ(deliveries_of_one_byte(false), 3u); }

TEST_F(EventLoop, RedeliveryDoesNotBlockTheWaitInAsio) {
  // Asio's wait knows nothing of redeliveries: the loop must not enter it.
  EXPECT_EQ(deliveries_of_one_byte(true), 3u);
}

TEST_F(EventLoop, RedeliveryForARemovedDescriptorIsDropped) {
  socket_pair p;
  recorder r;
  ASSERT_TRUE(loop.poller().add(p.ours, r));
  r.on_edge = [&](std::uint32_t) {
    loop.poller().redeliver(p.ours, EPOLLIN);
    loop.poller().remove(p.ours);
  };
  // Long after the redelivery's wait, which does not block.
  loop.every(100ms, [&] { loop.stop(); });
  p.send("a");
  loop.run();
  EXPECT_EQ(r.events.size(), 1u);
}

TEST_F(EventLoop, RunReturnsWithNoAsioWaitLeftPending) {
  // The long timer keeps the loop waiting in Asio, its own wait on the set
  // pending there, when the posted function stops it. Posted by
  // asio::post on the loop's thread, it rings no doorbell: the set stays
  // quiet, so a wait left pending would never end.
  asio::steady_timer asio_work(io, 1h);
  asio_work.async_wait([](boost::system::error_code) {});
  event_loop::timer_id poster = 0;
  poster = loop.every(10ms, [&] {
    loop.cancel(poster);
    asio::post(io, [&] {
      asio_work.cancel();
      loop.stop();
    });
  });
  loop.run();

  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  bool had_to_stop = false;
  std::thread watchdog([&] {
    std::unique_lock lock(m);
    if (cv.wait_for(lock, 5s, [&] { return done; })) return;
    had_to_stop = true;
    io.stop();
  });
  io.restart();
  io.run();
  {
    std::lock_guard lock(m);
    done = true;
  }
  cv.notify_one();
  watchdog.join();
  EXPECT_FALSE(had_to_stop) << "io_context::run() after the loop found a wait still pending";
}

}  // namespace
}  // namespace fg::gateway
