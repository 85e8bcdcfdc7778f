// The admin thread's way to the I/O threads: each question is posted to
// the thread that can answer it (thread 0's route table for routing,
// every thread for metrics) and its answer posted back (post() is the only
// way across threads). Thread 0's router holds link 0 of every worker, so
// it alone can answer for the workers of the whole gateway.
//
// Shutdown: what travels to an I/O thread holds no admin object, only an
// id and a mailbox; once the bridge is gone the mailbox is empty and late
// answers are dropped, so either side may stop first.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "gateway/admin/admin_backend.hpp"

namespace fg::gateway {
class io_thread;
}

namespace fg::gateway::admin {

class router_bridge final : public admin_backend {
 public:
  // `router` null (echo mode): no worker is needed and none can be published
  // to. Lives on the admin thread; the threads and `router` must outlive its
  // last question.
  router_bridge(boost::asio::io_context& admin_io, std::vector<io_thread*> threads, route_table* router);
  ~router_bridge() override;
  router_bridge(const router_bridge&) = delete;
  router_bridge& operator=(const router_bridge&) = delete;

  void count_workers(std::function<void(std::size_t)> done) override;
  void publish(std::vector<room_message> messages, std::function<void(publish_outcome)> done) override;
  void collect(std::function<void(std::vector<thread_snapshot>)> done) override;

 private:
  struct mailbox {
    std::mutex mutex;
    router_bridge* bridge = nullptr;  // null once the bridge is gone
    boost::asio::io_context* io = nullptr;
  };
  struct scrape {
    std::vector<thread_snapshot> snapshots;
    std::size_t missing = 0;
    std::function<void(std::vector<thread_snapshot>)> done;
  };

  // Runs work(router) on thread 0, then done(result) on the admin thread.
  void ask(std::function<std::size_t(route_table&)> work, std::function<void(std::size_t)> done);
  void answer(std::uint64_t id, std::size_t result);
  void answer_publish(std::uint64_t id, publish_outcome outcome);
  void take_snapshot(std::uint64_t id, std::size_t thread, thread_snapshot snap);

  boost::asio::io_context& admin_io_;
  std::vector<io_thread*> threads_;
  route_table* router_;
  std::shared_ptr<mailbox> mailbox_;
  std::uint64_t next_id_ = 1;
  std::unordered_map<std::uint64_t, std::function<void(std::size_t)>> pending_;        // admin thread only
  std::unordered_map<std::uint64_t, scrape> scrapes_;                                  // admin thread only
  std::unordered_map<std::uint64_t, std::function<void(publish_outcome)>> publishes_;  // admin thread only
};

}  // namespace fg::gateway::admin
