#include "worker/runtime/dispatcher.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

#include "common/close_codes.hpp"
#include "common/memory_release.hpp"
#include "common/shrink_buckets.hpp"

namespace fg::worker {

namespace pb = framegate::link;

namespace {

connection_info info_from(const pb::ConnectionOpened& m) {
  connection_info info;
  info.id = m.conn_id();
  info.gateway_id = m.gateway_id();
  info.path = m.path();
  info.query = m.query();
  info.headers = {m.headers().begin(), m.headers().end()};
  info.subprotocol = m.subprotocol();
  info.remote_address = m.remote_address();
  info.sticky_key = m.sticky_key();
  info.resumed = m.resumed();
  info.user = m.user();
  info.rooms_restricted = m.rooms_restricted();
  info.rooms_allowed.assign(m.rooms_allowed().begin(), m.rooms_allowed().end());
  return info;
}

// Appends to `out` the rooms of `from` that `other` lacks.
void append_missing(const std::vector<std::string>& from, const std::vector<std::string>& other,
                    google::protobuf::RepeatedPtrField<std::string>* out) {
  // Up to max_rooms_per_connection each: a sorted copy beats a scan per room.
  std::vector<std::string_view> sorted(other.begin(), other.end());
  std::sort(sorted.begin(), sorted.end());
  for (const auto& room : from)
    if (!std::binary_search(sorted.begin(), sorted.end(), std::string_view(room))) *out->Add() = room;
}

connection_state state_from(const pb::ConnectionState& s) {
  connection_state state;
  state.rooms.assign(s.rooms().begin(), s.rooms().end());
  state.app_data = s.app_data();
  return state;
}

}  // namespace

dispatcher::dispatcher(std::string worker_id, app_registry& apps, link_output& out, std::shared_ptr<spdlog::logger> log)
    : worker_id_(std::move(worker_id)), apps_(apps), out_(out), log_(std::move(log)) {
  apps_.for_each([this](const std::string& path, app& a) {
    a.attach(*this);
    app_stats_.emplace_back().path = path;
    app_of_stats_.push_back(&a);
  });
}

void dispatcher::shed_unused_memory() {
  const std::size_t bytes = payloads_.shed_unused();
  stats_.pool_bytes_shed += bytes;
  // Connections gone for good since the period's peak freed their entries
  // (and the table's buckets, once they are several times what is left,
  // shrink): after a wave of clients leaves, that memory goes back with the
  // pool's. A steady churn keeps its peak near its count and adds nothing.
  const std::size_t gone = conns_peak_since_shed_ - conns_.size();
  conns_peak_since_shed_ = conns_.size();
  const std::size_t buckets = shrink_buckets(conns_);
  if (release_shed_memory(bytes + buckets + gone * (sizeof(entry) + sizeof(connection)))) ++stats_.memory_trims;
}

app_stats* dispatcher::stats_of(const app* handler) noexcept {
  for (std::size_t i = 0; i < app_of_stats_.size(); ++i)
    if (app_of_stats_[i] == handler) return &app_stats_[i];
  return nullptr;
}

template <class Fn>
void dispatcher::guarded(conn_id c, std::uint32_t link, app_stats& counted, const char* what, Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    ++stats_.app_errors;
    ++counted.errors;
    log_->error("conn={} app {} failed: {}; closing it", c, what, e.what());
    queue_close(link, c, close_code::internal_error, "internal error");
  } catch (...) {
    ++stats_.app_errors;
    ++counted.errors;
    log_->error("conn={} app {} failed; closing it", c, what);
    queue_close(link, c, close_code::internal_error, "internal error");
  }
}

std::int64_t dispatcher::link_of(conn_id c) const noexcept {
  const auto it = conns_.find(c);
  return it == conns_.end() ? -1 : static_cast<std::int64_t>(it->second.link);
}

dispatcher::link_ack& dispatcher::ack_of(std::uint32_t link) {
  if (link >= acks_.size()) acks_.resize(link + 1);
  return acks_[link];
}

std::uint64_t dispatcher::track(std::uint32_t link, std::uint64_t seq) {
  link_ack& a = ack_of(link);
  a.window.emplace_back(seq, false);
  return a.front_pos + a.window.size() - 1;
}

void dispatcher::mark_handled(std::uint32_t link, std::uint64_t ack_pos) {
  link_ack& a = ack_of(link);
  // A position from before a reset of the link is stale: nothing to do.
  if (ack_pos < a.front_pos || ack_pos - a.front_pos >= a.window.size()) return;
  a.window[ack_pos - a.front_pos].second = true;
  while (!a.window.empty() && a.window.front().second) {
    a.ackable = std::max(a.ackable, a.window.front().first);
    a.pending = true;
    a.window.pop_front();
    ++a.front_pos;
  }
}

