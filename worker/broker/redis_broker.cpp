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

std::uint64_t random_origin() {
  std::random_device rd;
  const std::uint64_t hi = rd(), lo = rd();
  const std::uint64_t v = (hi << 32) ^ lo ^ (static_cast<std::uint64_t>(::getpid()) << 16);
  return v != 0 ? v : 1;
}

std::string_view str_of(const redisReply* r) { return {r->str, r->len}; }

// Seqs of ours delivered locally and remembered so their copies are
// skipped; entries normally leave sooner (publish_dedup).
std::size_t local_bound(std::size_t buffer) { return 2 * std::max<std::size_t>(buffer, 1) + 1024; }

}  // namespace

// Which gate a PUBSUB NUMSUB belongs to: a reply for an earlier one is ignored.
struct redis_broker::numsub_cookie {
  redis_broker* self;
  std::uint64_t generation;
};

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
      gate_timer_(io),
      outbox_(options_.buffer),
      dedup_(local_bound(options_.buffer)),
      mac_(options_.secret.empty() ? nullptr : std::make_unique<envelope_mac>(options_.secret)) {}

redis_broker::~redis_broker() { stop(); }

void redis_broker::start() {
  pub_.start();
  sub_.start();
}

void redis_broker::stop() {
  gate_timer_.cancel();
  gate_.cancel();
  // Null replies of the pending commands come back during these: ignored.
  pub_.stop();
  sub_.stop();
  pub_flowing_ = false;
  // Written ones were probably published; the others never will be.
  if (const std::size_t unsent = outbox_.clear(); unsent > 0) {
    stats_.dropped += unsent;
    log_->warn("redis: {} buffered publishes never reached Redis (stopped during an outage)", unsent);
  }
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
  r.foreign = s.foreign;
  r.rejected = s.rejected;
  r.rooms = subs_.wanted();
  r.subscriptions = sub_.ready() ? subs_.announced() : 0;
  r.publish_ns = &publish_ns_;
  return r;
}

std::string redis_broker::channel_of(std::string_view room) const {
  std::string ch;
  ch.reserve(room_prefix_.size() + room.size());
  ch.append(room_prefix_).append(room);
  return ch;
}

bool redis_broker::confirmed(std::string_view room) const { return sub_.ready() && subs_.confirmed(room); }

// ------------------------------------------------------- hiredis callbacks
// A null reply: the connection is going away (ignored; on_down follows).

void redis_broker::publish_reply_cb(redisAsyncContext*, void* reply, void* privdata) {
  if (reply != nullptr) static_cast<redis_broker*>(privdata)->on_publish_reply(*static_cast<const redisReply*>(reply));
}

void redis_broker::subscription_reply_cb(redisAsyncContext*, void* reply, void* privdata) {
  if (reply != nullptr)
    static_cast<redis_broker*>(privdata)->on_subscription_reply(*static_cast<const redisReply*>(reply));
}

void redis_broker::numsub_reply_cb(redisAsyncContext*, void* reply, void* privdata) {
  // hiredis calls this exactly once per NUMSUB: the cookie is freed here.
  const std::unique_ptr<numsub_cookie> ck(static_cast<numsub_cookie*>(privdata));
  if (reply != nullptr && ck->generation == ck->self->gate_.generation())
    ck->self->on_numsub_reply(*static_cast<const redisReply*>(reply));
}

// ------------------------------------------------------------ subscriptions

void redis_broker::subscribe(std::string_view room) {
  if (subs_.want(room)) post_flush();
}

void redis_broker::unsubscribe(std::string_view room) {
  if (!subs_.unwant(room)) return;
  dedup_.forget_room(room);
  post_flush();
}

void redis_broker::post_flush() {
  if (flush_posted_) return;
  flush_posted_ = true;
  asio::post(io_, [this, alive = std::weak_ptr<int>(alive_)] {
    if (!alive.expired()) flush_subscriptions();
  });
}

