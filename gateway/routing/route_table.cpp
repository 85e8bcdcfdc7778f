#include "gateway/routing/route_table.hpp"

#include <algorithm>
#include <chrono>

#include "common/hashing.hpp"
#include "common/link/codec.hpp"
#include "common/link/send_encoder.hpp"
#include "common/logging.hpp"
#include "common/shrink_buckets.hpp"
#include "common/utf8.hpp"

namespace fg::gateway {

namespace pb = framegate::link;

namespace {
// Past this many worker ids, the tallies of workers with no live link are
// forgotten (ids like <hostname>-<pid> change on every restart).
constexpr std::size_t max_tallies = 256;

// A Message envelope is the payload plus its 8-byte frame header and at
// most 40 bytes of fields (conn_id, binary, seq, tags and lengths).
constexpr std::uint64_t message_envelope_overhead = 64;

std::uint64_t steady_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// A code a worker may ask the gateway to close with: any code an endpoint
// may send (RFC 6455 §7.4), plus the server-side 1012-1014.
bool sendable_close_code(std::uint32_t code) {
  return code <= 0xFFFF &&
         (ws::is_valid_close_code(static_cast<std::uint16_t>(code)) || (code >= 1012 && code <= 1014));
}

// A close reason fits a control frame with its code (123 bytes) and is
// UTF-8 (§5.5.1): cut at a character boundary, dropped if invalid.
std::string_view close_reason_from_worker(std::string_view reason) {
  const auto bytes = [](std::string_view s) {
    return std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
  };
  std::size_t n = std::min<std::size_t>(reason.size(), 123);
  // Back up over continuation bytes (10xxxxxx) to the start of the cut character.
  if (n < reason.size())
    while (n > 0 && (static_cast<unsigned char>(reason[n]) & 0xC0) == 0x80) --n;
  reason = reason.substr(0, n);
  utf8_validator v;
  return v.feed(bytes(reason)) && v.complete() ? reason : std::string_view{};
}

pb::Closer closer_of(close_origin origin) {
  switch (origin) {
    case close_origin::client: return pb::CLOSER_CLIENT;
    case close_origin::server: return pb::CLOSER_SERVER;
    case close_origin::network: return pb::CLOSER_NETWORK;
  }
  return pb::CLOSER_UNSPECIFIED;
}
}  // namespace

std::uint32_t max_worker_envelope(const gateway_config& config) {
  return static_cast<std::uint32_t>(
      std::min<std::uint64_t>(config.reader.limits.max_message_size + 64 * 1024, 1u << 30));
}

bool route_table::worker::serves(std::string_view path) const {
  return std::find(paths.begin(), paths.end(), path) != paths.end();
}

route_table::route_table(const gateway_config& config, route_table_identity identity, message_compressor& compressor,
                         std::function<void()> flush_clients)
    : config_(config),
      identity_(std::move(identity)),
      sticky_(parse_sticky_key_spec(config.sticky_key)),
      flush_clients_(std::move(flush_clients)),
      frames_(compressor) {
  if (identity_.thread_index == 0) hub_ = std::make_unique<room_hub>();
}

route_table::~route_table() { stop(); }

void route_table::stop() {
  if (stopped_) return;
  stopped_ = true;
  // Closing a link removes its worker (on_link_lost): close from a copy.
  std::vector<link_port*> links;
  links.reserve(workers_.size());
  for (const auto& w : workers_) links.push_back(w->link);
  for (link_port* l : links) l->close("gateway stopping");
}

route_table::worker* route_table::find(const link_port& link) const noexcept {
  for (const auto& w : workers_)
    if (w->link == &link) return w.get();
  return nullptr;
}

route_table::worker_tally& route_table::tally(const worker& w) {
  if (tallies_.size() >= max_tallies && !tallies_.contains(w.id)) {
    std::erase_if(tallies_, [&](const auto& entry) {
      return std::none_of(workers_.begin(), workers_.end(), [&](const auto& live) { return live->id == entry.first; });
    });
  }
  return tallies_[w.id];
}

bool route_table::has_credit(const worker& w) const noexcept {
  return w.unacked.within(config_.credit_window, config_.credit_bytes);
}

std::size_t route_table::live_workers() const noexcept {
  return static_cast<std::size_t>(
      std::count_if(workers_.begin(), workers_.end(), [](const auto& w) { return w->registered; }));
}

void route_table::snapshot(thread_snapshot& snap) const {
  snap.routing = true;
  snap.routes = counters_;
  std::unordered_map<std::string, worker_row> rows;
  for (const auto& [id, t] : tallies_) {
    auto& row = rows[id];
    row.routed = t.routed;
    row.credit_pauses = t.credit_pauses;
  }
  for (const auto& w : workers_) {
    if (!w->registered) continue;
    auto& row = rows[w->id];
    row.links = 1;
    row.unacked += w->unacked.count();
    row.unacked_bytes += w->unacked.bytes();
    row.replay_held_bytes += w->unacked.held_bytes();
  }
  for (const auto& [id, r] : routes_)
    if (r.to != nullptr) ++rows[r.to->id].connections;
  snap.workers.reserve(rows.size());
  for (auto& [id, row] : rows) {
    row.worker = id;
    snap.workers.push_back(std::move(row));
  }
}

std::size_t route_table::shed_unused() {
  std::size_t bytes = shrink_buckets(routes_);
  if (hub_) bytes += hub_->shed_unused();
  return bytes;
}

// ---------------------------------------------------------------- clients

route_table::worker* route_table::pick(std::uint64_t key_hash, const std::string& path) const {
  const int best = rendezvous_pick(
      key_hash, static_cast<int>(workers_.size()), [&](int i) { return workers_[i]->hash; },
      [&](int i) { return workers_[i]->registered && workers_[i]->serves(path); });
  return best < 0 ? nullptr : workers_[static_cast<std::size_t>(best)].get();
}

unsigned route_table::admit(const request_info& req, std::string_view& reason) {
  bool any = false;
  for (const auto& w : workers_) {
    if (!w->registered) continue;
    any = true;
    if (w->serves(req.path)) return 0;
  }
  if (!any) {
    ++counters_.refused_no_worker;
    reason = "no worker is available, try later";
    return 503;
  }
  ++counters_.refused_unknown_path;
  reason = "no app is mounted at this path";
  return 404;
}

void route_table::on_open(connection& c, request_info&& info) {
  pb::Envelope e;
  pb::ConnectionOpened& o = *e.mutable_opened();
  o.set_conn_id(c.id());
  o.set_sticky_key(sticky_key_for(sticky_, info, c.id()));
  o.set_path(std::move(info.path));
  o.set_query(std::move(info.query));
  for (auto& [k, v] : info.headers) (*o.mutable_headers())[k] = std::move(v);
  o.set_subprotocol(std::move(info.subprotocol));
  o.set_remote_address(std::move(info.remote_address));
  o.set_user(std::move(info.user));
  o.set_rooms_restricted(info.rooms_restricted);
  for (auto& pattern : info.rooms_allowed) o.add_rooms_allowed(std::move(pattern));
  route& r = routes_[c.id()];
  r.conn = &c;
  r.key_hash = hash64(o.sticky_key());
  r.to = pick(r.key_hash, o.path());
  c.set_sink_record(&r);
  if (r.to == nullptr) {
    // The worker left between admit() and now.
    c.close(ws::close_code::try_again_later, "no worker available");
    return;
  }
  o.SerializeToString(&r.opened);
  ++tally(*r.to).routed;
  announce(r, e);
}

void route_table::announce(route& r, pb::Envelope& e) {
  e.mutable_opened()->set_gateway_id(identity_.gateway_id);
  r.to->link->send(e);
}

void route_table::on_message(connection& c, ws::opcode op, std::span<const std::uint8_t> payload) {
  auto* r = c.sink_record<route>();
  if (r == nullptr || r->to == nullptr) return;
  forward(*r, c.id(), op == ws::opcode::binary, payload);
}

void route_table::forward(route& r, std::uint64_t conn_id, bool binary, std::span<const std::uint8_t> payload) {
  // A message the worker's decoder cannot take would only get the link closed.
  if (!r.to->takes(payload.size())) return refuse_too_big(r);
  unacked_ledger& ledger = r.to->unacked;
  const stored_payload at = r.to->link->send_message(conn_id, binary, payload, ledger.next_seq());
  r.last_seq = ledger.record(conn_id, binary, payload.size(), at);
}

void route_table::refuse_too_big(route& r) {
  ++counters_.too_big_for_worker;
  r.conn->close(ws::close_code::message_too_big, "message too big for the worker");
}

bool route_table::hold_close(connection& c) {
  auto* r = c.sink_record<route>();
  if (r == nullptr || r->to == nullptr || r->last_seq == 0 || r->to->unacked.acked(r->last_seq)) return false;
  r->to->held.push_back({r->last_seq, c.id()});
  return true;
}

void route_table::release_holds(worker& w, bool all) {
  std::vector<std::uint64_t> ready;
  std::erase_if(w.held, [&](const close_hold& h) {
    const bool done = all || w.unacked.acked(h.seq);
    if (done) ready.push_back(h.conn_id);
    return done;
  });
  for (const std::uint64_t id : ready)
    if (auto it = routes_.find(id); it != routes_.end()) it->second.conn->release_close();
}

bool route_table::can_read(connection& c) {
  auto* r = c.sink_record<route>();
  if (r == nullptr || r->to == nullptr || has_credit(*r->to)) return true;
  ++counters_.credit_pauses;
  ++tally(*r->to).credit_pauses;
  r->to->paused.push_back(c.id());
  return false;
}

void route_table::on_close(connection& c, std::uint16_t code, close_origin origin) {
  const auto it = routes_.find(c.id());
  if (it == routes_.end()) return;
  if (worker* w = it->second.to; w != nullptr) {
    pb::Envelope e;
    auto* closed = e.mutable_closed();
    closed->set_conn_id(c.id());
    closed->set_code(code);
    closed->set_closer(closer_of(origin));
    w->link->send(e);
  }
  c.set_sink_record(nullptr);
  routes_.erase(it);
}

// ---------------------------------------------------------------- workers

void route_table::on_link_opened(link_port& link) {
  auto w = std::make_unique<worker>();
  w->link = &link;
  workers_.push_back(std::move(w));
}

void route_table::tick(std::chrono::steady_clock::time_point now) {
  std::vector<std::pair<link_port*, link_cutoff>> cut;
  for (const auto& w : workers_) {
    if (w->heard) {
      w->heard = false;
      w->last_heard = now;
    } else if (config_.link_timeout.count() > 0 && now - w->last_heard >= config_.link_timeout) {
      cut.emplace_back(w->link, link_cutoff::timeout);
      continue;
    }
    if (w->link->pending_bytes() > max_link_backlog()) cut.emplace_back(w->link, link_cutoff::backlog);
  }
  // Closing removes the worker (on_link_lost): from a copy, after the scan.
  for (const auto& [link, why] : cut) {
    ++counters_.links_cut[static_cast<std::size_t>(why)];
    link->close(why == link_cutoff::timeout ? "no answer within --link-timeout (stopped or hung)"
                                            : "not reading its link (output over the backlog limit)");
  }
  ping_links();
  // A worker that hangs is cut off above (and its receipts failed); this
  // bounds the rest, such as a worker that never answers ApiPublish.
  receipts_.expire(now, config_.link_timeout.count() > 0 ? 4 * config_.link_timeout : std::chrono::seconds(30));
}

route_table::worker* route_table::heard_from(link_port& link, bool is_register) {
  worker* w = find(link);
  if (w == nullptr) return nullptr;
  w->heard = true;
  if (w->registered || is_register) return w;
  link.close("the first envelope of a link must be Register");
  return nullptr;
}

void route_table::on_link_send(link_port& link, const fg::link::send_view& send) {
  if (heard_from(link, false) != nullptr) deliver(send);
}

void route_table::on_link_envelope(link_port& link, const pb::Envelope& e) {
  worker* w = heard_from(link, e.body_case() == pb::Envelope::kRegister);
  if (w == nullptr) return;
  switch (e.body_case()) {
    case pb::Envelope::kRegister: return on_register(*w, e.register_());
    case pb::Envelope::kSend: return deliver(e.send());
    case pb::Envelope::kClose: {
      const auto it = routes_.find(e.close().conn_id());
      if (it == routes_.end()) return;
      if (!sendable_close_code(e.close().code())) return reject_for({&it->first, 1}, worker_rejection::bad_close_code);
      it->second.conn->close(static_cast<std::uint16_t>(e.close().code()),
                             close_reason_from_worker(e.close().reason()));
      return;
    }
    case pb::Envelope::kState: return on_state(e.state());
    case pb::Envelope::kAck: return on_ack(*w, e.ack().seq());
    case pb::Envelope::kPing: {
      pb::Envelope pong;
      pong.mutable_pong()->set_nonce(e.ping().nonce());
      link.send(pong);
      return;
    }
    case pb::Envelope::kPong:
      if (const std::uint64_t now = steady_ns(); e.pong().nonce() <= now)
        counters_.link_rtt_ns.observe(now - e.pong().nonce());
      return;
    case pb::Envelope::kBrokerSubscribe:
      if (!hub_) return;
      for (const auto& room : e.broker_subscribe().subscribe()) hub_->subscribe(link, room);
      for (const auto& room : e.broker_subscribe().unsubscribe()) hub_->unsubscribe(link, room);
      return;
    case pb::Envelope::kBrokerPublish:
      if (hub_) hub_->publish(e.broker_publish());
      return;
    case pb::Envelope::kApiPublished: {
      const auto& a = e.api_published();
      receipts_.answer(a.request(), {a.ok(), a.offset(), a.error()});
      return;
    }
    default: return;  // envelopes meant for workers are ignored
  }
}

void route_table::on_register(worker& w, const pb::Register& r) {
  w.registered = true;
  w.id = r.worker_id();
  w.hash = hash64(w.id);
  w.paths.assign(r.paths().begin(), r.paths().end());
  w.max_payload = r.max_envelope() > message_envelope_overhead ? r.max_envelope() - message_envelope_overhead : 0;

  pb::Envelope e;
  auto* welcome = e.mutable_welcome();
  welcome->set_gateway_id(identity_.gateway_id);
  welcome->set_link_index(identity_.thread_index);
  welcome->set_link_count(config_.threads);
  welcome->set_credit_window(config_.credit_window);
  welcome->set_max_message_size(config_.reader.limits.max_message_size);
  welcome->set_max_envelope(max_worker_envelope(config_));
  w.link->send(e);
  if (identity_.thread_index != 0) return;  // one line per worker, not one per link
  auto log = component_logger("gateway");
  log->info("worker '{}' (pid {}, {}) registered, serving {} path(s)", w.id, r.pid(), r.version(), r.paths_size());
  if (const std::size_t limit = config_.reader.limits.max_message_size; !w.takes(limit))
    log->warn(
        "worker '{}' takes messages up to {} bytes (its --max-envelope), below --max-message-size {}: "
        "larger ones will be closed with 1009",
        w.id, w.max_payload, limit);
}

void route_table::on_state(const pb::StateUpdate& u) {
  const auto it = routes_.find(u.conn_id());
  if (it == routes_.end()) return;
  if (u.rooms_joined().empty() && u.rooms_left().empty()) {
    u.state().SerializeToString(&it->second.state);
    return;
  }
  // A delta (link.proto, StateUpdate): amend the kept state in place.
  pb::ConnectionState kept;
  if (u.has_state())
    kept = u.state();
  else
    kept.ParseFromString(it->second.state);
  auto& rooms = *kept.mutable_rooms();
  for (const auto& room : u.rooms_left()) rooms.erase(std::remove(rooms.begin(), rooms.end(), room), rooms.end());
  for (const auto& room : u.rooms_joined())
    if (std::find(rooms.begin(), rooms.end(), room) == rooms.end()) *kept.add_rooms() = room;
  kept.SerializeToString(&it->second.state);
}

void route_table::on_ack(worker& w, std::uint64_t seq) {
  const bool had_credit = has_credit(w);
  w.unacked.acknowledge(seq);
  if (!had_credit && has_credit(w)) credit_returned_.push_back(&w);
  if (!w.held.empty()) release_holds(w, false);
}

void route_table::deliver(const pb::Send& send) {
  // Bytes the fast reader declined (valid, but encoded unusually, say by
  // another implementation): re-encoded in the form it reads, so there is
  // one delivery path. Rare; the copy does not matter.
  reencoded_.clear();
  const auto bytes = [](const std::string& s) {
    return std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
  };
  link::encode_send(reencoded_, {send.conn_ids().data(), static_cast<std::size_t>(send.conn_ids_size())}, send.binary(),
                    bytes(send.payload()), {bytes(send.deflated_prefix()), send.deflated_covers()});
  if (const auto view = link::send_view::parse(reencoded_.span().subspan(link::header_size))) deliver(*view);
}

void route_table::deliver(const link::send_view& send) {
  // Framed once per parameter set among the recipients (plain, compressed
  // per window size), the same bytes queued for every recipient of a set.
  const auto payload = send.payload();
  const auto op = send.binary() ? ws::opcode::binary : ws::opcode::text;
  // What no client may receive closes its recipients, not the link: the
  // worker's other connections are not at fault.
  if (payload.size() > config_.reader.limits.max_message_size) return reject_for(send, worker_rejection::too_big);
  if (op == ws::opcode::text && config_.reader.validate_utf8) {
    utf8_validator v;
    if (!v.feed(payload.data(), payload.size()) || !v.complete())
      return reject_for(send, worker_rejection::invalid_utf8);
  }
  counters_.broadcast_recipients.observe(send.recipient_count());
  const deflated_prefix pre = send.deflated();
  // With the publisher's compression a lone recipient also takes the
  // shared frame: a copy of it costs less than compressing again.
  if (send.recipient_count() == 1 && !pre.present()) {
    // A reply to one client: framed straight into its connection's
    // output. A shared frame would be built only to be copied once more.
    send.for_each_recipient([&](std::uint64_t id) {
      if (auto it = routes_.find(id); it != routes_.end()) it->second.conn->send(op, payload);
    });
    return;
  }
  frames_.reset(op, payload, pre);
  send.for_each_recipient([&](std::uint64_t id) {
    if (auto it = routes_.find(id); it != routes_.end()) it->second.conn->send_shared(frames_);
  });
}

void route_table::reject_for(std::span<const std::uint64_t> conn_ids, worker_rejection why) {
  ++counters_.worker_rejected[static_cast<std::size_t>(why)];
  for (const std::uint64_t id : conn_ids) close_rejected(id);
}

void route_table::reject_for(const link::send_view& send, worker_rejection why) {
  ++counters_.worker_rejected[static_cast<std::size_t>(why)];
  send.for_each_recipient([this](std::uint64_t id) { close_rejected(id); });
}

void route_table::close_rejected(std::uint64_t conn_id) {
  if (auto it = routes_.find(conn_id); it != routes_.end())
    it->second.conn->close(ws::close_code::internal_error, "the worker sent what no client may receive");
}

void route_table::ping_links() {
  // The nonce is the send time: the Pong brings it back (link_rtt_ns).
  pb::Envelope e;
  e.mutable_ping()->set_nonce(steady_ns());
  for (const auto& w : workers_)
    if (w->registered) w->link->send(e);
}

route_table::publish_result route_table::publish_to_rooms(std::span<const room_message> messages,
                                                          api_receipts_fn receipts) {
  const auto eligible = [&](int i) { return workers_[i]->registered && workers_[i]->serves(publish_api_path); };
  const auto target = [&](const room_message& m) -> worker* {
    const int best = rendezvous_pick(
        hash64(m.room), static_cast<int>(workers_.size()), [&](int i) { return workers_[i]->hash; }, eligible);
    return best < 0 ? nullptr : workers_[static_cast<std::size_t>(best)].get();
  };
  // All or nothing, like the request's validation: every target is checked first.
  for (const auto& m : messages) {
    const worker* w = target(m);
    if (w == nullptr) return publish_result::no_worker;
    if (!w->takes(publish_api_path.size() + m.room.size() + m.data.size())) return publish_result::too_big;
    if (w->link->pending_bytes() > config_.credit_bytes) return publish_result::busy;
  }
  std::vector<worker*> to;
  to.reserve(messages.size());
  for (const auto& m : messages) to.push_back(target(m));
  std::vector<std::uint64_t> requests(messages.size(), 0);
  if (receipts) {
    const std::vector<const void*> who(to.begin(), to.end());
    requests = receipts_.open(who, std::chrono::steady_clock::now(), std::move(receipts));
  }
  pb::Envelope e;
  auto* p = e.mutable_api_publish();
  p->set_path(std::string(publish_api_path));
  for (std::size_t i = 0; i < messages.size(); ++i) {
    p->set_room(messages[i].room);
    p->set_data(messages[i].data);
    p->set_request(requests[i]);
    to[i]->link->send(e);
  }
  return publish_result::sent;
}

void route_table::on_link_batch_end() {
  flush_clients_();
  auto returned = std::move(credit_returned_);
  credit_returned_.clear();
  for (worker* w : returned) resume_paused(*w);
}

void route_table::resume_paused(worker& w) {
  auto paused = std::move(w.paused);
  w.paused.clear();
  for (const std::uint64_t id : paused)
    if (auto it = routes_.find(id); it != routes_.end()) it->second.conn->resume_reading();
}

void route_table::on_link_lost(link_port& link, std::string_view why) {
  const auto it = std::find_if(workers_.begin(), workers_.end(), [&](const auto& w) { return w->link == &link; });
  if (it == workers_.end()) return;
  const std::unique_ptr<worker> lost = std::move(*it);
  component_logger("gateway")->info("link to worker '{}' closed: {}", lost->id.empty() ? "?" : lost->id, why);
  workers_.erase(it);
  std::erase(credit_returned_, lost.get());
  if (hub_) hub_->forget(link);
  // Detached first: a held close released below ends its connection,
  // and nothing may be sent to the lost worker about it.
  std::vector<std::uint64_t> orphans;
  for (auto& [id, r] : routes_) {
    if (r.to != lost.get()) continue;
    r.to = nullptr;
    orphans.push_back(id);
  }
  release_holds(*lost, true);  // their replies died with the worker
  receipts_.worker_lost(lost.get(), "the worker went away before answering (the message may have been published)");
  if (!stopped_) fail_over(*lost, orphans);
}

void route_table::fail_over(const worker& lost, std::span<const std::uint64_t> orphans) {
  // Move every connection of the lost worker, announce it as resumed, then
  // replay what the lost worker never acknowledged, in order.
  std::size_t moved = 0;
  std::size_t replayed = 0;
  for (const std::uint64_t id : orphans) {
    const auto it = routes_.find(id);
    if (it == routes_.end()) continue;
    auto& r = it->second;
    pb::Envelope e;
    pb::ConnectionOpened& o = *e.mutable_opened();
    o.ParseFromString(r.opened);
    r.to = pick(r.key_hash, o.path());
    r.last_seq = 0;
    if (r.to == nullptr) {
      ++counters_.closed_no_worker;
      r.conn->close(ws::close_code::try_again_later, "no worker available");
      continue;
    }
    ++moved;
    ++counters_.connections_moved;
    ++tally(*r.to).routed;
    o.set_resumed(true);
    if (!r.state.empty()) o.mutable_state()->ParseFromString(r.state);
    announce(r, e);
  }
  lost.unacked.for_each([&](std::uint64_t conn_id, bool binary, std::span<const std::uint8_t> payload) {
    const auto it = routes_.find(conn_id);
    if (it == routes_.end() || it->second.to == nullptr || !it->second.conn->is_open()) return;
    auto& r = it->second;
    if (!r.to->takes(payload.size())) return refuse_too_big(r);
    ++counters_.messages_replayed;
    ++replayed;
    forward(r, conn_id, binary, payload);
  });
  for (const std::uint64_t id : lost.paused)
    if (auto it = routes_.find(id); it != routes_.end()) it->second.conn->resume_reading();
  flush_clients_();
  if (!orphans.empty())
    component_logger("gateway")->warn("worker '{}' lost: moved {} connection(s), replayed {} message(s)", lost.id,
                                      moved, replayed);
}

}  // namespace fg::gateway
