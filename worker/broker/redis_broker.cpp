#include "worker/broker/redis_broker.hpp"

#include <algorithm>
#include <random>
#include <utility>

#include <unistd.h>

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <boost/asio/post.hpp>

#include "worker/broker/redis_envelope.hpp"

namespace fg::worker {

namespace asio = boost::asio;

namespace {

// Origins remembered for duplicate detection. Past this, the table is
// cleared (workers come and go); forgetting an origin can at worst let one
// copy sent again after a reconnect through.
constexpr std::size_t max_origins = 4096;
// Rooms whose last subscriber count is remembered. Past this, the table is
// cleared: a room forgotten just before an outage falls back to the settle time.
constexpr std::size_t max_counted_rooms = 65536;
// Channels asked about in one PUBSUB NUMSUB while the flush waits.
constexpr std::size_t max_gate_rooms = 1024;

std::uint64_t random_origin() {
  std::random_device rd;
  const std::uint64_t hi = rd(), lo = rd();
  const std::uint64_t v = (hi << 32) ^ lo ^ (static_cast<std::uint64_t>(::getpid()) << 16);
  return v != 0 ? v : 1;
}

std::string_view str_of(const redisReply* r) { return {r->str, r->len}; }

}  // namespace

// Which gate a PUBSUB NUMSUB belongs to: a reply for an earlier one is ignored.
struct redis_broker::numsub_cookie {
  redis_broker* self;
  std::uint64_t generation;
};

namespace {}  // namespace

std::string_view redis_broker::record::payload() const {
  return std::string_view(wire).substr(redis_envelope_header_bytes);
}

redis_broker::redis_broker(asio::io_context& io, const redis_endpoint& endpoint, redis_broker_options options,
                           deliver_fn deliver, std::shared_ptr<spdlog::logger> log)
    : io_(io),
      options_(std::move(options)),
      deliver_(std::move(deliver)),
      log_(std::move(log)),
      origin_(random_origin()),
      room_prefix_(options_.channel_prefix + "room:"),
      pub_(io, endpoint, "publish", options_.connection, *this, log_, origin_),
      sub_(io, endpoint, "subscribe", options_.connection, *this, log_, origin_ ^ 0x9e3779b97f4a7c15ull),
      gate_timer_(io) {
  options_.buffer = std::max<std::size_t>(options_.buffer, 1);
}

redis_broker::~redis_broker() { stop(); }

void redis_broker::start() {
  pub_.start();
  sub_.start();
}

void redis_broker::stop() {
  gate_timer_.cancel();
  gating_ = false;
  // Null replies of the pending commands come back during these: ignored.
  pub_.stop();
  sub_.stop();
  pub_flowing_ = false;
  // Written ones were probably published; the others never will be.
  if (const std::size_t unsent = outbox_.size() - in_flight_; unsent > 0) {
    stats_.dropped += unsent;
    log_->warn("redis: {} buffered publishes never reached Redis (stopped during an outage)", unsent);
  }
  outbox_.clear();
  in_flight_ = 0;
  alive_.reset();
}

redis_broker_stats redis_broker::stats() const {
  redis_broker_stats s = stats_;
  s.reconnects = pub_.reconnects() + sub_.reconnects();
  return s;
}

broker_report redis_broker::report() const {
  const redis_broker_stats s = stats();
  broker_report r;
  r.kind = "redis";
  r.up = pub_.ready() && sub_.ready();
  r.publishes = s.published;
  r.deliveries = s.delivered;
  r.buffered = s.buffered;
  r.dropped = s.dropped;
  r.missed = s.missed;
  r.outbox = outbox_.size();
  r.reconnects = s.reconnects;
  r.resubscribes = s.resubscribes;
  r.duplicates = s.duplicates;
  r.rooms = wanted_.size();
  r.subscriptions = sub_.ready() ? announced_.size() : 0;
  r.publish_ns = &publish_ns_;
  return r;
}

std::string redis_broker::channel_of(std::string_view room) const {
  std::string ch;
  ch.reserve(room_prefix_.size() + room.size());
  ch.append(room_prefix_).append(room);
  return ch;
}

bool redis_broker::confirmed(std::string_view room) const {
  return sub_.ready() && announced_.contains(room) && !sub_pending_.contains(room);
}

// ------------------------------------------------------------ subscriptions

void redis_broker::subscribe(std::string_view room) {
  if (wanted_.emplace(room).second) touch(room);
}

void redis_broker::unsubscribe(std::string_view room) {
  const auto it = wanted_.find(room);
  if (it == wanted_.end()) return;
  wanted_.erase(it);
  touch(room);
}

void redis_broker::touch(std::string_view room) {
  touched_.emplace_back(room);
  if (flush_posted_) return;
  flush_posted_ = true;
  asio::post(io_, [this, alive = std::weak_ptr<int>(alive_)] {
    if (!alive.expired()) flush_subscriptions();
  });
}

void redis_broker::flush_subscriptions() {
  flush_posted_ = false;
  if (touched_.empty()) return;
  if (!sub_.ready()) {
    touched_.clear();  // on_ready subscribes the whole wanted set
    return;
  }
  std::vector<std::string> add, remove;
  for (std::string& room : touched_) {
    const bool want = wanted_.contains(room);
    const bool told = announced_.contains(room);
    if (want && !told) {
      announced_.insert(room);
      add.push_back(std::move(room));
    } else if (!want && told) {
      announced_.erase(room);
      remove.push_back(std::move(room));
    }
  }
  touched_.clear();
  if (send_subscription("SUBSCRIBE", add)) stats_.subscribe_commands += add.empty() ? 0 : 1;
  if (send_subscription("UNSUBSCRIBE", remove)) stats_.unsubscribe_commands += remove.empty() ? 0 : 1;
}

bool redis_broker::send_subscription(const char* command, const std::vector<std::string>& rooms) {
  if (rooms.empty()) return true;
  redisAsyncContext* c = sub_.context();
  if (c == nullptr) return false;
  std::vector<std::string> channels;
  channels.reserve(rooms.size());
  std::vector<const char*> argv{command};
  std::vector<std::size_t> len{std::string_view(command).size()};
  for (const auto& room : rooms) {
    channels.push_back(channel_of(room));
    argv.push_back(channels.back().data());
    len.push_back(channels.back().size());
  }
  // UNSUBSCRIBE registers no callback: its replies reach the channel's
  // SUBSCRIBE callback (hiredis), which is this same function.
  if (redisAsyncCommandArgv(c, on_subscription_reply, this, static_cast<int>(argv.size()), argv.data(), len.data()) !=
      REDIS_OK) {
    // Our view and hiredis's disagree: start over on a new connection.
    sub_.abort(std::string("hiredis refused ") + command);
    return false;
  }
  for (const auto& room : rooms) ++sub_pending_[room];
  return true;
}

void redis_broker::on_subscription_reply(redisAsyncContext*, void* reply, void* privdata) {
  auto* self = static_cast<redis_broker*>(privdata);
  const auto* r = static_cast<const redisReply*>(reply);
  // Null: the connection is going away. hiredis may also hand this callback
  // a reply of another kind (it reuses the last callback): check everything.
  if (r == nullptr || r->type != REDIS_REPLY_ARRAY || r->elements < 3) return;
  const redisReply* kind = r->element[0];
  const redisReply* channel = r->element[1];
  if (kind->type != REDIS_REPLY_STRING || channel->type != REDIS_REPLY_STRING) return;
  const std::string_view k = str_of(kind);
  if (k == "message") {
    if (r->element[2]->type == REDIS_REPLY_STRING) self->on_channel_message(str_of(channel), str_of(r->element[2]));
    return;
  }
  if (k != "subscribe" && k != "unsubscribe") return;
  std::string_view ch = str_of(channel);
  if (!ch.starts_with(self->room_prefix_)) return;
  const std::string_view room = ch.substr(self->room_prefix_.size());
  if (const auto it = self->sub_pending_.find(room); it != self->sub_pending_.end() && --it->second == 0)
    self->sub_pending_.erase(it);
  if (k == "subscribe" && self->resub_pending_ > 0 && --self->resub_pending_ == 0) {
    self->log_->info("redis: resubscribed to {} rooms", self->announced_.size());
    self->try_start_flow();
  }
}

// --------------------------------------------------------------- connections

void redis_broker::on_ready(redis_connection& c) {
  if (&c == &sub_) {
    announced_.clear();
    sub_pending_.clear();
    touched_.clear();
    resub_pending_ = 0;
    std::vector<std::string> rooms(wanted_.begin(), wanted_.end());
    if (!rooms.empty() && send_subscription("SUBSCRIBE", rooms)) {
      ++stats_.subscribe_commands;
      announced_.insert(rooms.begin(), rooms.end());
      resub_pending_ = rooms.size();
      if (sub_.reconnects() > 0) stats_.resubscribes += rooms.size();
    }
    try_start_flow();
    return;
  }
  // The publish connection: flush once the earlier subscribers are back.
  // Rooms with no remembered count wait the settle time instead: the other
  // workers that lost Redis with us come back within about one backoff
  // step of each other.
  begin_gate(std::min(2 * c.last_wait(), options_.connection.backoff_max));
}

void redis_broker::on_down(redis_connection& c, std::string_view) {
  if (&c == &sub_) {
    announced_.clear();
    sub_pending_.clear();
    resub_pending_ = 0;
  } else {
    pub_flowing_ = false;
    gating_ = false;
    numsub_pending_ = false;
    ++gate_generation_;
    gate_timer_.cancel();
    // Sent but unanswered: maybe published, maybe not. Sent again after the
    // reconnect; receivers skip the copies they already have (seq).
    in_flight_ = 0;
  }
  // Whatever was owed locally can no longer be counted on to come back.
  rescue_owed();
  try_start_flow();
}

bool redis_broker::sub_settled() const noexcept { return !sub_.ready() || resub_pending_ == 0; }

// ------------------------------------------------------- the flush's gate

void redis_broker::begin_gate(std::chrono::milliseconds settle) {
  const auto now = std::chrono::steady_clock::now();
  gating_ = true;
  numsub_pending_ = false;
  ++gate_generation_;
  settle_until_ = now + settle;
  gate_deadline_ = now + std::max(options_.resubscribe_wait, settle);
  check_gate();
}

void redis_broker::check_gate() {
  if (!gating_ || numsub_pending_ || !pub_.ready()) return;
  if (outbox_.size() == in_flight_) return open_gate();  // nothing buffered: nobody can miss anything
  const auto now = std::chrono::steady_clock::now();
  if (now >= gate_deadline_) {
    log_->warn("redis: earlier subscribers not all back after {} ms: sending {} buffered publishes anyway",
               options_.resubscribe_wait.count(), outbox_.size() - in_flight_);
    return open_gate();
  }
  // Our own resubscription first: until it is acknowledged we cannot count ourselves.
  if (!sub_settled()) return poll_gate();

  // The distinct buffered rooms with a count from before the outage.
  std::vector<std::string> channels;
  bool uncounted = false;
  room_set seen;
  for (std::size_t i = in_flight_; i < outbox_.size() && channels.size() < max_gate_rooms; ++i) {
    const record& r = *outbox_[i];
    if (!seen.insert(r.room).second) continue;
    if (receivers_.contains(r.room))
      channels.push_back(channel_of(r.room));
    else
      uncounted = true;
  }
  gate_uncounted_ = uncounted;
  if (channels.empty()) {
    if (uncounted && now < settle_until_) return poll_gate();
    return open_gate();
  }
  std::vector<const char*> argv{"PUBSUB", "NUMSUB"};
  std::vector<std::size_t> len{6, 6};
  for (const auto& ch : channels) {
    argv.push_back(ch.data());
    len.push_back(ch.size());
  }
  // Freed by on_numsub_reply, which hiredis always calls (with a null reply
  // when the connection goes away first).
  auto* ck = new numsub_cookie{this, gate_generation_};
  if (redisAsyncCommandArgv(pub_.context(), on_numsub_reply, ck, static_cast<int>(argv.size()), argv.data(),
                            len.data()) != REDIS_OK) {
    delete ck;
    pub_.abort("hiredis refused PUBSUB NUMSUB");
    return;
  }
  numsub_pending_ = true;
}

void redis_broker::on_numsub_reply(redisAsyncContext*, void* reply, void* privdata) {
  const std::unique_ptr<numsub_cookie> ck(static_cast<numsub_cookie*>(privdata));
  redis_broker* self = ck->self;
  const auto* r = static_cast<const redisReply*>(reply);
  if (r == nullptr || ck->generation != self->gate_generation_) return;  // gone, or a gate ago
  self->numsub_pending_ = false;
  bool back = r->type == REDIS_REPLY_ARRAY;
  // [channel, count, channel, count, ...]
  for (std::size_t i = 0; back && i + 1 < r->elements; i += 2) {
    const redisReply* ch = r->element[i];
    const redisReply* n = r->element[i + 1];
    if (ch->type != REDIS_REPLY_STRING || n->type != REDIS_REPLY_INTEGER) continue;
    const std::string_view channel = str_of(ch);
    if (!channel.starts_with(self->room_prefix_)) continue;
    const auto it = self->receivers_.find(channel.substr(self->room_prefix_.size()));
    if (it != self->receivers_.end() && n->integer < it->second) back = false;
  }
  if (back && (!self->gate_uncounted_ || std::chrono::steady_clock::now() >= self->settle_until_))
    return self->open_gate();
  self->poll_gate();
}

void redis_broker::poll_gate() {
  gate_timer_.expires_after(options_.resubscribe_poll);
  gate_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) check_gate();
  });
}

