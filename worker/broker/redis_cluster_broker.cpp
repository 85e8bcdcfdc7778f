#include "worker/broker/redis_cluster_broker.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <utility>

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <boost/asio/post.hpp>

namespace fg::worker {

namespace asio = boost::asio;

namespace {

std::string address_of(const redis_endpoint& e) { return e.host + ":" + std::to_string(e.port); }

void add(redis_broker_stats& to, const redis_broker_stats& s) {
  to.published += s.published;
  to.delivered += s.delivered;
  to.delivered_locally += s.delivered_locally;
  to.buffered += s.buffered;
  to.dropped += s.dropped;
  to.missed += s.missed;
  to.reconnects += s.reconnects;
  to.stale_removed += s.stale_removed;
  to.resubscribes += s.resubscribes;
  to.duplicates += s.duplicates;
  to.foreign += s.foreign;
  for (std::size_t i = 0; i < to.rejected.size(); ++i) to.rejected[i] += s.rejected[i];
  to.subscribe_commands += s.subscribe_commands;
  to.unsubscribe_commands += s.unsubscribe_commands;
  for (std::size_t i = 0; i < to.history.size(); ++i) to.history[i] += s.history[i];
  to.history_recovered += s.history_recovered;
  to.presence_reads += s.presence_reads;
  to.deflated_publishes += s.deflated_publishes;
  to.held_publishes += s.held_publishes;
  to.deflated_deliveries += s.deflated_deliveries;
  to.refilled += s.refilled;
  to.refill_held += s.refill_held;
  to.rooms_lost += s.rooms_lost;
  to.redirects += s.redirects;
}

}  // namespace

// Which topology connection a CLUSTER SHARDS was sent on: freed by the callback.
struct topology_cookie {
  redis_cluster_broker* self;
  std::uint64_t generation;
};

redis_cluster_broker::redis_cluster_broker(asio::io_context& io, redis_cluster_options options, deliver_fn deliver,
                                           std::shared_ptr<spdlog::logger> log)
    : io_(io),
      options_(std::move(options)),
      deliver_(std::move(deliver)),
      log_(std::move(log)),
      channels_(options_.shard.channel_prefix, true),
      candidates_(options_.seeds),
      tick_timer_(io) {
  if (options_.seeds.empty()) throw std::invalid_argument("--redis-cluster: no seed node");
  if (options_.shard.channel_prefix.find_first_of("{}") != std::string::npos)
    throw std::invalid_argument("--channel-prefix: no '{' or '}' with --redis-cluster (rooms carry the hash tag)");
  options_.shard.sharded = true;
  options_.shard.publish_ns = &publish_ns_;
  // Both run inside a shard broker's hiredis callback: they only record
  // and ask for a refresh, they never destroy a broker.
  options_.shard.on_room_lost = [this](std::string_view room) { on_room_lost(room); };
  options_.shard.on_redirect = [this](std::string_view) { want_refresh(); };
  options_.shard.republish = [this](std::string_view room, std::string_view payload, publish_options& again) {
    return republish(room, payload, again);
  };
}

redis_cluster_broker::~redis_cluster_broker() { stop(); }

void redis_cluster_broker::start() {
  stopped_ = false;
  connect_topology();
  tick();
}

void redis_cluster_broker::stop() {
  if (stopped_) return;
  stopped_ = true;
  tick_timer_.cancel();
  topology_.reset();
  for (auto& [address, s] : shards_) s.broker->stop();
  for (waiting_publish& w : waiting_) {
    ++waiting_dropped_;
    if (w.options.done) w.options.done(publish_receipt{false, 0, "the worker stopped before the cluster answered"});
  }
  if (!waiting_.empty()) log_->warn("redis cluster: {} publishes never reached a shard (no slot map)", waiting_.size());
  waiting_.clear();
  alive_.reset();
}

// ------------------------------------------------------------- slot map

void redis_cluster_broker::want_refresh() {
  refresh_wanted_ = true;
  // At most one read per refresh_retry: while a cluster converges, every
  // redirection would otherwise ask again at once.
  if (refresh_sent_ || refresh_posted_ || std::chrono::steady_clock::now() - last_refresh_ < options_.refresh_retry)
    return;
  refresh_posted_ = true;
  asio::post(io_, [this, alive = std::weak_ptr<int>(alive_)] {
    if (alive.expired()) return;
    refresh_posted_ = false;
    if (!refresh_sent_) refresh();
  });
}

void redis_cluster_broker::tick() {
  if (stopped_) return;
  const auto now = std::chrono::steady_clock::now();
  const bool broken = degraded();
  if (!broken) {
    degraded_since_.reset();
    node_changes_logged_ = false;
  } else if (!degraded_since_) {
    degraded_since_ = now;
  }
  if (refresh_sent_ && topology_ && topology_->failures_since_ready() > 0) {
    // The node refuses connections, or dropped the one the read was on (a
    // dead primary during a failover, a seed that is gone): the next node
    // in turn, at this tick's pace, rather than after topology_timeout.
    leave_topology_node("cannot be reached for the slot map");
  } else if (refresh_sent_ && now - refresh_started_ > options_.topology_timeout) {
    log_->warn("redis cluster: {} did not answer CLUSTER SHARDS within {} ms: asking another node",
               candidates_[candidate_].describe(), options_.topology_timeout.count());
    next_topology_node();
  } else if (!refresh_sent_ && degraded_since_ && now - *degraded_since_ > options_.topology_timeout) {
    // Reading this node again and again gives the same map (a node cut off
    // from the majority still names the primary the others replaced, or a
    // failed shard they have taken over); during a failover every node
    // says the same, and moving on costs one connection per timeout.
    leave_topology_node("gave slot maps that left a shard down or silent for the topology timeout");
  } else if (!refresh_sent_ && (refresh_wanted_ || broken || now - last_refresh_ >= options_.refresh_interval)) {
    refresh();
  }
  tick_timer_.expires_after(options_.refresh_retry);
  tick_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) tick();
  });
}

