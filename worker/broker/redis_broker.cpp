#include "worker/broker/redis_broker.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <random>
#include <utility>

#include <unistd.h>

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <boost/asio/post.hpp>

#include "common/deflate/deflated_prefix.hpp"
#include "worker/broker/history_scripts.hpp"
#include "worker/broker/presence_scripts.hpp"
#include "worker/broker/redis_envelope.hpp"
#include "worker/broker/room_offset_header.hpp"

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

std::string hex16(std::uint64_t v) {
  static constexpr std::string_view digits = "0123456789abcdef";
  std::string s(16, '0');
  for (std::size_t i = 16; i-- > 0; v >>= 4) s[i] = digits[v & 0xf];
  return s;
}

// One command of at most 16 arguments from string views (binary-safe, no
// allocation: publishes take this path): true when hiredis took it.
bool send_command(redisAsyncContext* c, redisCallbackFn* cb, void* privdata,
                  std::initializer_list<std::string_view> args) {
  constexpr std::size_t max_args = 16;
  std::array<const char*, max_args> argv{};
  std::array<std::size_t, max_args> len{};
  if (args.size() > max_args) return false;
  std::size_t n = 0;
  for (const std::string_view a : args) {
    argv[n] = a.data();
    len[n++] = a.size();
  }
  return redisAsyncCommandArgv(c, cb, privdata, static_cast<int>(n), argv.data(), len.data()) == REDIS_OK;
}