void dispatcher::reset_acks(std::uint32_t link) {
  link_ack& a = ack_of(link);
  // Positions keep growing, so those still held by inboxes never match again.
  a.front_pos += a.window.size();
  a.window.clear();
  a.pending = false;
  a.ackable = 0;
}

// ---------------------------------------------------------------- link events

void dispatcher::on_link_up(std::uint32_t link) {
  reset_acks(link);
  if (link == 0 && hub_ != nullptr) hub_->on_hub_up();
}

void dispatcher::on_link_down(std::uint32_t link) {
  reset_acks(link);
  std::vector<conn_id> gone;
  for (const auto& [id, e] : conns_)
    if (e.link == link) gone.push_back(id);
  // Their link is gone: they ended without a close handshake.
  for (const conn_id id : gone) forget(id, close_code::abnormal);
  if (link == 0 && hub_ != nullptr) hub_->on_hub_down();
}

void dispatcher::on_envelope(std::uint32_t link, const pb::Envelope& e) {
  switch (e.body_case()) {
    case pb::Envelope::kMessage: {
      const pb::Message& m = e.message();
      on_message(link, {m.conn_id(),
                        m.binary(),
                        {reinterpret_cast<const std::uint8_t*>(m.payload().data()), m.payload().size()},
                        m.seq()});
      break;
    }
    case pb::Envelope::kOpened: on_opened(link, e.opened()); break;
    case pb::Envelope::kClosed: on_closed(e.closed()); break;
    case pb::Envelope::kPing: {
      pong_env_.mutable_pong()->set_nonce(e.ping().nonce());
      out_.queue(link, pong_env_);
      break;
    }
    case pb::Envelope::kBrokerDeliver:
      if (hub_ != nullptr) {
        const pb::BrokerPublish& d = e.broker_deliver();
        hub_->on_hub_deliver(d.room(), d.payload(), {d.deflated_prefix(), d.deflated_covers()});
      }
      break;
    case pb::Envelope::kApiPublish: on_api_publish(link, e.api_publish()); break;
    case pb::Envelope::kPong: break;  // we send no pings yet; harmless
    default:
      // A gateway never sends these to a worker; ignoring keeps the link
      // (and every connection on it) up while the count shows the defect.
      if (stats_.unexpected_envelopes++ == 0)
        log_->warn("ignoring an unexpected envelope (body case {}) on link {}", static_cast<int>(e.body_case()), link);
      break;
  }
}

bool dispatcher::end_batch(std::uint32_t) { return serve_turn(); }

bool dispatcher::serve_turn() {
  std::size_t total = 0;
  // Each connection ready at the start is visited at most once; one that
  // still has work goes to the back, behind those not yet served.
  for (std::size_t visits = ready_.size(); visits > 0 && total < turn_messages_total; --visits) {
    const conn_id id = ready_.front();
    ready_.pop_front();
    const auto it = conns_.find(id);
    if (it == conns_.end() || !it->second.ready) continue;  // forgotten meanwhile
    it->second.ready = false;
    total += serve(id, it->second);
    // serve() may have forgotten the connection (a queued close).
    if (const auto again = conns_.find(id); again != conns_.end() && !again->second.inbox.empty()) {
      again->second.ready = true;
      ready_.push_back(id);
    }
  }
  flush_states();
  flush_acks();
  if (ready_.empty()) return false;
  ++stats_.turns_deferred;
  return true;
}

std::size_t dispatcher::serve(conn_id id, entry& e) {
  std::size_t handled = 0;
  std::size_t bytes = 0;
  // One clock read per message, not two: a handler's end is the next
  // one's start (the bookkeeping between them is noise to the histogram;
  // the reads were ~3% of a busy worker's CPU).
  auto clock = std::chrono::steady_clock::now();
  while (!e.inbox.empty() && handled < turn_messages_per_connection && bytes < turn_bytes_per_connection) {
    inbound item = std::move(e.inbox.front());
    e.inbox.pop_front();
    --queued_;
    if (item.is_close) {
      forget(id, item.close_code);  // `e` is gone
      return handled;
    }
    ++handled;
    bytes += item.payload.size();
    clock = handle(id, e, item, clock);
    mark_handled(item.link, item.ack_pos);
    payloads_.give_back(std::move(item.payload));
  }
  return handled;
}

void dispatcher::flush_acks() {
  for (std::uint32_t link = 0; link < acks_.size(); ++link) {
    link_ack& a = acks_[link];
    if (!a.pending) continue;
    a.pending = false;
    ack_env_.mutable_ack()->set_seq(a.ackable);
    out_.queue(link, ack_env_);
  }
}