void redis_broker::open_gate() {
  gating_ = false;
  gate_timer_.cancel();
  // What the buffered publishes should reach: the subscribers before the outage.
  for (std::size_t i = in_flight_; i < outbox_.size(); ++i) {
    record& r = *outbox_[i];
    const auto it = receivers_.find(r.room);
    r.expect = it == receivers_.end() ? -1 : it->second;
  }
  try_start_flow();
}

void redis_broker::note_receivers(const std::string& room, long long n) {
  const auto it = receivers_.find(room);
  if (it != receivers_.end()) {
    it->second = n;
    return;
  }
  if (receivers_.size() >= max_counted_rooms) receivers_.clear();
  receivers_.emplace(room, n);
}

void redis_broker::try_start_flow() {
  if (pub_flowing_ || gating_ || !pub_.ready() || !sub_settled()) return;
  pub_flowing_ = true;
  if (!outbox_.empty()) log_->info("redis: sending {} buffered publishes", outbox_.size());
  send_outbox();
}

// ---------------------------------------------------------------- publishing

void redis_broker::publish(std::string_view room, std::string_view payload) {
  ++stats_.published;
  // Subscriptions of this turn first (their SUBSCRIBE leaves first).
  if (flush_posted_) flush_subscriptions();
  auto r = std::make_shared<record>();
  r->seq = ++seq_;
  r->room = std::string(room);
  r->wire = encode_redis_envelope(origin_, r->seq, payload);
  if (wanted_.contains(room)) {
    if (pub_flowing_ && confirmed(room)) {
      r->owed_local = true;
      echo_wait_.push_back(r);
    } else {
      deliver_locally(*r);
    }
  }
  if (!pub_flowing_) ++stats_.buffered;
  outbox_.push_back(std::move(r));
  enforce_bound();
  send_outbox();
}