// "<offset>-0", the id the publish script gives an entry.
std::optional<std::uint64_t> offset_of_entry_id(std::string_view id) {
  if (!id.ends_with("-0") || id.size() < 3) return std::nullopt;
  std::uint64_t v = 0;
  for (const char c : id.substr(0, id.size() - 2)) {
    if (c < '0' || c > '9' || v > max_room_offset) return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

// Seqs of ours delivered locally and remembered so their copies are
// skipped; entries normally leave sooner (publish_dedup).
std::size_t local_bound(std::size_t buffer) { return 2 * std::max<std::size_t>(buffer, 1) + 1024; }

}  // namespace

// Which gate a PUBSUB NUMSUB belongs to: a reply for an earlier one is ignored.
struct redis_broker::numsub_cookie {
  redis_broker* self;
  std::uint64_t generation;
};

// A history read on its way: freed by history_reply_cb.
struct redis_broker::history_cookie {
  redis_broker* self;
  history_request req;
};

// A presence read on its way: freed by presence_reply_cb.
struct redis_broker::presence_cookie {
  std::function<void(presence_result)> done;
};

redis_broker::redis_broker(asio::io_context& io, const redis_endpoint& endpoint, redis_broker_options options,
                           deliver_fn deliver, std::shared_ptr<spdlog::logger> log)
    : io_(io),
      options_(std::move(options)),
      deliver_(std::move(deliver)),
      log_(std::move(log)),
      origin_(random_origin()),
      channels_(options_.channel_prefix, options_.sharded),
      words_(options_.sharded ? pubsub_words{"SSUBSCRIBE", "SUNSUBSCRIBE", "SPUBLISH", "SHARDNUMSUB", "smessage",
                                             "ssubscribe", "sunsubscribe"}
                              : pubsub_words{"SUBSCRIBE", "UNSUBSCRIBE", "PUBLISH", "NUMSUB", "message", "subscribe",
                                             "unsubscribe"}),
      pub_(io, endpoint, "publish", options_.connection, *this, log_, origin_),
      sub_(io, endpoint, "subscribe", options_.connection, *this, log_, origin_ ^ 0x9e3779b97f4a7c15ull),
      gate_timer_(io),
      outbox_(options_.buffer),
      dedup_(local_bound(options_.buffer)),
      mac_(options_.secret.empty() ? nullptr : std::make_unique<envelope_mac>(options_.secret)),
      compressor_(options_.publish_deflate),
      origin_hex_(hex16(origin_)),
      epoch_rng_(std::random_device{}()),
      presence_timer_(io),
      publish_ns_(options_.publish_ns != nullptr ? options_.publish_ns : &own_publish_ns_) {}

redis_broker::~redis_broker() { stop(); }

void redis_broker::start() {
  pub_.start();
  sub_.start();
  refresh_presence();
}

void redis_broker::stop() {
  gate_timer_.cancel();
  presence_timer_.cancel();
  gate_.cancel();
  // Null replies of the pending commands come back during these: ignored.
  pub_.stop();
  sub_.stop();
  refill_hold_.clear();  // nothing is delivered while stopping
  fail_history("the worker is stopping");
  pub_flowing_ = false;
  release_held(true);  // into the outbox, to be counted with it
  // Written ones were probably published; the others never will be.
  for (const publish_record_ptr& r : outbox_.unwritten_records()) give_up(*r, "the worker stopped");
  if (const std::size_t unsent = outbox_.clear(); unsent > 0) {
    stats_.dropped += unsent;
    log_->warn("redis: {} buffered publishes never reached Redis (stopped during an outage)", unsent);
  }
  alive_.reset();
}

broker_report report_of(const redis_broker_stats& s) {
  broker_report r;
  r.publishes = s.published;
  r.deliveries = s.delivered;
  r.buffered = s.buffered;
  r.dropped = s.dropped;
  r.missed = s.missed;
  r.reconnects = s.reconnects;
  r.stale_removed = s.stale_removed;
  r.resubscribes = s.resubscribes;
  r.duplicates = s.duplicates;
  r.foreign = s.foreign;
  r.rejected = s.rejected;
  r.history = s.history;
  r.history_recovered = s.history_recovered;
  r.gaps = s.gaps;
  r.refilled = s.refilled;
  r.refill_held = s.refill_held;
  r.presence_reads = s.presence_reads;
  r.deflated_publishes = s.deflated_publishes;
  r.held_publishes = s.held_publishes;
  r.deflated_deliveries = s.deflated_deliveries;
  return r;
}

redis_broker_stats redis_broker::stats() const {
  redis_broker_stats s = stats_;
  s.reconnects = pub_.reconnects() + sub_.reconnects();
  s.stale_removed = pub_.stale_removed() + sub_.stale_removed();
  return s;
}

broker_report redis_broker::report() const {
  broker_report r = report_of(stats());
  r.kind = "redis";
  r.up = pub_.ready() && sub_.ready();
  r.outbox = outbox_.size();
  r.history_messages = tops_.kept(options_.history_size);
  r.presence_connections = presence_.connections();
  r.rooms = subs_.wanted();
  r.subscriptions = sub_.ready() ? subs_.announced() : 0;
  r.publish_ns = publish_ns_;
  return r;
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

void redis_broker::history_reply_cb(redisAsyncContext*, void* reply, void* privdata) {
  const std::unique_ptr<history_cookie> ck(static_cast<history_cookie*>(privdata));
  if (reply != nullptr)
    ck->self->on_history_reply(*static_cast<const redisReply*>(reply), ck->req);
  else
    ck->self->finish_history(ck->req, {room_history::outcome::unavailable, {}, 0, {}, "the Redis connection was lost"});
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
  tops_.forget(room);
  refilled_upto_.erase(std::string(room));
  fail_history("the room was left before its history came", room);
  release_held();  // nobody here waits for the room's publishes now
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
  send_subscription(true, c.subscribe);
  send_subscription(false, c.unsubscribe);
}

bool redis_broker::send_subscription(bool subscribe, const std::vector<std::string>& rooms) {
  if (rooms.empty()) return true;
  const std::string_view command = subscribe ? words_.subscribe : words_.unsubscribe;
  std::uint64_t& count = subscribe ? stats_.subscribe_commands : stats_.unsubscribe_commands;
  if (!options_.sharded) {
    if (!send_subscription_command(command, rooms)) return false;
    ++count;
    return true;
  }
  // A cluster refuses a command whose channels cross slots (CROSSSLOT).
  for (const std::string& room : rooms) {
    if (!send_subscription_command(command, {room})) return false;
    sub_sent_.push_back({subscribe, room});
    ++count;
  }
  return true;
}

bool redis_broker::send_subscription_command(std::string_view command, const std::vector<std::string>& rooms) {
  redisAsyncContext* c = sub_.context();
  if (c == nullptr) return false;
  std::vector<std::string> channels;
  channels.reserve(rooms.size());
  std::vector<const char*> argv{command.data()};
  std::vector<std::size_t> len{command.size()};
  for (const auto& room : rooms) {
    channels.push_back(channel_of(room));
    argv.push_back(channels.back().data());
    len.push_back(channels.back().size());
  }
  // UNSUBSCRIBE registers no callback: its replies reach the channel's
  // SUBSCRIBE callback (hiredis), which is this same function. Sharded
  // replies reach the sink set in on_ready.
  const bool sent = options_.sharded
                        ? send_raw_command(c, static_cast<int>(argv.size()), argv.data(), len.data())
                        : redisAsyncCommandArgv(c, subscription_reply_cb, this, static_cast<int>(argv.size()),
                                                argv.data(), len.data()) == REDIS_OK;
  if (!sent) {
    // Our view and hiredis's disagree: start over on a new connection.
    sub_.abort("hiredis refused " + std::string(command));
    return false;
  }
  subs_.sent(rooms);
  return true;
}

void redis_broker::on_subscription_reply(const redisReply& r) {
  bool subscribe = false;
  std::string room;
  if (options_.sharded && r.type == REDIS_REPLY_ERROR) {
    // A refused SSUBSCRIBE or SUNSUBSCRIBE (MOVED: the slot is elsewhere).
    note_redirect(str_of(&r));
    if (!take_sharded_answer(r, subscribe, room)) return;
    if (subs_.answered(room, subscribe)) try_start_flow();
    if (subscribe && subs_.wants(room)) lose_room(room);
    release_held();
    return;
  }
  // hiredis may hand this callback a reply of another kind (it reuses the
  // last callback): check everything.
  if (r.type != REDIS_REPLY_ARRAY || r.elements < 3) return;
  const redisReply* kind = r.element[0];
  const redisReply* channel = r.element[1];
  if (kind->type != REDIS_REPLY_STRING || channel->type != REDIS_REPLY_STRING) return;
  const std::string_view k = str_of(kind);
  if (k == words_.message) {
    if (r.element[2]->type == REDIS_REPLY_STRING) on_channel_message(str_of(channel), str_of(r.element[2]));
    return;
  }
  if (k != words_.subscribed && k != words_.unsubscribed) return;
  const std::optional<std::string_view> of = channels_.room_of(str_of(channel));
  if (!of) return;
  if (options_.sharded && !take_sharded_answer(r, subscribe, room)) {
    // Not an answer: the server dropped the subscription (the slot moved).
    if (k == words_.unsubscribed && subs_.wants(*of)) lose_room(*of);
    return;
  }
  if (subs_.answered(*of, k == words_.subscribed)) {
    log_->info("redis: resubscribed to {} rooms", subs_.announced());
    try_start_flow();
  }
  if (k == words_.subscribed) {
    release_held();
    send_waiting_history();
  }
}

bool redis_broker::take_sharded_answer(const redisReply& r, bool& subscribe, std::string& room) {
  if (sub_sent_.empty()) return false;
  const sent_subscription& first = sub_sent_.front();
  if (r.type != REDIS_REPLY_ERROR) {
    const bool is_subscribe = str_of(r.element[0]) == words_.subscribed;
    const std::optional<std::string_view> of = channels_.room_of(str_of(r.element[1]));
    if (is_subscribe != first.subscribe || !of || *of != first.room) return false;
  }
  subscribe = first.subscribe;
  room = std::move(sub_sent_.front().room);
  sub_sent_.pop_front();
  return true;
}

void redis_broker::lose_room(std::string_view room) {
  ++stats_.rooms_lost;
  const std::string lost(room);  // `room` may point into the reply or the set
  unsubscribe(lost);
  if (options_.on_room_lost) options_.on_room_lost(lost);
}

bool redis_broker::note_redirect(std::string_view error) {
  if (!options_.sharded) return false;
  for (const std::string_view word : {"MOVED ", "ASK ", "TRYAGAIN", "CLUSTERDOWN"}) {
    if (!error.starts_with(word)) continue;
    ++stats_.redirects;
    if (options_.on_redirect) options_.on_redirect(error);
    return true;
  }
  return false;
}

bool redis_broker::sub_settled() const noexcept { return !sub_.ready() || subs_.resubscribed(); }

// --------------------------------------------------------------- connections

void redis_broker::on_ready(redis_connection& c) {
  if (&c == &sub_) {
    sub_sent_.clear();
    // hiredis does not know SSUBSCRIBE's replies: they come to us raw.
    if (options_.sharded) set_redis_reply_sink(c.context(), [this](const redisReply& r) { on_subscription_reply(r); });
    const std::vector<std::string> rooms = subs_.reconnect();
    if (!rooms.empty() && send_subscription(true, rooms)) {
      subs_.resubscribing(rooms);
      if (sub_.reconnects() > 0) {
        stats_.resubscribes += rooms.size();
        refill_after_resubscribe(rooms);
      }
    }
    try_start_flow();
    return;
  }
  // The publish connection: the subscribe connection's earlier life
  // removed, if a partition left it on Redis (it would count as a
  // subscriber that is back); the scripts (a restarted Redis has forgotten
  // them; commands on one connection run in order); then the flush once
  // the earlier subscribers are back.
  c.remove_stale_of(sub_);
  load_scripts();
  send_all_presence();
  send_waiting_history();  // reads that waited for this connection (refills)
  // Rooms with no remembered count wait the settle time instead: the other
  // workers that lost Redis with us come back within about one backoff
  // step of each other.
  begin_gate(std::min(2 * c.last_wait(), options_.connection.backoff_max));
}

void redis_broker::on_down(redis_connection& c, std::string_view) {
  // A room's history is read once its subscription is in place: that
  // order is lost with either connection.
  fail_history("the Redis connection was lost");
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
  // They go with the outbox: behind the flush's gate, or as an outage's loss.
  release_held();
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
  // SHARDNUMSUB counts this node's subscribers only, and may cross slots.
  std::vector<const char*> argv{"PUBSUB", words_.numsub.data()};
  std::vector<std::size_t> len{6, words_.numsub.size()};
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
    const std::optional<std::string_view> room = channels_.room_of(str_of(ch));
    if (!room) continue;
    if (!gate_.back(*room, n->integer)) back = false;
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

void redis_broker::publish(std::string_view room, std::string_view payload) { publish(room, payload, {}); }

void redis_broker::publish(std::string_view room, std::string_view payload, publish_options options) {
  ++stats_.published;
  // Subscriptions of this turn first (their SUBSCRIBE leaves first).
  if (flush_posted_) flush_subscriptions();
  auto r = std::make_shared<publish_record>();
  r->seq = ++seq_;
  r->room = std::string(room);
  const deflated_segment pre = compressor_.compress(payload, options.stable_prefix);
  if (pre.present()) ++stats_.deflated_publishes;
  r->wire = mac_ ? encode_signed_redis_envelope(*mac_, channel_of(room), origin_, r->seq, payload, pre)
                 : encode_redis_envelope(origin_, r->seq, payload, pre);
  r->header = r->wire.size() - payload.size();
  r->numbered = options.numbered && keeps_history();
  r->done = std::move(options.done);
  // Numbered ones reach members from Redis, with their offset; otherwise
  // a copy that cannot come back through Redis is delivered here.
  if (!r->numbered && subs_.wants(room)) {
    if (pub_flowing_ && confirmed(room))
      dedup_.owe(r);
    else
      deliver_locally(*r);
  }
  if (!pub_flowing_) ++stats_.buffered;
  if (r->numbered && awaits_subscription(room)) {
    ++stats_.held_publishes;
    held_.push_back(std::move(r));
    // Bounded like the outbox: a subscribe connection that stopped answering
    // (no reply, no error) must not hold memory without end. The oldest goes
    // on unheld; this worker's members may then miss it, as before holding.
    if (held_.size() <= outbox_.bound()) return;
    enqueue(std::move(held_.front()));
    held_.pop_front();
    send_outbox();
    return;
  }
  enqueue(std::move(r));
  send_outbox();
}

void redis_broker::enqueue(publish_record_ptr r) {
  for (const publish_record_ptr& dropped : outbox_.push(std::move(r))) {
    if (stats_.dropped++ == 0)
      log_->warn("redis: outbox full ({} publishes): dropping the oldest; other hosts miss them", outbox_.bound());
    if (dropped->owed_local) deliver_locally(*dropped);
    give_up(*dropped, "dropped: the Redis outbox is full (--redis-buffer)");
    dedup_.forget(dropped->seq);  // it will never come back
  }
}

// Only while publishes flow and the subscribe connection is up: an outage's
// flush already waits for the resubscription (try_start_flow), and without
// the connection there is nothing to wait for.
bool redis_broker::awaits_subscription(std::string_view room) const {
  return pub_flowing_ && sub_.ready() && subs_.wants(room) && !subs_.confirmed(room);
}

void redis_broker::release_held(bool everything) {
  if (held_.empty()) return;
  // A room's publishes stay in order: they all wait, or none does.
  const auto go = std::stable_partition(held_.begin(), held_.end(), [&](const publish_record_ptr& r) {
    return !everything && awaits_subscription(r->room);
  });
  for (auto it = go; it != held_.end(); ++it) enqueue(std::move(*it));
  held_.erase(go, held_.end());
  send_outbox();
}

void redis_broker::send_outbox() {
  if (!pub_flowing_) return;
  redisAsyncContext* c = pub_.context();
  if (c == nullptr) return;
  while (outbox_.has_unwritten()) {
    const auto now = std::chrono::steady_clock::now();
    if (!send_publish(c, outbox_.next_unwritten())) {
      pub_.abort("hiredis refused PUBLISH");
      return;
    }
    outbox_.mark_written(now);
  }
}

bool redis_broker::send_publish(redisAsyncContext* c, const publish_record& r) {
  const std::string channel = channel_of(r.room);
  if (!r.numbered) {
    const char* argv[3] = {words_.publish.data(), channel.data(), r.wire.data()};
    const std::size_t len[3] = {words_.publish.size(), channel.size(), r.wire.size()};
    return redisAsyncCommandArgv(c, publish_reply_cb, this, 3, argv, len) == REDIS_OK;
  }
  const redis_script& script = history_publish_script(options_.sharded);
  const std::string meta = history_meta_key(channel), stream = history_stream_key(channel);
  const std::string seq = std::to_string(r.seq), maxlen = std::to_string(options_.history_size),
                    ttl = std::to_string(options_.history_ttl.count()), epoch = new_room_epoch(epoch_rng_);
  const std::initializer_list<std::string_view> args = {"EVALSHA", script.sha1, "2", meta,   stream, channel,
                                                        r.wire,    origin_hex_, seq, maxlen, ttl,    epoch};
  return send_command(c, publish_reply_cb, this, args);
}

void redis_broker::on_publish_reply(const redisReply& r) {
  const publish_record_ptr done = outbox_.acknowledge();
  if (!done) return;
  publish_ns_->observe(static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - done->written).count()));
  if (r.type == REDIS_REPLY_ERROR) {
    // Not run, so safe to send again; not when our members wait for its
    // copy (a new copy could not be told from the owed one).
    if (note_redirect(str_of(&r)) && !done->owed_local && options_.republish) {
      publish_options again{done->numbered, std::exchange(done->done, nullptr)};
      if (options_.republish(done->room, done->payload(), again)) return;
      done->done = std::move(again.done);
    }
    // Refused for good (ACL, a script flushed, a slot elsewhere, ...):
    // other hosts will not get it.
    if (stats_.dropped++ % 1000 == 0)
      log_->warn("redis: PUBLISH to {} refused: {}", channel_of(done->room), str_of(&r));
    if (done->owed_local) deliver_locally(*done);
    return give_up(*done, "refused by Redis: " + std::string(str_of(&r)));
  }
  // PUBLISH: the receiver count; the history script: {count, offset}.
  long long receivers = -1;
  std::uint64_t offset = 0;
  if (r.type == REDIS_REPLY_INTEGER) {
    receivers = r.integer;
  } else if (r.type == REDIS_REPLY_ARRAY && r.elements == 2 && r.element[0]->type == REDIS_REPLY_INTEGER &&
             r.element[1]->type == REDIS_REPLY_INTEGER) {
    receivers = r.element[0]->integer;
    offset = static_cast<std::uint64_t>(std::max<long long>(r.element[1]->integer, 0));
  }
  if (receivers < 0) {
    // The history script had published this copy before the reconnect.
    ++stats_.duplicates;
  } else {
    // Fewer subscribers than before the outage: a peer is not back (or left).
    if (done->expect >= 0 && receivers < done->expect) ++stats_.missed;
    gate_.note_receivers(done->room, receivers);
  }
  if (done->done) std::exchange(done->done, nullptr)(publish_receipt{true, offset, {}});
}

void redis_broker::hand_over_unsent() {
  if (!options_.republish) return;
  release_held(true);  // unsent too
  std::vector<publish_record_ptr> kept;
  for (publish_record_ptr& r : outbox_.take_unwritten()) {
    publish_options again{r->numbered, std::exchange(r->done, nullptr)};
    if (r->owed_local || !options_.republish(r->room, r->payload(), again)) {
      r->done = std::move(again.done);
      kept.push_back(std::move(r));
    }
  }
  for (publish_record_ptr& r : kept) (void)outbox_.push(std::move(r));
}

void redis_broker::give_up(publish_record& r, std::string_view why) {
  if (r.done) std::exchange(r.done, nullptr)(publish_receipt{false, 0, std::string(why)});
}

// ----------------------------------------------------------------- delivery

void redis_broker::deliver(std::string_view room, std::string_view payload, room_position at, deflated_segment pre) {
  ++stats_.delivered;
  if (pre.present()) ++stats_.deflated_deliveries;
  stats_.gaps += tops_.note(room, at);
  if (deliver_) deliver_(room, payload, at, pre);
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
  const std::optional<std::string_view> of = channels_.room_of(channel);
  if (!of) return;
  const std::string_view room = *of;
  // An UNSUBSCRIBE may still be on its way.
  if (!subs_.wants(room)) return;
  const std::uint64_t gateway_limit = options_.gateway_max_payload ? options_.gateway_max_payload() : 0;
  const inbound_policy policy{delivery_limit(options_.max_envelope, gateway_limit), options_.foreign, mac_.get(),
                              channel};
  // The offset line comes first (written by Redis); only a framegate
  // message behind it keeps its position.
  const std::optional<room_offset_header> numbered = parse_room_offset_header(data);
  if (numbered) data = numbered->rest;
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
    deliver_live(room, v.payload);
    return;
  }
  if (!dedup_.accept(v.envelope->origin, room, v.envelope->seq, mac_ != nullptr)) {
    ++stats_.duplicates;
    return;
  }
  if (ours && dedup_.own_copy_delivered(v.envelope->seq)) return;
  const room_position at = numbered ? room_position{numbered->epoch, numbered->offset} : room_position{};
  if (refilled_copy(room, at)) {
    ++stats_.duplicates;
    return;
  }
  deliver_live(room, v.payload, at, v.segment);
}