void dispatcher::flush_states() {
  for (const auto& [id, sent] : state_sent_) {
    const auto it = conns_.find(id);
    if (it == conns_.end()) continue;
    const connection_state& now = it->second.conn->state();
    auto* update = state_env_.mutable_state();
    update->Clear();
    update->set_conn_id(id);
    if (now.app_data != sent.app_data) {
      auto* full = update->mutable_state();
      full->mutable_rooms()->Assign(now.rooms.begin(), now.rooms.end());
      full->set_app_data(now.app_data);
    } else {
      append_missing(now.rooms, sent.rooms, update->mutable_rooms_joined());
      append_missing(sent.rooms, now.rooms, update->mutable_rooms_left());
      if (update->rooms_joined().empty() && update->rooms_left().empty()) continue;  // changes cancelled
    }
    out_.queue(it->second.link, state_env_);
    ++stats_.state_updates;
  }
  state_sent_.clear();
}

void dispatcher::on_opened(std::uint32_t link, const pb::ConnectionOpened& m) {
  app* handler = apps_.find(m.path());
  if (handler == nullptr) {
    // The gateway routes by Register.paths, so this is a routing defect:
    // refuse the connection rather than leave the client hanging.
    ++stats_.unrouted_opens;
    log_->warn("conn={} opened for {}, which no app on this worker serves; closing it", m.conn_id(), m.path());
    queue_close(link, m.conn_id(), close_code::internal_error, "no app at this path");
    return;
  }
  if (conns_.contains(m.conn_id())) {
    log_->warn("conn={} opened twice; the first one is dropped", m.conn_id());
    forget(m.conn_id(), close_code::abnormal);
  }
  connection_state state = m.resumed() ? state_from(m.state()) : connection_state{};
  auto conn = std::make_unique<connection>(info_from(m), std::move(state));
  connection& c = *conn;
  app_stats& counted = *stats_of(handler);
  conns_.emplace(m.conn_id(), entry{std::move(conn), handler, &counted, link, {}, false});
  conns_peak_since_shed_ = std::max(conns_peak_since_shed_, conns_.size());
  ++stats_.connections_opened;
  if (m.resumed()) ++stats_.connections_resumed;
  ++counted.opened;
  guarded(c.id(), link, counted, "on_open", [&] { handler->on_open(c); });
}

void dispatcher::on_message(std::uint32_t link, const fg::link::message_view& m) {
  ++stats_.messages_in;
  const std::uint64_t ack_pos = track(link, m.seq);
  const auto it = conns_.find(m.conn_id);
  if (it == conns_.end()) {
    // Handled at once: the gateway still wants its credit back and the
    // message out of its replay buffer.
    ++stats_.messages_to_unknown;
    mark_handled(link, ack_pos);
    return;
  }
  entry& e = it->second;
  e.inbox.push_back({ack_pos, link, m.binary, false, 0,
                     payloads_.copy_of({reinterpret_cast<const char*>(m.payload.data()), m.payload.size()})});
  ++queued_;
  if (!e.ready) {
    e.ready = true;
    ready_.push_back(m.conn_id);
  }
}

std::chrono::steady_clock::time_point dispatcher::handle(conn_id id, entry& e, const inbound& item,
                                                         std::chrono::steady_clock::time_point started) {
  const message msg{item.binary ? message_kind::binary : message_kind::text, item.payload};
  app_stats& counted = *e.counted;
  ++counted.handled;
  guarded(id, e.link, counted, "on_message", [&] { e.handler->on_message(*e.conn, msg); });
  const auto ended = std::chrono::steady_clock::now();
  counted.handler_ns.observe(
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(ended - started).count()));
  return ended;
}

void dispatcher::on_closed(const pb::ConnectionClosed& m) {
  const auto it = conns_.find(m.conn_id());
  if (it == conns_.end()) return;
  const std::uint16_t code = close_code::from_link(m.code());
  if (!it->second.inbox.empty()) {
    // The app sees the messages the client sent before it closed first.
    it->second.inbox.push_back({0, it->second.link, false, true, code, {}});
    ++queued_;
    return;
  }
  forget(m.conn_id(), code);
}

void dispatcher::forget(conn_id id, std::uint16_t code) {
  const auto it = conns_.find(id);
  if (it == conns_.end()) return;
  // Still in the table during on_close, so the app may use the api on it.
  entry& e = it->second;
  guarded(id, e.link, *e.counted, "on_close", [&] { e.handler->on_close(*e.conn, code); });
  // Messages still queued for it are dropped, but count as handled: an
  // Ack must not wait for them forever.
  for (const inbound& item : e.inbox) {
    --queued_;
    if (!item.is_close) {
      ++stats_.messages_to_unknown;
      mark_handled(item.link, item.ack_pos);
    }
  }
  state_sent_.erase(id);
  conns_.erase(id);
  ++stats_.connections_closed;
}