void redis_cluster_broker::refresh() {
  refresh_sent_ = true;
  refresh_started_ = std::chrono::steady_clock::now();
  if (topology_ && topology_->ready()) send_cluster_shards();  // else on_ready sends it
}

void redis_cluster_broker::send_cluster_shards() {
  auto* ck = new topology_cookie{this, topology_generation_};
  if (redisAsyncCommand(topology_->context(), shards_reply_cb, ck, "CLUSTER SHARDS") != REDIS_OK) {
    delete ck;
    topology_->abort("hiredis refused CLUSTER SHARDS");
  }
}

void redis_cluster_broker::shards_reply_cb(redisAsyncContext*, void* reply, void* privdata) {
  const std::unique_ptr<topology_cookie> ck(static_cast<topology_cookie*>(privdata));
  // Null: the connection went away (tick() moves on); another generation:
  // an answer from a node we already left.
  if (reply == nullptr || ck->generation != ck->self->topology_generation_) return;
  ck->self->on_shards_reply(static_cast<const redisReply*>(reply));
}

void redis_cluster_broker::on_shards_reply(const redisReply* r) {
  refresh_sent_ = false;
  last_refresh_ = std::chrono::steady_clock::now();
  ++refreshes_;
  slot_map_reply parsed = r->type == REDIS_REPLY_ERROR ? slot_map_reply{std::nullopt, std::string(r->str, r->len)}
                                                       : parse_cluster_shards(*r);
  if (!parsed.map) {
    log_->error("redis cluster: {} gave no slot map: {}", candidates_[candidate_].describe(), parsed.error);
    return next_topology_node();
  }
  refresh_wanted_ = false;
  apply(std::move(*parsed.map));
  // One node's view can give slots to nobody while the others map them (a
  // node that lost a slot to redis-server 7.0's bug, docs/DEPLOY.md, or a
  // new one not yet told): asking it again would return the same hole for
  // good, so the next read, at the usual pace, asks another node. Not for
  // slots of a shard without a healthy primary: every node says so until
  // the failover ends, and the next node in turn may be the dead primary.
  if (map_->unclaimed_slots() > 0) next_topology_node(next_read::at_next_tick);
}

void redis_cluster_broker::leave_topology_node(std::string_view why) {
  const redis_endpoint left = candidates_[candidate_];
  next_topology_node(next_read::at_next_tick);
  if (address_of(candidates_[candidate_]) == address_of(left)) return;
  // A shard down for good (no replica left) keeps the turn going every
  // topology_timeout: said once per outage, then at debug level.
  log_->log(node_changes_logged_ ? spdlog::level::debug : spdlog::level::warn, "redis cluster: {} {}: asking {}",
            left.describe(), why, candidates_[candidate_].describe());
  node_changes_logged_ = true;
}

