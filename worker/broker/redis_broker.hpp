// Rooms across workers and hosts through Redis pub/sub, used instead of the
// gateway hub when the worker is given --redis. Two connections (PUBLISH;
// SUBSCRIBE) that reconnect with backoff; room R is channel <prefix>room:R;
// every PUBLISH carries the header of redis_envelope.hpp (origin, seq).
// With history on (history_size > 0) a publish is a script that numbers,
// keeps and publishes the message in one step (history_scripts.hpp), and
// deliveries carry their room_position.
//
// The rules (batching, exactly once, outage, the flush after a reconnect)
// are described in docs/ARCHITECTURE.md, "Rooms across hosts: the broker".
// Each lives in its own pure class, which this one drives with hiredis:
// subscription_set (net subscription changes per loop turn), publish_outbox
// (bounded queue of publishes), flush_gate (the flush waits for the earlier
// subscribers), publish_dedup (exactly-once delivery).
//
// Single-threaded: everything runs on the worker's io_context.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "common/byte_buffer.hpp"
#include "common/deflate/deflater.hpp"
#include "common/link/codec.hpp"
#include "worker/app.hpp"
#include "worker/broker/envelope_mac.hpp"
#include "worker/broker/flush_gate.hpp"
#include "worker/broker/history_lookup.hpp"
#include "worker/broker/inbound_check.hpp"
#include "worker/broker/presence_shares.hpp"
#include "worker/broker/publish_compressor.hpp"
#include "worker/broker/publish_dedup.hpp"
#include "worker/broker/publish_outbox.hpp"
#include "worker/broker/redis_connection.hpp"
#include "worker/broker/redis_url.hpp"
#include "worker/broker/refill_hold.hpp"
#include "worker/broker/room_channel.hpp"
#include "worker/broker/room_tops.hpp"
#include "worker/broker/running_broker.hpp"
#include "worker/broker/subscription_set.hpp"
#include "worker/metrics/worker_stats.hpp"

struct redisAsyncContext;
struct redisReply;

namespace fg::worker {

struct redis_broker_options {
  std::string channel_prefix = "framegate:";
  std::size_t buffer = 10000;  // outbox bound, in publishes
  // How long a flush after an outage waits for the earlier subscribers.
  std::chrono::milliseconds resubscribe_wait{5000};
  std::chrono::milliseconds resubscribe_poll{25};  // PUBSUB NUMSUB interval meanwhile
  redis_connection_options connection{};
  // What arrives from Redis is checked before delivery (inbound_check.hpp):
  // against the worker's own limit (its --max-envelope less the Send
  // envelope's framing) and the gateways' (gateway_max_payload: the
  // smallest the links' Welcomes told; 0 or unset: not told).
  std::uint32_t max_envelope = link::default_max_envelope;
  std::function<std::uint64_t()> gateway_max_payload;
  foreign_policy foreign = foreign_policy::drop;
  // Non-empty: publishes carry an HMAC with it (version 2 header) and
  // messages without a valid one are dropped.
  std::string secret;
  // Messages kept per room for recovery (0: no history, no offsets), and
  // for how long after the room's last publish.
  std::size_t history_size = 100;
  std::chrono::seconds history_ttl{300};
  // How long this worker's presence share outlives its last refresh (it
  // is refreshed every third of it).
  std::chrono::milliseconds presence_ttl{15000};
  // --publish-deflate: a publish of at least `threshold` bytes crosses
  // Redis with the compression of its stable prefix (publish_options,
  // redis_envelope.hpp versions 3 and 4), made once here with `tuning`.
  publish_compression publish_deflate{};