void redis_broker::deliver_live(std::string_view room, std::string_view payload, room_position at,
                                deflated_segment pre) {
  switch (refill_hold_.keep(room, payload, at, pre)) {
    case refill_hold::kept::held: ++stats_.refill_held; return;
    case refill_hold::kept::not_held: break;
    case refill_hold::kept::overflowed:
      log_->warn("redis: room {}: too much live traffic while its refill reads the history; delivering it now", room);
      deliver_held(room, refill_hold_.overflow());
      break;
  }
  deliver(room, payload, at, pre);
}

void redis_broker::deliver_held(std::string_view room, const std::vector<held_delivery>& held) {
  for (const held_delivery& d : held) {
    // Published before the history read ran: the refill brought it.
    if (d.offset != 0 && !tops_.is_new(room, d.at())) {
      ++stats_.duplicates;
      continue;
    }
    deliver(room, d.payload, d.at(), d.segment());
  }
}

// ------------------------------------------------------------------ history

void redis_broker::history(std::string_view room, const std::optional<history_since>& since,
                           std::function<void(room_history)> done) {
  history_request req{std::string(room), since, std::move(done)};
  if (!keeps_history()) return finish_history(req, {});
  if (!subs_.wants(room))
    return finish_history(req, {room_history::outcome::unavailable, {}, 0, {}, "subscribe to the room first"});
  if (!pub_.ready() || !sub_.ready())
    return finish_history(req, {room_history::outcome::unavailable, {}, 0, {}, "Redis is not connected"});
  waiting_history_.push_back(std::move(req));
  send_waiting_history();
}