void redis_cluster_broker::next_topology_node(next_read when) {
  refresh_sent_ = false;
  refresh_wanted_ = true;
  degraded_since_.reset();  // the next node's maps get their own time
  // The seeds, then every node the last map named (replicas too: after a
  // failover they are the ones that answer).
  std::vector<redis_endpoint> next = options_.seeds;
  if (map_)
    for (const cluster_shard& s : map_->shards()) {
      next.push_back(endpoint_of(s.primary));
      for (const cluster_node& n : s.replicas) next.push_back(endpoint_of(n));
    }
  const std::string current = address_of(candidates_[candidate_]);
  candidates_.clear();
  for (redis_endpoint& e : next)
    if (std::none_of(candidates_.begin(), candidates_.end(),
                     [&](const redis_endpoint& c) { return address_of(c) == address_of(e); }))
      candidates_.push_back(std::move(e));
  const auto at = std::find_if(candidates_.begin(), candidates_.end(),
                               [&](const redis_endpoint& c) { return address_of(c) == current; });
  candidate_ =
      at == candidates_.end() ? 0 : (static_cast<std::size_t>(at - candidates_.begin()) + 1) % candidates_.size();
  // The only node there is: read it again on the connection we have.
  if (when == next_read::at_next_tick && address_of(candidates_[candidate_]) == current) return;
  ++topology_generation_;
  // This may run inside the old connection's callback: replaced later.
  asio::post(io_, [this, when, alive = std::weak_ptr<int>(alive_)] {
    if (alive.expired() || stopped_) return;
    connect_topology(when);
  });
}

void redis_cluster_broker::connect_topology(next_read when) {
  redis_connection::listener& me = *this;
  topology_ = std::make_unique<redis_connection>(io_, candidates_[candidate_], "topology", options_.shard.connection,
                                                 me, log_, std::random_device{}());
  topology_->start();
  if (when == next_read::now) refresh();  // else tick() asks (refresh_wanted_)
}

void redis_cluster_broker::on_ready(redis_connection&) {
  if (refresh_sent_) send_cluster_shards();
}

void redis_cluster_broker::on_down(redis_connection&, std::string_view) {
  // Pending CLUSTER SHARDS callbacks got null replies: tick() asks another
  // node (the connection's failures_since_ready() says it is gone).
}

bool redis_cluster_broker::degraded() const {
  if (!map_ || !map_->complete()) return true;
  for (const auto& [room, p] : rooms_)
    if (p.at.empty()) return true;
  // A shard down, or one that stopped answering (a partition: its
  // replica may have taken over without us hearing of it).
  const auto now = std::chrono::steady_clock::now();
  return std::any_of(shards_.begin(), shards_.end(), [&](const auto& s) {
    return !s.second.broker->up() || s.second.broker->unanswered_for(now) > options_.refresh_retry * 4;
  });
}

void redis_cluster_broker::apply(slot_map map) {
  // Logged when the picture changes, not on every read while it is wrong.
  const bool changed =
      !map_ || map_->assigned_slots() != map.assigned_slots() || map_->shards().size() != map.shards().size();
  map_ = std::move(map);
  for (const cluster_shard& s : map_->shards()) shard_at(s.primary);
  for (auto& [room, p] : rooms_) place(room, p);
  for (auto it = shards_.begin(); it != shards_.end();) {
    const bool primary = std::any_of(map_->shards().begin(), map_->shards().end(), [&](const cluster_shard& s) {
      return address_of(endpoint_of(s.primary)) == it->first;
    });
    it = primary ? std::next(it) : (retire(it), shards_.erase(it));
  }
  if (changed)
    log_->log(map_->complete() ? spdlog::level::info : spdlog::level::warn,
              "redis cluster: {} primaries own {} of {} slots", map_->shards().size(), map_->assigned_slots(),
              cluster_slot_count);
  send_waiting();
}

// ------------------------------------------------------------ placement

redis_endpoint redis_cluster_broker::endpoint_of(const cluster_node& node) const {
  redis_endpoint e = options_.seeds.front();  // user, password
  e.unix_path.clear();
  e.db = 0;
  e.host = node.host.empty() ? candidates_[candidate_].host : node.host;  // "": the node that answered
  e.port = node.port;
  return e;
}