void redis_broker::enforce_bound() {
  while (outbox_.size() > options_.buffer && in_flight_ < outbox_.size()) {
    // The oldest not yet written: the ones written may already be published.
    const auto at = outbox_.begin() + static_cast<std::ptrdiff_t>(in_flight_);
    record& r = **at;
    if (stats_.dropped++ == 0)
      log_->warn("redis: outbox full ({} publishes): dropping the oldest; other hosts miss them", options_.buffer);
    if (r.owed_local) deliver_locally(r);
    self_delivered_.erase(r.seq);  // it will never come back
    outbox_.erase(at);
  }
}

void redis_broker::send_outbox() {
  if (!pub_flowing_) return;
  redisAsyncContext* c = pub_.context();
  if (c == nullptr) return;
  while (in_flight_ < outbox_.size()) {
    record& r = *outbox_[in_flight_];
    r.written = std::chrono::steady_clock::now();
    const std::string channel = channel_of(r.room);
    const char* argv[3] = {"PUBLISH", channel.data(), r.wire.data()};
    const std::size_t len[3] = {7, channel.size(), r.wire.size()};
    if (redisAsyncCommandArgv(c, on_publish_reply, this, 3, argv, len) != REDIS_OK) {
      pub_.abort("hiredis refused PUBLISH");
      return;
    }
    ++in_flight_;
  }
}