  // One shard of a Redis Cluster (redis_cluster_broker drives one broker per
  // primary): sharded pub/sub (SSUBSCRIBE, SPUBLISH, PUBSUB SHARDNUMSUB),
  // one room per subscription command (they may not cross slots), and
  // channels named with their own hash tag (room_channel.hpp).
  bool sharded = false;
  // Sharded: the server dropped a room's subscription (its slot moved) or
  // refused it (MOVED). The broker has stopped wanting the room when this
  // runs; its owner places it again. Runs inside a hiredis callback: the
  // broker must not be destroyed from it.
  std::function<void(std::string_view room)> on_room_lost;
  // Sharded: a command got a cluster redirection or refusal (MOVED, ASK,
  // TRYAGAIN, CLUSTERDOWN): the slot map is out of date. Same caveat.
  std::function<void(std::string_view error)> on_redirect;
  // Sharded: a publish the cluster refused without running it (MOVED, ASK,
  // TRYAGAIN, CLUSTERDOWN). True when the owner took it to publish again
  // once the slot map is current; false: dropped and counted as before.
  std::function<bool(std::string_view room, std::string_view payload, publish_options& options)> republish;
  // Where publish round trips are observed; null: a histogram of the
  // broker's own (report().publish_ns).
  metrics::histogram* publish_ns = nullptr;
};

// Counters since start(): report() hands most of them to /metrics; the
// worker logs them at exit.
struct redis_broker_stats {
  std::uint64_t published = 0;          // publish() calls
  std::uint64_t delivered = 0;          // deliveries handed to the apps
  std::uint64_t delivered_locally = 0;  // of which delivered by this worker itself, not through Redis
  std::uint64_t buffered = 0;           // publishes that had to wait for the publish connection
  std::uint64_t held_publishes = 0;     // numbered publishes that waited for their room's new subscription
  std::uint64_t dropped = 0;         // publishes other workers never get: outbox overflow, refused, or unsent at stop()
  std::uint64_t missed = 0;          // flushed after an outage to fewer subscribers than before it
  std::uint64_t reconnects = 0;      // both connections
  std::uint64_t stale_removed = 0;   // earlier connections a partition left on Redis, removed (CLIENT KILL)
  std::uint64_t resubscribes = 0;    // rooms subscribed again after a reconnect
  std::uint64_t duplicates = 0;      // copies sent again after a reconnect, skipped
  std::uint64_t foreign = 0;         // messages without our header, delivered as they are (--redis-foreign deliver)
  inbound_reject_counts rejected{};  // channel messages dropped unseen, by inbound_reject
  std::uint64_t subscribe_commands = 0;
  std::uint64_t unsubscribe_commands = 0;
  history_outcome_counts history{};     // broker::history calls, by outcome
  std::uint64_t history_recovered = 0;  // entries handed out by recovered ones
  std::uint64_t presence_reads = 0;
  std::uint64_t gaps = 0;                 // offsets of subscribed rooms that never arrived here (room_tops)
  std::uint64_t refilled = 0;             // missed while resubscribing, delivered from the room's history
  std::uint64_t refill_held = 0;          // live ones that waited for their room's refill, to stay behind it
  std::uint64_t rooms_lost = 0;           // sharded: subscriptions the server dropped or refused
  std::uint64_t redirects = 0;            // sharded: commands answered MOVED, ASK, TRYAGAIN or CLUSTERDOWN
  std::uint64_t deflated_publishes = 0;   // publishes sent with their compression (--publish-deflate)
  std::uint64_t deflated_deliveries = 0;  // deliveries handed to the apps with their publisher's compression
};

// The counters of a report, from the stats (the gauges are the broker's).
broker_report report_of(const redis_broker_stats& s);

class redis_broker final : public running_broker, private redis_connection::listener {
 public:
  using deliver_fn =
      std::function<void(std::string_view room, std::string_view payload, room_position at, deflated_segment pre)>;

  redis_broker(boost::asio::io_context& io, const redis_endpoint& endpoint, redis_broker_options options,
               deliver_fn deliver, std::shared_ptr<spdlog::logger> log);
  ~redis_broker() override;

  void start() override;
  // Closes both connections; what is still in the outbox is counted as dropped.
  void stop() override;

  // broker
  void subscribe(std::string_view room) override;
  void unsubscribe(std::string_view room) override;
  void publish(std::string_view room, std::string_view payload) override;
  void publish(std::string_view room, std::string_view payload, publish_options options) override;
  void set_presence(std::string_view room, std::string_view user, std::uint32_t connections) override;
  void presence(std::string_view room, std::function<void(presence_result)> done) override;
  void history(std::string_view room, const std::optional<history_since>& since,
               std::function<void(room_history)> done) override;

