// The worker process's runtime: one io_context, one gateway_link per
// gateway I/O thread (found in --link-dir), and the dispatcher behind
// them. No threads, no locks: every callback runs on the one loop.
//
// Batching: every envelope queued during a loop turn, on any link, goes
// out at the end of that turn in one write per link. The first queue() of
// a turn posts end_of_turn(); it runs the end-of-turn hooks (e.g. the hub
// broker's coalesced subscriptions), then flushes every link.
//
// Fairness: each read ends with a dispatcher turn; when its budgets leave
// client messages queued, schedule_service() posts the next turn, so
// other handlers (reads of other links, Redis, timers) run in between.
//
// The broker is injected (set_broker): the runtime knows only the api
// interface and, for a broker that uses the gateway as its hub, the
// hub_port/hub_listener pair.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "worker/config.hpp"
#include "worker/runtime/app_registry.hpp"
#include "worker/runtime/backoff.hpp"
#include "worker/runtime/dispatcher.hpp"
#include "worker/runtime/gateway_link.hpp"
#include "worker/runtime/link_output.hpp"

namespace fg::worker {

class worker_runtime final : public link_events, public link_output, public hub_port {
 public:
  worker_runtime(boost::asio::io_context& io, const worker_config& config, app_registry& apps,
                 std::shared_ptr<spdlog::logger> log);
  ~worker_runtime() override;

  void set_broker(broker& b, hub_listener* listener) noexcept { dispatcher_.set_broker(b, listener); }
  [[nodiscard]] dispatcher& core() noexcept { return dispatcher_; }

  // Finds the link sockets and starts connecting (and keeps looking while
  // there are none). Returns at once; the io_context does the work.
  void start();
  // Closes every link; the io_context then runs out of work.
  void stop();

  // link_output
  void queue(std::uint32_t index, const framegate::link::Envelope& e) override;
  void queue_send(std::uint32_t index, std::span<const std::uint64_t> to, bool binary, std::string_view payload,
                  deflated_segment pre) override;
  // hub_port
  [[nodiscard]] bool hub_ready() const override;
  void send_to_hub(const framegate::link::Envelope& e) override { queue(0, e); }
  void at_end_of_turn(std::function<void()> fn) override;

  // The largest payload every gateway link takes, from the Welcomes: the
  // smallest of their max_message_size and max_envelope (less the Send
  // framing); 0 until a Welcome told one. Broker deliveries are checked
  // against it.
  [[nodiscard]] std::uint64_t gateway_max_payload() const noexcept;

  [[nodiscard]] std::size_t link_count() const noexcept;
  [[nodiscard]] std::size_t ready_links() const noexcept;
  // Writes of every link its socket did not take whole (link_stats::write_waits).
  [[nodiscard]] std::uint64_t link_write_waits() const noexcept;
  // The link to gateway thread `index`, or null (for tests and stats).
  [[nodiscard]] const gateway_link* link_at(std::uint32_t index) const noexcept {
    return index < links_.size() ? links_[index].get() : nullptr;
  }

 private:
  // link_events
  void on_link_connecting(gateway_link& l) override;
  void on_link_ready(gateway_link& l, const framegate::link::Welcome& w) override;
  void on_link_down(gateway_link& l, std::string_view reason) override;
  void on_link_envelope(gateway_link& l, const framegate::link::Envelope& e) override;
  void on_link_message(gateway_link& l, const fg::link::message_view& m) override;
  void on_link_batch_end(gateway_link& l) override;
  void on_link_read_begin(gateway_link& l) override;
  void on_link_read_end(gateway_link& l) override;

  // Adds (and starts) a link for every socket in the directory that has none.
  void discover();
  void schedule_discovery();
  void schedule_flush();
  // The link at `index`, or null; schedules this turn's flush when there is one.
  gateway_link* output_link(std::uint32_t index);
  // Posts dispatcher turns while messages remain queued (fairness).
  void schedule_service();
  void end_of_turn();

  boost::asio::io_context& io_;
  const worker_config& config_;
  std::shared_ptr<spdlog::logger> log_;
  dispatcher dispatcher_;
  framegate::link::Register hello_;

  std::vector<std::unique_ptr<gateway_link>> links_;  // by index; null where the gateway has none
  boost::asio::steady_timer discovery_timer_;
  // Housekeeping, every --pool-shed-period: the dispatcher's pools give
  // back what they did not need.
  boost::asio::steady_timer housekeeping_timer_;
  void schedule_housekeeping();
  backoff discovery_backoff_;
  bool logged_untrusted_ = false;  // the link directory is not ours: said once
  bool logged_no_sockets_ = false;
  bool stopped_ = false;
  std::uint32_t gateway_links_ = 0;  // link_count of the last Welcome
  std::string gateway_id_;
  std::vector<std::uint64_t> welcome_limits_;  // by link index: what its last Welcome allows (0: not told)

  // The turn's output is written once per turn (end_of_turn): at the end of
  // the link read that queued it, or else from a handler posted for it.
  bool flush_due_ = false;     // end_of_turn will run; set until it has
  bool flush_posted_ = false;  // a handler for it is queued on the loop
  int reads_open_ = 0;         // a link read is being handled
  bool service_scheduled_ = false;
  std::vector<std::function<void()>> end_of_turn_;
};

}  // namespace fg::worker