void redis_broker::refill_after_resubscribe(const std::vector<std::string>& rooms) {
  // Another worker's flush may reach Redis before this subscription is
  // back (its gate counted the subscription a partition left on Redis):
  // that message went to the dead connection. The history has it.
  if (!keeps_history()) return;
  for (const std::string& room : rooms) {
    std::optional<history_since> since = tops_.since(room);
    if (!since) continue;
    // Live messages of the room wait for the read: one published after the
    // new subscription could otherwise pass those the read brings. Only
    // while the publish connection is up, which sends the read as soon as
    // the subscription is in place: a hold must not last an outage of it.
    if (pub_.ready()) refill_hold_.begin(room);
    waiting_history_.push_back(
        {room, std::move(since), [this, room](const room_history& h) { refill(room, h); }, true});
  }
  send_waiting_history();
}

void redis_broker::refill(const std::string& room, const room_history& h) {
  const std::vector<held_delivery> held = refill_hold_.end(room);
  if (!subs_.wants(room)) return;
  if (h.result == room_history::outcome::recovered) {
    // In order, and only what no live copy brought first: one that did
    // (its hold overflowed) passed the older ones, which stay gaps (counted).
    for (const room_history::entry& e : h.entries) {
      const room_position at{h.epoch, e.offset};
      if (!tops_.is_new(room, at)) continue;
      ++stats_.refilled;
      deliver(room, e.payload, at);
      refilled_upto_[room] = history_since{h.epoch, e.offset};
    }
  }
  // Behind the refill, or at once if the read failed (the connection was
  // lost: a new refill starts when it is back).
  deliver_held(room, held);
}