// ------------------------------------------------------------------------ api

void dispatcher::send(conn_id to, message_kind kind, std::string_view payload) {
  const auto it = conns_.find(to);
  if (it == conns_.end()) {
    ++stats_.sends_to_unknown;
    return;
  }
  queue_send(it->second.link, std::span<const conn_id>(&to, 1), kind, payload);
}

void dispatcher::send_many(std::span<const conn_id> to, message_kind kind, std::string_view payload) {
  send_many(to, kind, payload, {});
}

void dispatcher::send_many(std::span<const conn_id> to, message_kind kind, std::string_view payload,
                           deflated_segment pre) {
  // One Send per link: a connection can only be written by the gateway
  // thread that owns it, which is the one at the other end of its link.
  std::uint32_t used_links = 0;
  for (const conn_id id : to) {
    const auto it = conns_.find(id);
    if (it == conns_.end()) {
      ++stats_.sends_to_unknown;
      continue;
    }
    const std::uint32_t link = it->second.link;
    if (link >= groups_.size()) groups_.resize(link + 1);
    if (groups_[link].empty()) ++used_links;
    groups_[link].push_back(id);
  }
  if (used_links == 0) return;
  for (std::uint32_t link = 0; link < groups_.size(); ++link) {
    auto& group = groups_[link];
    if (group.empty()) continue;
    queue_send(link, group, kind, payload, pre);
    group.clear();
  }
}

void dispatcher::close(conn_id c, std::uint16_t code, std::string_view reason) {
  const auto it = conns_.find(c);
  if (it == conns_.end()) return;
  // Forgotten only on the gateway's ConnectionClosed, after the handshake.
  queue_close(it->second.link, c, code, reason);
}

void dispatcher::keep_state(connection& c, connection_state state) {
  // The first change this turn remembers what the gateway has; the
  // StateUpdate against it leaves at the end of the turn (flush_states).
  if (conns_.contains(c.id())) state_sent_.try_emplace(c.id(), c.state());
  c.mutable_state() = std::move(state);
}

void dispatcher::queue_send(std::uint32_t link, std::span<const conn_id> to, message_kind kind,
                            std::string_view payload, deflated_segment pre) {
  // The gateway accepts envelopes of about one client message plus 64 KiB;
  // a recipient list for a huge room must not push a Send past that, so
  // it is cut into Sends of at most max_recipients_per_send ids (<= 40 KiB).
  while (!to.empty()) {
    const auto chunk = to.first(std::min(to.size(), max_recipients_per_send));
    out_.queue_send(link, chunk, kind == message_kind::binary, payload, pre);
    ++stats_.sends_out;
    to = to.subspan(chunk.size());
  }
}

void dispatcher::queue_close(std::uint32_t link, conn_id c, std::uint16_t code, std::string_view reason) {
  auto* m = close_env_.mutable_close();
  m->set_conn_id(c);
  m->set_code(code);
  m->set_reason(reason.data(), reason.size());
  out_.queue(link, close_env_);
}

void dispatcher::on_api_publish(std::uint32_t link, const pb::ApiPublish& p) {
  // The receipt goes back on the link the request came on, once.
  const std::uint64_t request = p.request();
  auto answer = [this, link, request, answered = std::make_shared<bool>(false)](publish_receipt r) {
    if (request == 0 || std::exchange(*answered, true)) return;
    pb::Envelope e;
    auto* a = e.mutable_api_published();
    a->set_request(request);
    a->set_ok(r.ok);
    a->set_offset(r.offset);
    a->set_error(r.error);
    out_.queue(link, e);
  };
  app* handler = apps_.find(p.path());
  if (handler == nullptr) {
    // The gateway only picks workers serving the path: a stale view at worst.
    ++stats_.unexpected_envelopes;
    log_->warn("publish API message for {} dropped: no app is mounted there", p.path());
    return answer({false, 0, "no app is mounted at " + p.path()});
  }
  try {
    handler->on_api_publish(p.room(), p.data(), answer);
  } catch (const std::exception& ex) {
    ++stats_.app_errors;
    log_->error("app {} failed on a publish API message for room {}: {}", p.path(), p.room(), ex.what());
    answer({false, 0, std::string("the app failed: ") + ex.what()});
  }
}

void dispatcher::deliver_room_message(std::string_view room, std::string_view payload, room_position at,
                                      deflated_segment pre) {
  apps_.for_each([&](const std::string& path, app& a) {
    try {
      a.on_room_message(room, payload, at, pre);
    } catch (const std::exception& e) {
      ++stats_.app_errors;
      log_->error("app {} failed on a message for room {}: {}", path, room, e.what());
    }
  });
  // Not part of a link's turn: what the apps kept leaves now.
  flush_states();
}

}  // namespace fg::worker