std::string redis_cluster_broker::owner_address(std::string_view room) const {
  if (!map_) return {};
  const cluster_shard* s = map_->owner_of_key(channels_.of(room));
  return s != nullptr ? address_of(endpoint_of(s->primary)) : std::string();
}

redis_cluster_broker::shard& redis_cluster_broker::shard_at(const cluster_node& primary) {
  const redis_endpoint e = endpoint_of(primary);
  const std::string address = address_of(e);
  if (const auto it = shards_.find(address); it != shards_.end()) return it->second;
  auto deliver = [this](std::string_view room, std::string_view payload, room_position at, deflated_segment pre) {
    gaps_ += tops_.note(room, at);
    if (deliver_) deliver_(room, payload, at, pre);
  };
  shard s{address, std::make_unique<redis_broker>(io_, e, options_.shard, deliver, log_)};
  log_->info("redis cluster: connecting to the primary at {}", address);
  s.broker->start();
  return shards_.emplace(address, std::move(s)).first->second;
}

redis_broker* redis_cluster_broker::broker_at(const std::string& address) const {
  const auto it = shards_.find(address);
  return it != shards_.end() ? it->second.broker.get() : nullptr;
}

redis_broker* redis_cluster_broker::home_of(std::string_view room) {
  if (const auto it = rooms_.find(room); it != rooms_.end()) return broker_at(it->second.at);
  return broker_at(owner_address(room));
}

const redis_broker* redis_cluster_broker::home(std::string_view room) const {
  const auto it = rooms_.find(room);
  return it != rooms_.end() ? broker_at(it->second.at) : nullptr;
}

void redis_cluster_broker::place(const std::string& room, placement& p) {
  const std::string owner = owner_address(room);
  if (owner == p.at) return;
  const presence_shares::users* share = presence_.of(room);
  if (redis_broker* old = broker_at(p.at); old != nullptr) {
    remember_receivers(room, p, *old);
    old->unsubscribe(room);
    if (share != nullptr)
      for (const auto& [user, n] : *share) old->set_presence(room, user, 0);
    ++moved_;
  }
  p.at = owner;
  redis_broker* now = broker_at(owner);
  if (now == nullptr) return;  // an unowned slot: degraded() asks again
  now->expect_receivers(room, p.receivers);
  now->subscribe(room);
  if (share != nullptr)
    for (const auto& [user, n] : *share) now->set_presence(room, user, n);
}

void redis_cluster_broker::retire(std::unordered_map<std::string, shard>::iterator it) {
  redis_broker& b = *it->second.broker;
  log_->info("redis cluster: {} is no longer a primary: closing its connections", it->first);
  b.hand_over_unsent();  // sent again to the new owners by apply()
  b.stop();              // counts what it still held as dropped
  add(retired_, b.stats());
  for (auto& [room, p] : rooms_)
    if (p.at == it->first) {
      remember_receivers(room, p, b);
      p.at.clear();
    }
}

void redis_cluster_broker::remember_receivers(const std::string& room, placement& p, const redis_broker& from) {
  if (const long long n = from.receivers(room); n >= 0) p.receivers = n;
}

void redis_cluster_broker::on_room_lost(std::string_view room) {
  const auto it = rooms_.find(room);
  if (it == rooms_.end()) return;
  // The shard has already let the room go; its presence share goes too.
  if (redis_broker* old = broker_at(it->second.at); old != nullptr) {
    remember_receivers(it->first, it->second, *old);
    if (const presence_shares::users* share = presence_.of(room); share != nullptr)
      for (const auto& [user, n] : *share) old->set_presence(room, user, 0);
  }
  it->second.at.clear();
  ++moved_;
  want_refresh();
}

bool redis_cluster_broker::republish(std::string_view room, std::string_view payload, publish_options& again) {
  // The room's later publishes wait behind it, so its order holds.
  held_.emplace(room);
  ++republished_;
  wait(room, payload, std::move(again));
  return true;
}

void redis_cluster_broker::send_waiting() {
  held_.clear();
  std::deque<waiting_publish> still;
  while (!waiting_.empty()) {
    waiting_publish w = std::move(waiting_.front());
    waiting_.pop_front();
    if (redis_broker* b = home_of(w.room); b != nullptr)
      b->publish(w.room, w.payload, std::move(w.options));
    else
      still.push_back(std::move(w));
  }
  waiting_ = std::move(still);
}