bool redis_broker::refilled_copy(std::string_view room, room_position at) {
  if (refilled_upto_.empty() || at.offset == 0) return false;
  const auto it = refilled_upto_.find(std::string(room));
  if (it == refilled_upto_.end()) return false;
  if (it->second.epoch == at.epoch && at.offset <= it->second.offset) return true;
  // Live deliveries have passed what the refill delivered: no copy can follow.
  refilled_upto_.erase(it);
  return false;
}

void redis_broker::load_scripts() {
  for (const redis_script* s : {&history_publish_script(options_.sharded), &history_read_script(),
                                &presence_update_script(), &presence_read_script()}) {
    const char* argv[3] = {"SCRIPT", "LOAD", s->body.data()};
    const std::size_t len[3] = {6, 4, s->body.size()};
    // The reply (the SHA-1 we computed) is not needed: no callback.
    if (redisAsyncCommandArgv(pub_.context(), nullptr, nullptr, 3, argv, len) != REDIS_OK)
      return pub_.abort("hiredis refused SCRIPT LOAD");
  }
}

void redis_broker::send_waiting_history() {
  if (!pub_.ready()) return;
  auto ready = std::stable_partition(
      waiting_history_.begin(), waiting_history_.end(),
      [this](const history_request& r) { return !confirmed(r.room) || (r.refill && refills_paused_); });
  std::vector<history_request> go(std::make_move_iterator(ready), std::make_move_iterator(waiting_history_.end()));
  waiting_history_.erase(ready, waiting_history_.end());
  for (auto& req : go)
    if (!send_history(req)) return;
}

