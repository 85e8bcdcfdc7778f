// Rooms across workers and hosts through Redis pub/sub. Used instead of the
// gateway hub when the worker is given --redis.
//
// Connections: one for PUBLISH, one for SUBSCRIBE (a subscribed connection
// can run no other command); both AUTH/SELECT when configured and reconnect
// with backoff (redis_connection). Room R is channel <prefix>room:R; every
// PUBLISH carries the header of redis_envelope.hpp (origin, seq).
//
// Batching: the subscription changes of one loop turn leave as at most one
// SUBSCRIBE and one UNSUBSCRIBE (net difference: a join and a leave of the
// same room in one turn send nothing); publishes are appended to hiredis's
// buffer as they come and leave in one write when the loop next polls.
//
// Exactly once, the rule: a worker delivers a publish to its own members
// only when Redis cannot be counted on to bring it back.
//  - Redis mode (publish connection flowing, subscribe connection up, the
//    room's SUBSCRIBE acknowledged): the publishing worker delivers nothing
//    itself; every worker, this one included, delivers what comes back from
//    its subscription, so all see one order per room. The publish is noted
//    as owed locally until its own copy comes back.
//  - Otherwise (outage, reconnecting, room subscription not yet confirmed):
//    the publishing worker delivers to its members at once and remembers
//    the seq, so the copy that may come back later is skipped.
//  - A connection lost while publishes are owed locally: they are delivered
//    locally then (and remembered), never waited for.
//  - Copies sent again after a reconnect (publishes whose reply was lost)
//    are skipped by every receiver: a seq not above the last one seen from
//    that origin is a duplicate.
//
// Outage: publishes wait in a bounded outbox (--redis-buffer entries,
// counting those sent but not yet acknowledged); beyond the bound the
// oldest one not yet written is dropped and counted: other hosts never see
// it (members here already have it). Until the outbox is flushed,
// publishes are delivered locally and queued behind it (order).
//
// Reconnect: SUBSCRIBE every wanted room again, then flush the outbox, but
// only once the subscribers that were there before the outage are back:
// the other workers lost Redis at the same moment and resubscribe on their
// own schedule, and Redis pub/sub keeps nothing for a subscriber that is
// not there yet. Every PUBLISH reply says how many subscribers got it; the
// last count per room is remembered, and the flush waits (PUBSUB NUMSUB,
// polled) until every buffered room has at least as many subscribers as
// before, bounded by resubscribe_wait. A room never published to before
// the outage has no count: for it the flush waits a settle time of twice
// the last reconnect wait (the peers' likely reconnect time). A flushed
// publish whose PUBLISH reply counts fewer subscribers than before the
// outage is counted as `missed`: some peer never gets it (it may also
// have left), so nothing is lost without a count.
//
// Single-threaded: everything runs on the worker's io_context.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "worker/app.hpp"
#include "worker/broker/redis_connection.hpp"
#include "worker/broker/redis_url.hpp"
#include "worker/metrics/worker_stats.hpp"

struct redisAsyncContext;

namespace fg::worker {

struct redis_broker_options {
  std::string channel_prefix = "framegate:";
  std::size_t buffer = 10000;  // outbox bound, in publishes
  // How long a flush after an outage waits for the earlier subscribers.
  std::chrono::milliseconds resubscribe_wait{5000};
  std::chrono::milliseconds resubscribe_poll{25};  // PUBSUB NUMSUB interval meanwhile
  redis_connection_options connection{};
};

// Plain counters, logged at exit (metrics come later).
struct redis_broker_stats {
  std::uint64_t published = 0;          // publish() calls
  std::uint64_t delivered = 0;          // deliveries handed to the apps
  std::uint64_t delivered_locally = 0;  // of which delivered by this worker itself, not through Redis
  std::uint64_t buffered = 0;           // publishes that had to wait for the publish connection
  std::uint64_t dropped = 0;            // publishes other workers never get: outbox overflow or refused
  std::uint64_t missed = 0;             // flushed after an outage to fewer subscribers than before it
  std::uint64_t reconnects = 0;         // both connections
  std::uint64_t resubscribes = 0;       // rooms subscribed again after a reconnect
  std::uint64_t duplicates = 0;         // copies sent again after a reconnect, skipped
  std::uint64_t foreign = 0;            // messages without our header, delivered as they are
  std::uint64_t subscribe_commands = 0;
  std::uint64_t unsubscribe_commands = 0;
};

class redis_broker final : public broker, private redis_connection::listener {
 public:
  using deliver_fn = std::function<void(std::string_view room, std::string_view payload)>;

  redis_broker(boost::asio::io_context& io, const redis_endpoint& endpoint, redis_broker_options options,
               deliver_fn deliver, std::shared_ptr<spdlog::logger> log);
  ~redis_broker() override;

  void start();
  // Closes both connections; what is still in the outbox is counted as dropped.
  void stop();