// ------------------------------------------------------------------ broker

void redis_cluster_broker::subscribe(std::string_view room) {
  const auto [it, added] = rooms_.try_emplace(std::string(room));
  if (added && map_) place(it->first, it->second);
}

void redis_cluster_broker::unsubscribe(std::string_view room) {
  const auto it = rooms_.find(room);
  if (it == rooms_.end()) return;
  if (redis_broker* b = broker_at(it->second.at); b != nullptr) b->unsubscribe(room);
  tops_.forget(room);
  rooms_.erase(it);
}

void redis_cluster_broker::publish(std::string_view room, std::string_view payload) { publish(room, payload, {}); }

void redis_cluster_broker::publish(std::string_view room, std::string_view payload, publish_options options) {
  if (redis_broker* b = home_of(room); b != nullptr && !held_.contains(room))
    return b->publish(room, payload, std::move(options));
  wait(room, payload, std::move(options));
}

void redis_cluster_broker::wait(std::string_view room, std::string_view payload, publish_options options) {
  // No shard yet, or the room's last publish was refused: kept (bounded
  // like an outbox) until the next slot map.
  if (waiting_.size() >= std::max<std::size_t>(options_.shard.buffer, 1)) {
    waiting_publish& oldest = waiting_.front();
    if (waiting_dropped_++ % 1000 == 0)
      log_->warn("redis cluster: no shard for room {} yet and {} publishes waiting: dropping the oldest", room,
                 waiting_.size());
    if (oldest.options.done)
      oldest.options.done(publish_receipt{false, 0, "dropped: no Redis Cluster shard for the room yet"});
    waiting_.pop_front();
  }
  waiting_.push_back({std::string(room), std::string(payload), std::move(options)});
  want_refresh();
}

void redis_cluster_broker::set_presence(std::string_view room, std::string_view user, std::uint32_t connections) {
  presence_.set(room, user, connections);
  if (redis_broker* b = home_of(room); b != nullptr) b->set_presence(room, user, connections);
}

void redis_cluster_broker::presence(std::string_view room, std::function<void(presence_result)> done) {
  if (redis_broker* b = home_of(room); b != nullptr) return b->presence(room, std::move(done));
  done(presence_result{false, {}, "no Redis Cluster shard for the room yet (the slot map is being read)"});
}

void redis_cluster_broker::history(std::string_view room, const std::optional<history_since>& since,
                                   std::function<void(room_history)> done) {
  if (options_.shard.history_size == 0) return done(room_history{});
  const auto it = rooms_.find(room);
  if (it == rooms_.end())
    return done(room_history{room_history::outcome::unavailable, {}, 0, {}, "subscribe to the room first"});
  redis_broker* b = broker_at(it->second.at);
  if (b == nullptr)
    return done(room_history{
        room_history::outcome::unavailable, {}, 0, {}, "the room's Redis Cluster shard is changing: ask again"});
  b->history(room, since, std::move(done));
}

// ------------------------------------------------------------------ report

redis_broker_stats redis_cluster_broker::stats() const {
  redis_broker_stats s = retired_;
  for (const auto& [address, sh] : shards_) add(s, sh.broker->stats());
  s.dropped += waiting_dropped_;
  s.gaps = gaps_;
  return s;
}

broker_report redis_cluster_broker::report() const {
  const redis_broker_stats s = stats();
  broker_report r = report_of(s);
  r.kind = "redis-cluster";
  r.up = map_ && map_->complete() && !shards_.empty() &&
         std::all_of(shards_.begin(), shards_.end(), [](const auto& sh) { return sh.second.broker->up(); });
  r.history_messages = tops_.kept(options_.shard.history_size);
  r.presence_connections = presence_.connections();
  r.rooms = rooms_.size();
  r.outbox = waiting_.size();
  for (const auto& [address, sh] : shards_) {
    const broker_report b = sh.broker->report();
    r.outbox += b.outbox;
    r.subscriptions += b.subscriptions;
  }
  r.cluster_shards = shards_.size();
  r.cluster_map_refreshes = refreshes_;
  r.cluster_slots_unmapped = map_ ? cluster_slot_count - map_->assigned_slots() : cluster_slot_count;
  r.cluster_redirects = s.redirects;
  r.cluster_rooms_moved = moved_;
  r.publish_ns = &publish_ns_;
  return r;
}

}  // namespace fg::worker