bool redis_broker::send_history(history_request& req) {
  const redis_script& script = history_read_script();
  const std::string channel = channel_of(req.room);
  const std::string meta = history_meta_key(channel), stream = history_stream_key(channel);
  const std::string epoch = new_room_epoch(epoch_rng_), ttl = std::to_string(options_.history_ttl.count()),
                    after = req.since ? std::to_string(req.since->offset) : std::string(),
                    count = std::to_string(options_.history_size);
  const std::initializer_list<std::string_view> args = {"EVALSHA", script.sha1, "2",   meta, stream,
                                                        epoch,     ttl,         after, count};
  auto* ck = new history_cookie{this, std::move(req)};
  if (!send_command(pub_.context(), history_reply_cb, ck, args)) {
    finish_history(ck->req, {room_history::outcome::unavailable, {}, 0, {}, "hiredis refused EVALSHA"});
    delete ck;
    pub_.abort("hiredis refused EVALSHA");
    return false;
  }
  return true;
}

void redis_broker::on_history_reply(const redisReply& r, history_request& req) {
  if (r.type == REDIS_REPLY_ERROR) {
    note_redirect(str_of(&r));
    return finish_history(req, {room_history::outcome::unavailable, {}, 0, {}, std::string(str_of(&r))});
  }
  if (r.type != REDIS_REPLY_ARRAY || r.elements != 3 || r.element[0]->type != REDIS_REPLY_STRING ||
      r.element[1]->type != REDIS_REPLY_INTEGER || r.element[2]->type != REDIS_REPLY_ARRAY || r.element[1]->integer < 0)
    return finish_history(req, {room_history::outcome::unavailable, {}, 0, {}, "unexpected history reply"});
  history_read read;
  read.epoch = std::string(str_of(r.element[0]));
  read.top = static_cast<std::uint64_t>(r.element[1]->integer);
  // Each entry: [id, [field, value, ...]]. Entries are checked like live
  // messages: whoever can write to Redis could have added one.
  const std::string channel = channel_of(req.room);
  const std::uint64_t gateway_limit = options_.gateway_max_payload ? options_.gateway_max_payload() : 0;
  const inbound_policy policy{delivery_limit(options_.max_envelope, gateway_limit), foreign_policy::drop, mac_.get(),
                              channel};
  const redisReply& list = *r.element[2];
  for (std::size_t i = 0; i < list.elements; ++i) {
    const redisReply& e = *list.element[i];
    if (e.type != REDIS_REPLY_ARRAY || e.elements != 2 || e.element[0]->type != REDIS_REPLY_STRING ||
        e.element[1]->type != REDIS_REPLY_ARRAY || e.element[1]->elements != 2 ||
        e.element[1]->element[1]->type != REDIS_REPLY_STRING)
      continue;
    const std::optional<std::uint64_t> offset = offset_of_entry_id(str_of(e.element[0]));
    if (!offset) continue;
    const inbound_verdict v = check_inbound(str_of(e.element[1]->element[1]), policy);
    if (v.reject) {
      reject(*v.reject, req.room, e.element[1]->element[1]->len);
      continue;
    }
    read.entries.push_back({*offset, std::string(v.payload)});
  }
  finish_history(req, judge_history(req.since, std::move(read)));
}