void redis_broker::on_publish_reply(redisAsyncContext*, void* reply, void* privdata) {
  auto* self = static_cast<redis_broker*>(privdata);
  const auto* r = static_cast<const redisReply*>(reply);
  // Null: the connection is going away; on_down sends them again later.
  if (r == nullptr || self->in_flight_ == 0 || self->outbox_.empty()) return;
  record_ptr done = std::move(self->outbox_.front());
  self->outbox_.pop_front();
  --self->in_flight_;
  self->publish_ns_.observe(static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - done->written).count()));
  if (r->type == REDIS_REPLY_INTEGER) {
    // Fewer subscribers than before the outage: a peer is not back (or left).
    if (done->expect >= 0 && r->integer < done->expect) ++self->stats_.missed;
    self->note_receivers(done->room, r->integer);
  }
  if (r->type == REDIS_REPLY_ERROR) {
    // Refused for good (ACL, ...): other hosts will not get it.
    if (self->stats_.dropped++ % 1000 == 0)
      self->log_->warn("redis: PUBLISH to {} refused: {}", self->channel_of(done->room), str_of(r));
    if (done->owed_local) self->deliver_locally(*done);
  }
}

// ----------------------------------------------------------------- delivery

void redis_broker::deliver(std::string_view room, std::string_view payload) {
  ++stats_.delivered;
  if (deliver_) deliver_(room, payload);
}