void redis_broker::flush_subscriptions() {
  flush_posted_ = false;
  if (!subs_.changed()) return;
  if (!sub_.ready()) {
    subs_.drop_changes();  // on_ready subscribes the whole wanted set
    return;
  }
  const subscription_set::changes c = subs_.take_changes();
  if (send_subscription("SUBSCRIBE", c.subscribe)) stats_.subscribe_commands += c.subscribe.empty() ? 0 : 1;
  if (send_subscription("UNSUBSCRIBE", c.unsubscribe)) stats_.unsubscribe_commands += c.unsubscribe.empty() ? 0 : 1;
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
  if (redisAsyncCommandArgv(c, subscription_reply_cb, this, static_cast<int>(argv.size()), argv.data(), len.data()) !=
      REDIS_OK) {
    // Our view and hiredis's disagree: start over on a new connection.
    sub_.abort(std::string("hiredis refused ") + command);
    return false;
  }
  subs_.sent(rooms);
  return true;
}

void redis_broker::on_subscription_reply(const redisReply& r) {
  // hiredis may hand this callback a reply of another kind (it reuses the
  // last callback): check everything.
  if (r.type != REDIS_REPLY_ARRAY || r.elements < 3) return;
  const redisReply* kind = r.element[0];
  const redisReply* channel = r.element[1];
  if (kind->type != REDIS_REPLY_STRING || channel->type != REDIS_REPLY_STRING) return;
  const std::string_view k = str_of(kind);
  if (k == "message") {
    if (r.element[2]->type == REDIS_REPLY_STRING) on_channel_message(str_of(channel), str_of(r.element[2]));
    return;
  }
  if (k != "subscribe" && k != "unsubscribe") return;
  const std::string_view ch = str_of(channel);
  if (!ch.starts_with(room_prefix_)) return;
  if (subs_.answered(ch.substr(room_prefix_.size()), k == "subscribe")) {
    log_->info("redis: resubscribed to {} rooms", subs_.announced());
    try_start_flow();
  }
}

bool redis_broker::sub_settled() const noexcept { return !sub_.ready() || subs_.resubscribed(); }

// --------------------------------------------------------------- connections

