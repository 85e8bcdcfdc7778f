// Rooms across workers and hosts through a Redis Cluster (--redis-cluster),
// with sharded pub/sub: a room's messages go only to the shard that owns its
// channel's hash slot, so adding shards adds pub/sub capacity (a plain
// PUBLISH is broadcast over the cluster bus to every node).
//
// One redis_broker in shard mode per primary (its own publish and
// subscribe connections, outbox, flush gate, exactly-once and history),
// and this class in front of them:
// - it reads the slot map (CLUSTER SHARDS) from a seed or a known node,
//   again every refresh_interval, and every refresh_retry while something
//   is wrong (a shard down or silent, a room without a home, a redirection);
// - it sends each room to the broker of its slot's primary, and moves the
//   room (subscription and presence share) when the map says the slot has
//   a new owner: after a migration (the old owner drops the subscription
//   with SUNSUBSCRIBE, or answers MOVED) or a failover (a replica promoted);
// - a publish the cluster refused without running it (MOVED, ASK, TRYAGAIN,
//   CLUSTERDOWN: a slot moving, a failover under way) waits, with the
//   room's later publishes behind it, for the next map, and is sent again;
// - a primary that left the map takes its broker with it: what that broker
//   still held unsent is counted as dropped, like any outage's loss.
//
// Losses are counted where they happen: dropped (publishes that never
// reached a shard), missed (the publisher's view) and gaps (offsets that
// never arrived here, room_tops.hpp). Members recover gaps with `since`.
//
// Single-threaded: everything runs on the worker's io_context.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "worker/app.hpp"
#include "worker/broker/cluster_slots.hpp"
#include "worker/broker/presence_shares.hpp"
#include "worker/broker/redis_broker.hpp"
#include "worker/broker/redis_connection.hpp"
#include "worker/broker/redis_url.hpp"
#include "worker/broker/room_channel.hpp"
#include "worker/broker/room_tops.hpp"
#include "worker/broker/running_broker.hpp"
#include "worker/metrics/worker_stats.hpp"

namespace fg::worker {

struct redis_cluster_options {
  // Seed nodes; their user and password are used for every node.
  std::vector<redis_endpoint> seeds;
  // For each shard's broker (`sharded` and its callbacks are set here).
  redis_broker_options shard;
  std::chrono::milliseconds refresh_interval{5000};
  std::chrono::milliseconds refresh_retry{250};
  // A node that does not answer CLUSTER SHARDS within this is left for the
  // next; one that refuses the connection or drops it, at the next
  // refresh_retry tick. So is one whose maps have left the broker degraded
  // (a shard down or not answering) for this long: a node cut off from the
  // cluster's majority answers with a map the majority has moved past.
  std::chrono::milliseconds topology_timeout{2000};
};

class redis_cluster_broker final : public running_broker, private redis_connection::listener {
 public:
  using deliver_fn = redis_broker::deliver_fn;

  redis_cluster_broker(boost::asio::io_context& io, redis_cluster_options options, deliver_fn deliver,
                       std::shared_ptr<spdlog::logger> log);
  ~redis_cluster_broker() override;

  void start() override;
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

  // Summed over every shard's broker, those already retired included.
  [[nodiscard]] redis_broker_stats stats() const;
  [[nodiscard]] broker_report report() const override;
  // The shard broker that has the room now (null: none yet).
  [[nodiscard]] const redis_broker* home(std::string_view room) const;
  [[nodiscard]] bool mapped() const noexcept { return map_.has_value(); }

 private:
  struct shard {
    std::string address;  // host:port of the primary
    std::unique_ptr<redis_broker> broker;
  };
  // A publish made while its room has no shard (no map yet, an unowned slot).
  struct waiting_publish {
    std::string room, payload;
    publish_options options;
  };

  // redis_connection::listener (the topology connection)
  void on_ready(redis_connection& c) override;
  void on_down(redis_connection& c, std::string_view why) override;

  // The slot map.
  void want_refresh();
  void tick();
  void refresh();
  void send_cluster_shards();
  static void shards_reply_cb(redisAsyncContext* ac, void* reply, void* privdata);
  void on_shards_reply(const redisReply* r);
  // When the next CLUSTER SHARDS goes out: at once (a node failed us: ask
  // the next without waiting), or at tick()'s pace (a node whose map gives
  // slots to nobody: every node may say the same of unassigned slots; an
  // unreachable node: every node may be down). At tick()'s pace, a turn
  // that comes back to the node it left keeps its connection.
  enum class next_read { now, at_next_tick };
  void connect_topology(next_read when = next_read::now);
  void next_topology_node(next_read when = next_read::now);
  // next_topology_node() at tick()'s pace, logging `why` when the node changes.
  void leave_topology_node(std::string_view why);
  void apply(slot_map map);
  [[nodiscard]] bool degraded() const;

  // Placement.
  [[nodiscard]] redis_endpoint endpoint_of(const cluster_node& node) const;
  [[nodiscard]] std::string owner_address(std::string_view room) const;
  shard& shard_at(const cluster_node& primary);
  [[nodiscard]] redis_broker* broker_at(const std::string& address) const;
  redis_broker* home_of(std::string_view room);
  struct placement;
  void place(const std::string& room, placement& p);
  static void remember_receivers(const std::string& room, placement& p, const redis_broker& from);
  void retire(std::unordered_map<std::string, shard>::iterator it);
  void wait(std::string_view room, std::string_view payload, publish_options options);
  bool republish(std::string_view room, std::string_view payload, publish_options& again);
  void send_waiting();
  void on_room_lost(std::string_view room);

  boost::asio::io_context& io_;
  redis_cluster_options options_;
  deliver_fn deliver_;
  std::shared_ptr<spdlog::logger> log_;
  room_channel channels_;
  metrics::histogram publish_ns_{metrics::buckets::latency_ns};
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // guards posted work

  // Topology: one connection, to the seeds and the known nodes in turn.
  std::vector<redis_endpoint> candidates_;
  std::size_t candidate_ = 0;
  std::unique_ptr<redis_connection> topology_;
  std::uint64_t topology_generation_ = 0;  // a reply for an older connection is ignored
  bool refresh_wanted_ = true, refresh_sent_ = false, refresh_posted_ = false;
  std::chrono::steady_clock::time_point refresh_started_{}, last_refresh_{};
  // Since when the maps of the current topology node have left the broker
  // degraded (none while it is not).
  std::optional<std::chrono::steady_clock::time_point> degraded_since_;
  bool node_changes_logged_ = false;  // leave_topology_node() warned during this outage
  boost::asio::steady_timer tick_timer_;
  std::optional<slot_map> map_;
  bool stopped_ = false;

  std::unordered_map<std::string, shard> shards_;  // by primary address
  // Where a room with members here is subscribed, and the subscribers its
  // last publish reached, kept across a move (the next shard's flush gate
  // waits for them).
  struct placement {
    std::string at;  // the shard's address; "": none yet
    long long receivers = -1;
  };
  std::map<std::string, placement, std::less<>> rooms_;
  presence_shares presence_;
  std::deque<waiting_publish> waiting_;
  std::set<std::string, std::less<>> held_;  // rooms whose publishes wait behind a refused one
  room_tops tops_;

  redis_broker_stats retired_{};  // of the brokers of primaries that left the map
  std::uint64_t refreshes_ = 0, moved_ = 0, gaps_ = 0, waiting_dropped_ = 0, republished_ = 0;
};

}  // namespace fg::worker
