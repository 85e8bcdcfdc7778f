#include "worker/runtime/dispatcher.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

#include "common/close_codes.hpp"

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
  return info;
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

// ---------------------------------------------------------------- link events

void dispatcher::on_link_up(std::uint32_t link) {
  ack_of(link) = {};
  if (link == 0 && hub_ != nullptr) hub_->on_hub_up();
}

void dispatcher::on_link_down(std::uint32_t link) {
  ack_of(link) = {};
  std::vector<conn_id> gone;
  for (const auto& [id, e] : conns_)
    if (e.link == link) gone.push_back(id);
  // Their link is gone: they ended without a close handshake.
  for (const conn_id id : gone) forget(id, close_code::abnormal);
  if (link == 0 && hub_ != nullptr) hub_->on_hub_down();
}

void dispatcher::on_envelope(std::uint32_t link, const pb::Envelope& e) {
  switch (e.body_case()) {
    case pb::Envelope::kMessage: on_message(link, e.message()); break;
    case pb::Envelope::kOpened: on_opened(link, e.opened()); break;
    case pb::Envelope::kClosed: on_closed(e.closed()); break;
    case pb::Envelope::kPing: {
      pong_env_.mutable_pong()->set_nonce(e.ping().nonce());
      out_.queue(link, pong_env_);
      break;
    }
    case pb::Envelope::kBrokerDeliver:
      if (hub_ != nullptr) hub_->on_hub_deliver(e.broker_deliver().room(), e.broker_deliver().payload());
      break;
    case pb::Envelope::kApiPublish: on_api_publish(e.api_publish()); break;
    case pb::Envelope::kPong: break;  // we send no pings yet; harmless
    default:
      // A gateway never sends these to a worker; ignoring keeps the link
      // (and every connection on it) up while the count shows the defect.
      if (stats_.unexpected_envelopes++ == 0)
        log_->warn("ignoring an unexpected envelope (body case {}) on link {}", static_cast<int>(e.body_case()), link);
      break;
  }
}

void dispatcher::end_batch(std::uint32_t link) {
  link_ack& a = ack_of(link);
  if (!a.pending) return;
  a.pending = false;
  ack_env_.mutable_ack()->set_seq(a.highest);
  out_.queue(link, ack_env_);
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
  conns_.emplace(m.conn_id(), entry{std::move(conn), handler, &counted, link});
  ++stats_.connections_opened;
  if (m.resumed()) ++stats_.connections_resumed;
  ++counted.opened;
  guarded(c.id(), link, counted, "on_open", [&] { handler->on_open(c); });
}

void dispatcher::on_message(std::uint32_t link, const pb::Message& m) {
  ++stats_.messages_in;
  // Handled even when the connection is gone: the gateway still wants
  // its credit back and the message out of its replay buffer.
  link_ack& a = ack_of(link);
  if (!a.pending || m.seq() > a.highest) a.highest = m.seq();
  a.pending = true;

  const auto it = conns_.find(m.conn_id());
  if (it == conns_.end()) {
    ++stats_.messages_to_unknown;
    return;
  }
  entry& e = it->second;
  const message msg{m.binary() ? message_kind::binary : message_kind::text, m.payload()};
  app_stats& counted = *e.counted;
  ++counted.handled;
  const auto started = std::chrono::steady_clock::now();
  guarded(m.conn_id(), e.link, counted, "on_message", [&] { e.handler->on_message(*e.conn, msg); });
  counted.handler_ns.observe(static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started).count()));
}

void dispatcher::on_closed(const pb::ConnectionClosed& m) {
  if (!conns_.contains(m.conn_id())) return;
  forget(m.conn_id(), close_code::from_link(m.code()));
}

void dispatcher::forget(conn_id id, std::uint16_t code) {
  const auto it = conns_.find(id);
  if (it == conns_.end()) return;
  // Still in the table during on_close, so the app may use the api on it.
  entry& e = it->second;
  guarded(id, e.link, *e.counted, "on_close", [&] { e.handler->on_close(*e.conn, code); });
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
    queue_send(link, group, kind, payload);
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
  const auto it = conns_.find(c.id());
  c.mutable_state() = std::move(state);
  if (it == conns_.end()) return;
  auto* update = state_env_.mutable_state();
  update->set_conn_id(c.id());
  auto* s = update->mutable_state();
  s->mutable_rooms()->Assign(c.state().rooms.begin(), c.state().rooms.end());
  s->set_app_data(c.state().app_data);
  out_.queue(it->second.link, state_env_);
}

void dispatcher::queue_send(std::uint32_t link, std::span<const conn_id> to, message_kind kind,
                            std::string_view payload) {
  auto* s = send_env_.mutable_send();
  s->set_binary(kind == message_kind::binary);
  s->set_payload(payload.data(), payload.size());
  // The gateway accepts envelopes of about one client message plus 64 KiB;
  // a recipient list for a huge room must not push a Send past that, so
  // it is cut into Sends of at most max_recipients_per_send ids (<= 40 KiB).
  while (!to.empty()) {
    const auto chunk = to.first(std::min(to.size(), max_recipients_per_send));
    s->mutable_conn_ids()->Assign(chunk.begin(), chunk.end());
    out_.queue(link, send_env_);
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

void dispatcher::on_api_publish(const pb::ApiPublish& p) {
  app* handler = apps_.find(p.path());
  if (handler == nullptr) {
    // The gateway only picks workers serving the path: a stale view at worst.
    ++stats_.unexpected_envelopes;
    log_->warn("publish API message for {} dropped: no app is mounted there", p.path());
    return;
  }
  try {
    handler->on_api_publish(p.room(), p.data());
  } catch (const std::exception& ex) {
    ++stats_.app_errors;
    log_->error("app {} failed on a publish API message for room {}: {}", p.path(), p.room(), ex.what());
  }
}

void dispatcher::deliver_room_message(std::string_view room, std::string_view payload) {
  apps_.for_each([&](const std::string& path, app& a) {
    try {
      a.on_room_message(room, payload);
    } catch (const std::exception& e) {
      ++stats_.app_errors;
      log_->error("app {} failed on a message for room {}: {}", path, room, e.what());
    }
  });
}

}  // namespace fg::worker