  // broker
  void subscribe(std::string_view room) override;
  void unsubscribe(std::string_view room) override;
  void publish(std::string_view room, std::string_view payload) override;

  [[nodiscard]] redis_broker_stats stats() const;
  // For /metrics and /readyz.
  [[nodiscard]] broker_report report() const;
  [[nodiscard]] std::uint64_t origin() const noexcept { return origin_; }
  [[nodiscard]] bool wants(std::string_view room) const { return wanted_.contains(room); }
  // The room's SUBSCRIBE is acknowledged on the current connection.
  [[nodiscard]] bool confirmed(std::string_view room) const;
  // Publishes go straight to Redis (not buffered).
  [[nodiscard]] bool flowing() const noexcept { return pub_flowing_; }
  [[nodiscard]] std::size_t outbox_size() const noexcept { return outbox_.size(); }
  [[nodiscard]] const redis_io_stats& publish_io() const noexcept { return pub_.io_stats(); }
  [[nodiscard]] std::string channel_of(std::string_view room) const;

 private:
  struct string_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  using room_set = std::unordered_set<std::string, string_hash, std::equal_to<>>;

  struct record {
    std::uint64_t seq = 0;
    std::string room;
    std::string wire;         // envelope header + payload: what PUBLISH sends
    bool owed_local = false;  // our members get it from its copy coming back
    long long expect = -1;    // subscribers it should reach (a flush after an outage); -1: no expectation
    std::chrono::steady_clock::time_point written;  // PUBLISH handed to hiredis, for its round trip
    [[nodiscard]] std::string_view payload() const;
  };
  using record_ptr = std::shared_ptr<record>;

  // redis_connection::listener
  void on_ready(redis_connection& c) override;
  void on_down(redis_connection& c, std::string_view why) override;

  void touch(std::string_view room);
  void flush_subscriptions();
  bool send_subscription(const char* command, const std::vector<std::string>& rooms);
  [[nodiscard]] bool sub_settled() const noexcept;
  // The flush after a reconnect: waits for the earlier subscribers (see above).
  void begin_gate(std::chrono::milliseconds settle);
  void check_gate();
  void poll_gate();
  void open_gate();
  void note_receivers(const std::string& room, long long n);
  void try_start_flow();
  void send_outbox();
  void enforce_bound();
  void deliver(std::string_view room, std::string_view payload);
  // Delivers `r` to this worker's members now and remembers its seq.
  void deliver_locally(record& r);
  void rescue_owed();
  void settle_echo(std::uint64_t seq);
  bool accept_seq(std::uint64_t origin, std::uint64_t seq);
  void on_channel_message(std::string_view channel, std::string_view data);

  static void on_publish_reply(redisAsyncContext* ac, void* reply, void* privdata);
  static void on_subscription_reply(redisAsyncContext* ac, void* reply, void* privdata);
  struct numsub_cookie;
  static void on_numsub_reply(redisAsyncContext* ac, void* reply, void* privdata);

  boost::asio::io_context& io_;
  redis_broker_options options_;
  deliver_fn deliver_;
  std::shared_ptr<spdlog::logger> log_;
  std::uint64_t origin_;
  std::string room_prefix_;  // <prefix>room:
  redis_connection pub_, sub_;
  boost::asio::steady_timer gate_timer_;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // guards posted work

  // Subscriptions.
  room_set wanted_;     // rooms with local members
  room_set announced_;  // sent on the current subscribe connection
  std::unordered_map<std::string, unsigned, string_hash, std::equal_to<>> sub_pending_;  // replies awaited, per room
  std::vector<std::string> touched_;                                                     // changed since the last flush
  bool flush_posted_ = false;
  std::size_t resub_pending_ = 0;  // replies awaited for the resubscription after a reconnect

  // Publishing.
  std::uint64_t seq_ = 0;
  std::deque<record_ptr> outbox_;  // not yet acknowledged; the first in_flight_ are sent
  std::size_t in_flight_ = 0;
  bool pub_flowing_ = false;
  // The gate of the flush after a (re)connect of the publish connection.
  bool gating_ = false;
  bool numsub_pending_ = false;
  bool gate_uncounted_ = false;        // a buffered room has no count: also wait the settle time
  std::uint64_t gate_generation_ = 0;  // a NUMSUB reply of an earlier gate is ignored
  std::chrono::steady_clock::time_point gate_deadline_, settle_until_;
  // room -> subscribers its last PUBLISH reached (bounded; see note_receivers)
  std::unordered_map<std::string, long long, string_hash, std::equal_to<>> receivers_;
  std::deque<record_ptr> echo_wait_;                            // owed locally, waiting for their own copy
  std::set<std::uint64_t> self_delivered_;                      // our seqs delivered locally: skip their copy
  std::unordered_map<std::uint64_t, std::uint64_t> last_seen_;  // origin -> highest seq delivered

  redis_broker_stats stats_;
  metrics::histogram publish_ns_{metrics::buckets::latency_ns};
};

}  // namespace fg::worker