void redis_broker::fail_history(std::string_view why, std::string_view room) {
  std::vector<history_request> failed;
  auto keep = std::stable_partition(waiting_history_.begin(), waiting_history_.end(),
                                    [&](const history_request& r) { return !room.empty() && r.room != room; });
  failed.assign(std::make_move_iterator(keep), std::make_move_iterator(waiting_history_.end()));
  waiting_history_.erase(keep, waiting_history_.end());
  for (auto& req : failed) finish_history(req, {room_history::outcome::unavailable, {}, 0, {}, std::string(why)});
}

// ----------------------------------------------------------------- presence

void redis_broker::set_presence(std::string_view room, std::string_view user, std::uint32_t connections) {
  presence_.set(room, user, connections);
  // Down: written whole after the reconnect (send_all_presence).
  if (pub_.ready()) send_presence(room, user, connections);
}

bool redis_broker::send_presence(std::string_view room, std::optional<std::string_view> user,
                                 std::uint32_t connections) {
  const redis_script& script = presence_update_script();
  const std::string channel = channel_of(room);
  const std::string key = presence_key(channel), deadlines = presence_deadlines_key(channel),
                    field = user ? presence_field(origin_hex_, *user) : std::string(),
                    count = std::to_string(connections), ttl = std::to_string(options_.presence_ttl.count());
  const std::initializer_list<std::string_view> args = {"EVALSHA", script.sha1, "2",         key, deadlines,
                                                        field,     count,       origin_hex_, ttl};
  if (!send_command(pub_.context(), nullptr, nullptr, args)) {
    pub_.abort("hiredis refused EVALSHA");
    return false;
  }
  return true;
}