  [[nodiscard]] redis_broker_stats stats() const;
  // For /metrics and /readyz.
  [[nodiscard]] broker_report report() const override;
  [[nodiscard]] std::uint64_t origin() const noexcept { return origin_; }
  [[nodiscard]] bool wants(std::string_view room) const { return subs_.wants(room); }
  // The room's SUBSCRIBE is acknowledged on the current connection.
  [[nodiscard]] bool confirmed(std::string_view room) const;
  // How long the oldest publish written to Redis has waited for its answer
  // (zero when none waits): a silent peer (a network partition) shows here
  // long before TCP gives up.
  [[nodiscard]] std::chrono::steady_clock::duration unanswered_for(std::chrono::steady_clock::time_point now) const {
    const auto oldest = outbox_.oldest_written();
    return oldest ? now - *oldest : std::chrono::steady_clock::duration::zero();
  }
  // Sharded, before stop(): hands the publishes that never reached Redis
  // to republish (options), so a primary that left the map does not take
  // them along; those our members wait for stay (stop() counts them).
  void hand_over_unsent();
  // The subscribers the last publish to `room` reached (-1: unknown), and
  // the same told to another broker: a room moved to a new shard keeps
  // its count, so the new shard's first flush waits for the subscribers
  // that still have to move (the flush gate).
  [[nodiscard]] long long receivers(std::string_view room) const { return gate_.receivers(room); }
  void expect_receivers(std::string_view room, long long n) {
    if (n >= 0) gate_.note_receivers(room, n);
  }
  // Both connections are up.
  [[nodiscard]] bool up() const noexcept { return pub_.ready() && sub_.ready(); }
  // Publishes go straight to Redis (not buffered).
  [[nodiscard]] bool flowing() const noexcept { return pub_flowing_; }
  [[nodiscard]] std::size_t outbox_size() const noexcept { return outbox_.size(); }
  [[nodiscard]] const redis_io_stats& publish_io() const noexcept { return pub_.io_stats(); }
  [[nodiscard]] std::string channel_of(std::string_view room) const { return channels_.of(room); }
  // Tests: refill reads wait (paused) until resumed, so that a live
  // message can be made to arrive before the read's answer.
  void pause_refills_for_test(bool paused) {
    refills_paused_ = paused;
    if (!paused) send_waiting_history();
  }

 private:
  // redis_connection::listener
  void on_ready(redis_connection& c) override;
  void on_down(redis_connection& c, std::string_view why) override;

  // Subscriptions: the changes of one loop turn leave together.
  void post_flush();
  void flush_subscriptions();
  bool send_subscription(bool subscribe, const std::vector<std::string>& rooms);
  bool send_subscription_command(std::string_view command, const std::vector<std::string>& rooms);
  void on_subscription_reply(const redisReply& r);
  // Sharded: the reply to the oldest subscription command still waiting;
  // false when `r` is not it (a push of the server's own).
  bool take_sharded_answer(const redisReply& r, bool& subscribe, std::string& room);
  void lose_room(std::string_view room);
  // True for a cluster's redirection or refusal (the command did not run).
  bool note_redirect(std::string_view error);
  [[nodiscard]] bool sub_settled() const noexcept;

  // The flush after a reconnect: waits for the earlier subscribers (flush_gate).
  void begin_gate(std::chrono::milliseconds settle);
  void check_gate();
  void ask_gate(const std::vector<std::string>& rooms);
  void on_numsub_reply(const redisReply& r);
  void poll_gate();
  void open_gate();
  void try_start_flow();

  // Publishing.
  [[nodiscard]] bool keeps_history() const noexcept { return options_.history_size > 0; }
  // Queues a publish in the outbox; what that pushes out is dropped and counted.
  void enqueue(publish_record_ptr r);
  // A numbered publish to `room` waits for its SUBSCRIBE's acknowledgement
  // (see awaiting_subscription_).
  [[nodiscard]] bool awaits_subscription(std::string_view room) const;
  // Queues the held publishes whose room no longer waits (all of them
  // with `everything`), in their order, and sends them.
  void release_held(bool everything = false);
  void send_outbox();
  bool send_publish(redisAsyncContext* c, const publish_record& r);
  void on_publish_reply(const redisReply& r);

  // History: requests wait for their room's subscription (broker::history).
  struct history_request {
    std::string room;
    std::optional<history_since> since;
    std::function<void(room_history)> done;
    bool refill = false;  // the broker's own read (refill), not an app's: not in the history stats
  };
  struct history_cookie;
  // After the subscribe connection came back: each numbered room's
  // messages published while it was down, read from the room's history
  // once its subscription is in place again (refill).
  void refill_after_resubscribe(const std::vector<std::string>& rooms);
  void refill(const std::string& room, const room_history& h);
  // A live delivery, unless its room's refill is still reading: then it
  // waits behind the refill (refill_hold).
  void deliver_live(std::string_view room, std::string_view payload, room_position at = {}, deflated_segment pre = {});
  // What a hold kept, in order, but for copies of what was delivered since.
  void deliver_held(std::string_view room, const std::vector<held_delivery>& held);
  // A live message the refill of its room delivered already (published
  // between the new subscription and the history read: both brought it).
  bool refilled_copy(std::string_view room, room_position at);
  void load_scripts();
  void send_waiting_history();
  bool send_history(history_request& req);
  void on_history_reply(const redisReply& r, history_request& req);
  void fail_history(std::string_view why, std::string_view room = {});
  void finish_history(history_request& req, room_history h);