void redis_broker::deliver_locally(record& r) {
  r.owed_local = false;
  self_delivered_.insert(r.seq);
  // Bounded: entries leave when their copy comes back, when a later copy
  // shows they never will, or when dropped; this catches any other path.
  while (self_delivered_.size() > 2 * options_.buffer + 1024) self_delivered_.erase(self_delivered_.begin());
  ++stats_.delivered_locally;
  deliver(r.room, r.payload());
}

void redis_broker::rescue_owed() {
  auto owed = std::move(echo_wait_);
  echo_wait_.clear();
  for (const auto& r : owed)
    if (r->owed_local) deliver_locally(*r);
}

void redis_broker::settle_echo(std::uint64_t seq) {
  // Our copies come back in seq order: one that is passed will not come.
  while (!echo_wait_.empty() && echo_wait_.front()->seq <= seq) {
    record_ptr r = std::move(echo_wait_.front());
    echo_wait_.pop_front();
    if (r->seq < seq && r->owed_local) deliver_locally(*r);
    r->owed_local = false;
  }
}

bool redis_broker::accept_seq(std::uint64_t origin, std::uint64_t seq) {
  auto it = last_seen_.find(origin);
  if (it == last_seen_.end()) {
    if (last_seen_.size() >= max_origins) last_seen_.clear();
    last_seen_.emplace(origin, seq);
    return true;
  }
  if (seq <= it->second) return false;
  it->second = seq;
  return true;
}

void redis_broker::on_channel_message(std::string_view channel, std::string_view data) {
  if (!channel.starts_with(room_prefix_)) return;
  const std::string_view room = channel.substr(room_prefix_.size());
  const auto env = parse_redis_envelope(data);
  if (!env) {
    if (!wanted_.contains(room)) return;
    ++stats_.foreign;
    deliver(room, data);
    return;
  }
  const bool ours = env->origin == origin_;
  if (ours) settle_echo(env->seq);
  if (!accept_seq(env->origin, env->seq)) {
    ++stats_.duplicates;
    return;
  }
  if (ours) {
    // Delivered locally earlier ones below this seq will never come back.
    self_delivered_.erase(self_delivered_.begin(), self_delivered_.lower_bound(env->seq));
    if (!self_delivered_.empty() && *self_delivered_.begin() == env->seq) {
      self_delivered_.erase(self_delivered_.begin());
      return;
    }
  }
  // An UNSUBSCRIBE may still be on its way.
  if (!wanted_.contains(room)) return;
  deliver(room, env->payload);
}

}  // namespace fg::worker