void redis_broker::on_ready(redis_connection& c) {
  if (&c == &sub_) {
    const std::vector<std::string> rooms = subs_.reconnect();
    if (!rooms.empty() && send_subscription("SUBSCRIBE", rooms)) {
      ++stats_.subscribe_commands;
      subs_.resubscribing(rooms);
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
    subs_.connection_lost();
  } else {
    pub_flowing_ = false;
    gate_.cancel();
    gate_timer_.cancel();
    // Sent but unanswered: maybe published, maybe not. Sent again after the
    // reconnect; receivers skip the copies they already have (seq).
    outbox_.connection_lost();
  }
  // Whatever was owed locally can no longer be counted on to come back.
  deliver_all_locally(dedup_.take_owed());
  try_start_flow();
}

// ------------------------------------------------------- the flush's gate

void redis_broker::begin_gate(std::chrono::milliseconds settle) {
  gate_.begin(std::chrono::steady_clock::now(), settle, options_.resubscribe_wait);
  check_gate();
}

void redis_broker::check_gate() {
  if (!pub_.ready()) return;
  const flush_gate::step s = gate_.check(std::chrono::steady_clock::now(), outbox_, sub_settled());
  switch (s.what) {
    case flush_gate::action::none: return;
    case flush_gate::action::open_late:
      log_->warn("redis: earlier subscribers not all back after {} ms: sending {} buffered publishes anyway",
                 options_.resubscribe_wait.count(), outbox_.unwritten());
      return open_gate();
    case flush_gate::action::open: return open_gate();
    case flush_gate::action::poll: return poll_gate();
    case flush_gate::action::ask: return ask_gate(s.rooms);
  }
}

void redis_broker::ask_gate(const std::vector<std::string>& rooms) {
  std::vector<std::string> channels;
  channels.reserve(rooms.size());
  std::vector<const char*> argv{"PUBSUB", "NUMSUB"};
  std::vector<std::size_t> len{6, 6};
  for (const auto& room : rooms) {
    channels.push_back(channel_of(room));
    argv.push_back(channels.back().data());
    len.push_back(channels.back().size());
  }
  // Freed by numsub_reply_cb, which hiredis always calls (with a null reply
  // when the connection goes away first).
  auto* ck = new numsub_cookie{this, gate_.generation()};
  if (redisAsyncCommandArgv(pub_.context(), numsub_reply_cb, ck, static_cast<int>(argv.size()), argv.data(),
                            len.data()) != REDIS_OK) {
    delete ck;
    pub_.abort("hiredis refused PUBSUB NUMSUB");
    return;
  }
  gate_.asked();
}

void redis_broker::on_numsub_reply(const redisReply& r) {
  bool back = r.type == REDIS_REPLY_ARRAY;
  // [channel, count, channel, count, ...]
  for (std::size_t i = 0; back && i + 1 < r.elements; i += 2) {
    const redisReply* ch = r.element[i];
    const redisReply* n = r.element[i + 1];
    if (ch->type != REDIS_REPLY_STRING || n->type != REDIS_REPLY_INTEGER) continue;
    const std::string_view channel = str_of(ch);
    if (!channel.starts_with(room_prefix_)) continue;
    if (!gate_.back(channel.substr(room_prefix_.size()), n->integer)) back = false;
  }
  if (gate_.answered(back, std::chrono::steady_clock::now()) == flush_gate::action::open) return open_gate();
  poll_gate();
}

void redis_broker::poll_gate() {
  gate_timer_.expires_after(options_.resubscribe_poll);
  gate_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) check_gate();
  });
}

void redis_broker::open_gate() {
  gate_timer_.cancel();
  gate_.open(outbox_);
  try_start_flow();
}

void redis_broker::try_start_flow() {
  if (pub_flowing_ || gate_.holding() || !pub_.ready() || !sub_settled()) return;
  pub_flowing_ = true;
  if (!outbox_.empty()) log_->info("redis: sending {} buffered publishes", outbox_.size());
  send_outbox();
}

// ---------------------------------------------------------------- publishing

void redis_broker::publish(std::string_view room, std::string_view payload) {
  ++stats_.published;
  // Subscriptions of this turn first (their SUBSCRIBE leaves first).
  if (flush_posted_) flush_subscriptions();
  auto r = std::make_shared<publish_record>();
  r->seq = ++seq_;
  r->room = std::string(room);
  r->wire = mac_ ? encode_signed_redis_envelope(*mac_, channel_of(room), origin_, r->seq, payload)
                 : encode_redis_envelope(origin_, r->seq, payload);
  r->header = r->wire.size() - payload.size();
  if (subs_.wants(room)) {
    if (pub_flowing_ && confirmed(room))
      dedup_.owe(r);
    else
      deliver_locally(*r);
  }
  if (!pub_flowing_) ++stats_.buffered;
  for (const publish_record_ptr& dropped : outbox_.push(std::move(r))) {
    if (stats_.dropped++ == 0)
      log_->warn("redis: outbox full ({} publishes): dropping the oldest; other hosts miss them", outbox_.bound());
    if (dropped->owed_local) deliver_locally(*dropped);
    dedup_.forget(dropped->seq);  // it will never come back
  }
  send_outbox();
}