  // Presence: this worker's share, written on change, refreshed by a timer
  // and written again whole after a reconnect.
  struct presence_cookie;
  // Without a user: only the deadline is refreshed.
  bool send_presence(std::string_view room, std::optional<std::string_view> user, std::uint32_t connections);
  void send_all_presence();
  void refresh_presence();
  static void presence_reply_cb(redisAsyncContext* ac, void* reply, void* privdata);
  static void give_up(publish_record& r, std::string_view why);

  // Delivery.
  void deliver(std::string_view room, std::string_view payload, room_position at = {}, deflated_segment pre = {});
  // Delivers `r` to this worker's members now and remembers its seq.
  void deliver_locally(publish_record& r);
  void deliver_all_locally(const std::vector<publish_record_ptr>& records);
  void on_channel_message(std::string_view channel, std::string_view data);
  // Counts (and now and then logs) a channel message dropped unseen.
  void reject(inbound_reject why, std::string_view room, std::size_t bytes);

  // hiredis callbacks: forward to the on_ member of the same name.
  static void publish_reply_cb(redisAsyncContext* ac, void* reply, void* privdata);
  static void subscription_reply_cb(redisAsyncContext* ac, void* reply, void* privdata);
  struct numsub_cookie;
  static void numsub_reply_cb(redisAsyncContext* ac, void* reply, void* privdata);
  static void history_reply_cb(redisAsyncContext* ac, void* reply, void* privdata);

  boost::asio::io_context& io_;
  redis_broker_options options_;
  deliver_fn deliver_;
  std::shared_ptr<spdlog::logger> log_;
  std::uint64_t origin_;
  room_channel channels_;
  // The commands of this mode: PUBLISH or SPUBLISH, and so on.
  struct pubsub_words {
    std::string_view subscribe, unsubscribe, publish, numsub, message, subscribed, unsubscribed;
  };
  pubsub_words words_;
  redis_connection pub_, sub_;
  boost::asio::steady_timer gate_timer_;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // guards posted work

  subscription_set subs_;
  bool flush_posted_ = false;
  // Sharded: one room per SSUBSCRIBE/SUNSUBSCRIBE, each answered once, in
  // order, so errors can be told apart from the server's own SUNSUBSCRIBE
  // pushes (a slot that moved).
  struct sent_subscription {
    bool subscribe;
    std::string room;
  };
  std::deque<sent_subscription> sub_sent_;

  std::uint64_t seq_ = 0;
  // Numbered publishes reach this worker's members only through its own
  // subscription, and Redis runs the two connections' commands in no set
  // order: a publish sent beside its room's first SUBSCRIBE could run
  // first and never come back here. Such publishes (and the room's later
  // ones) wait here, in order, until the SUBSCRIBE is acknowledged, the
  // room is left, or the subscribe connection is lost.
  std::deque<publish_record_ptr> held_;
  publish_outbox outbox_;
  bool pub_flowing_ = false;
  flush_gate gate_;
  publish_dedup dedup_;
  std::unique_ptr<envelope_mac> mac_;  // null without a secret
  publish_compressor compressor_;      // --publish-deflate

  std::string origin_hex_;  // the publish script's key for our seqs
  std::mt19937_64 epoch_rng_;
  std::vector<history_request> waiting_history_;
  presence_shares presence_;
  room_tops tops_;  // numbered rooms subscribed here
  // Per room, the last offset a refill delivered, until live ones pass it.
  std::unordered_map<std::string, history_since> refilled_upto_;
  refill_hold refill_hold_;
  bool refills_paused_ = false;  // pause_refills_for_test
  boost::asio::steady_timer presence_timer_;

  redis_broker_stats stats_;
  metrics::histogram own_publish_ns_{metrics::buckets::latency_ns};
  metrics::histogram* publish_ns_;
};

}  // namespace fg::worker