void redis_broker::send_all_presence() {
  for (const auto& [room, users] : presence_.rooms())
    for (const auto& [user, n] : users)
      if (!send_presence(room, user, n)) return;
}

void redis_broker::refresh_presence() {
  // Only the deadline moves: one short command per room with members here.
  if (pub_.ready())
    for (const auto& [room, users] : presence_.rooms())
      if (!send_presence(room, std::nullopt, 0)) break;
  presence_timer_.expires_after(options_.presence_ttl / 3);
  presence_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) refresh_presence();
  });
}

void redis_broker::presence(std::string_view room, std::function<void(presence_result)> done) {
  if (!pub_.ready()) return done(presence_result{false, {}, "Redis is not connected"});
  const redis_script& script = presence_read_script();
  const std::string channel = channel_of(room);
  const std::string key = presence_key(channel), deadlines = presence_deadlines_key(channel);
  const std::initializer_list<std::string_view> args = {"EVALSHA", script.sha1, "2", key, deadlines};
  ++stats_.presence_reads;
  auto* ck = new presence_cookie{std::move(done)};
  if (!send_command(pub_.context(), presence_reply_cb, ck, args)) {
    ck->done(presence_result{false, {}, "hiredis refused EVALSHA"});
    delete ck;
    pub_.abort("hiredis refused EVALSHA");
  }
}

void redis_broker::presence_reply_cb(redisAsyncContext*, void* reply, void* privdata) {
  const std::unique_ptr<presence_cookie> ck(static_cast<presence_cookie*>(privdata));
  const auto* r = static_cast<const redisReply*>(reply);
  if (r == nullptr) return ck->done(presence_result{false, {}, "the Redis connection was lost"});
  if (r->type != REDIS_REPLY_ARRAY)
    return ck->done(presence_result{
        false, {}, r->type == REDIS_REPLY_ERROR ? std::string(str_of(r)) : "unexpected presence reply"});
  std::vector<std::pair<std::string_view, std::string_view>> fields;
  for (std::size_t i = 0; i + 1 < r->elements; i += 2)
    if (r->element[i]->type == REDIS_REPLY_STRING && r->element[i + 1]->type == REDIS_REPLY_STRING)
      fields.emplace_back(str_of(r->element[i]), str_of(r->element[i + 1]));
  ck->done(presence_result{true, sum_presence(fields), {}});
}

void redis_broker::finish_history(history_request& req, room_history h) {
  if (!req.refill) {
    ++stats_.history[static_cast<std::size_t>(h.result)];
    stats_.history_recovered += h.entries.size();
  }
  if (req.done) req.done(std::move(h));
}

}  // namespace fg::worker