void redis_broker::send_outbox() {
  if (!pub_flowing_) return;
  redisAsyncContext* c = pub_.context();
  if (c == nullptr) return;
  while (outbox_.has_unwritten()) {
    const publish_record& r = outbox_.next_unwritten();
    const auto now = std::chrono::steady_clock::now();
    const std::string channel = channel_of(r.room);
    const char* argv[3] = {"PUBLISH", channel.data(), r.wire.data()};
    const std::size_t len[3] = {7, channel.size(), r.wire.size()};
    if (redisAsyncCommandArgv(c, publish_reply_cb, this, 3, argv, len) != REDIS_OK) {
      pub_.abort("hiredis refused PUBLISH");
      return;
    }
    outbox_.mark_written(now);
  }
}

void redis_broker::on_publish_reply(const redisReply& r) {
  const publish_record_ptr done = outbox_.acknowledge();
  if (!done) return;
  publish_ns_.observe(static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - done->written).count()));
  if (r.type == REDIS_REPLY_INTEGER) {
    // Fewer subscribers than before the outage: a peer is not back (or left).
    if (done->expect >= 0 && r.integer < done->expect) ++stats_.missed;
    gate_.note_receivers(done->room, r.integer);
  }
  if (r.type == REDIS_REPLY_ERROR) {
    // Refused for good (ACL, ...): other hosts will not get it.
    if (stats_.dropped++ % 1000 == 0)
      log_->warn("redis: PUBLISH to {} refused: {}", channel_of(done->room), str_of(&r));
    if (done->owed_local) deliver_locally(*done);
  }
}

// ----------------------------------------------------------------- delivery

void redis_broker::deliver(std::string_view room, std::string_view payload) {
  ++stats_.delivered;
  if (deliver_) deliver_(room, payload);
}

void redis_broker::deliver_locally(publish_record& r) {
  dedup_.delivered_locally(r);
  ++stats_.delivered_locally;
  deliver(r.room, r.payload());
}

void redis_broker::deliver_all_locally(const std::vector<publish_record_ptr>& records) {
  for (const auto& r : records) deliver_locally(*r);
}

void redis_broker::reject(inbound_reject why, std::string_view room, std::size_t bytes) {
  // Logged on the first of each reason and every 1000th after: a flood
  // must not turn into a flood of log lines.
  if (stats_.rejected[static_cast<std::size_t>(why)]++ % 1000 == 0)
    log_->warn("redis: dropped a {} message of {} bytes in room {} ({} such so far)", inbound_reject_name(why), bytes,
               room, stats_.rejected[static_cast<std::size_t>(why)]);
}

void redis_broker::on_channel_message(std::string_view channel, std::string_view data) {
  if (!channel.starts_with(room_prefix_)) return;
  const std::string_view room = channel.substr(room_prefix_.size());
  // An UNSUBSCRIBE may still be on its way.
  if (!subs_.wants(room)) return;
  const std::uint64_t gateway_limit = options_.gateway_max_payload ? options_.gateway_max_payload() : 0;
  const inbound_policy policy{delivery_limit(options_.max_envelope, gateway_limit), options_.foreign, mac_.get(),
                              channel};
  const inbound_verdict v = check_inbound(data, policy);
  const bool ours = v.envelope && v.envelope->origin == origin_;
  // Our own origin with a seq we never published: someone who read our
  // origin off the channel made it up. Judged before settle(), which
  // trusts our seqs.
  if (ours && (v.envelope->seq == 0 || v.envelope->seq > seq_))
    return reject(inbound_reject::forged_seq, room, data.size());
  // Our copies come back in seq order: owed ones this one passed will not
  // come (even when this one is dropped below).
  if (ours) deliver_all_locally(dedup_.settle(v.envelope->seq));
  if (v.reject) return reject(*v.reject, room, data.size());
  if (!v.envelope) {
    ++stats_.foreign;
    deliver(room, v.payload);
    return;
  }
  if (!dedup_.accept(v.envelope->origin, room, v.envelope->seq, mac_ != nullptr)) {
    ++stats_.duplicates;
    return;
  }
  if (ours && dedup_.own_copy_delivered(v.envelope->seq)) return;
  deliver(room, v.payload);
}

}  // namespace fg::worker
