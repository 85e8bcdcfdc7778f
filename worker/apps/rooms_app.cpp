#include "worker/apps/rooms_app.hpp"

#include <algorithm>

#include "common/json/json_text.hpp"
#include "worker/apps/room_permissions.hpp"

namespace fg::worker {

namespace {

// Order does not matter to a broadcast: swap-and-pop.
template <typename T, typename Pred>
bool erase_first(std::vector<T>& v, Pred pred) {
  const auto at = std::find_if(v.begin(), v.end(), pred);
  if (at == v.end()) return false;
  *at = std::move(v.back());
  v.pop_back();
  return true;
}

}  // namespace

void rooms_app::on_open(connection& c) {
  if (!c.info().resumed || c.state().rooms.empty()) return;
  // Carry on where the failed worker stopped. The list came from a peer
  // process: drop what a join would have refused, and tell the gateway
  // only if that changed anything.
  connection_state kept = c.state();
  std::vector<std::string> restored;
  for (const auto& room : kept.rooms) {
    if (room.empty() || room.size() > max_room_name_bytes || restored.size() >= max_rooms_per_connection) continue;
    if (std::find(restored.begin(), restored.end(), room) != restored.end()) continue;
    restored.push_back(room);
    add_live(room, c.id());
  }
  if (restored.size() != kept.rooms.size()) {
    kept.rooms = std::move(restored);
    api().keep_state(c, std::move(kept));
  }
}

void rooms_app::on_message(connection& c, message m) {
  if (m.kind == message_kind::binary) {
    reply_error(c, "binary messages are not supported: send JSON text");
    return;
  }
  auto parsed = parse_rooms_request(m.payload);
  if (!parsed.request) {
    reply_error(c, parsed.error);
    return;
  }
  const rooms_request& req = *parsed.request;
  if (req.op != rooms_op::leave && !room_allowed(c.info(), req.room)) {
    reply_error(c, "forbidden: the connection's token does not allow room " + json::quote(req.room));
    return;
  }
  switch (req.op) {
    case rooms_op::join: join(c, req); break;
    case rooms_op::leave: leave(c, req.room); break;
    case rooms_op::publish: api().rooms().publish(req.room, rooms_delivery(req.room, req.data)); break;
  }
}

void rooms_app::on_close(connection& c, std::uint16_t) {
  for (const auto& room : c.state().rooms) remove_member(room, c.id());
}

void rooms_app::on_api_publish(std::string_view room, std::string_view data) {
  api().rooms().publish(room, rooms_delivery(room, data));
}

void rooms_app::on_room_message(std::string_view room, std::string_view payload, room_position at) {
  const auto it = rooms_.find(room);
  if (it == rooms_.end()) return;
  room_members& m = it->second;
  // Numbered messages tell members their offset; a foreign message (no
  // position) goes out as it came.
  const std::string numbered = at.offset != 0 ? rooms_delivery_at(payload, at.offset) : std::string();
  const std::string_view delivery = at.offset != 0 ? std::string_view(numbered) : payload;
  if (!m.live.empty()) api().send_many(m.live, message_kind::text, delivery);
  if (m.recovering.empty()) return;
  m.held.push_back({at.offset, std::string(delivery)});
  if (m.held.size() <= max_held_messages) return;
  // The history read is far behind the live traffic: end every waiting
  // recovery now, unrecovered, with everything held.
  const std::string name(room);
  for (const recovering_member r : std::vector<recovering_member>(m.recovering))
    finish_recovery(name, r.id, r.ticket,
                    {room_history::outcome::unavailable, {}, 0, {}, "too many messages while reading it"});
}

std::size_t rooms_app::local_members(std::string_view room) const {
  const auto it = rooms_.find(room);
  return it == rooms_.end() ? 0 : it->second.live.size() + it->second.recovering.size();
}

void rooms_app::join(connection& c, const rooms_request& req) {
  if (req.wants_position()) return recover(c, req);
  const auto& rooms = c.state().rooms;
  if (std::find(rooms.begin(), rooms.end(), req.room) != rooms.end()) return;
  if (!remember_room(c, req.room)) return;
  add_live(req.room, c.id());
}

bool rooms_app::remember_room(connection& c, const std::string& room) {
  const auto& rooms = c.state().rooms;
  if (std::find(rooms.begin(), rooms.end(), room) != rooms.end()) return true;
  if (rooms.size() >= max_rooms_per_connection) {
    reply_error(c, "too many rooms: a connection may be in at most " + std::to_string(max_rooms_per_connection));
    return false;
  }
  connection_state next = c.state();
  next.rooms.push_back(room);
  api().keep_state(c, std::move(next));
  return true;
}

void rooms_app::recover(connection& c, const rooms_request& req) {
  if (!remember_room(c, req.room)) return;
  // A member asking again (a client that saw a gap) waits like a new one;
  // its earlier request's answer, if still coming, is ignored (ticket).
  room_members& m = members_of(req.room);
  erase_first(m.live, [&](conn_id id) { return id == c.id(); });
  erase_first(m.recovering, [&](const recovering_member& r) { return r.id == c.id(); });
  const std::uint64_t ticket = ++next_ticket_;
  m.recovering.push_back({c.id(), ticket, req.since.has_value()});
  // May answer at once (no history): the member is already waiting.
  api().rooms().history(req.room, req.since, [this, room = req.room, id = c.id(), ticket](room_history h) {
    finish_recovery(room, id, ticket, std::move(h));
  });
}

void rooms_app::finish_recovery(const std::string& room, conn_id id, std::uint64_t ticket, room_history h) {
  const auto it = rooms_.find(room);
  if (it == rooms_.end()) return;  // left, or closed, meanwhile
  room_members& m = it->second;
  const auto r = std::find_if(m.recovering.begin(), m.recovering.end(),
                              [&](const recovering_member& x) { return x.id == id && x.ticket == ticket; });
  if (r == m.recovering.end()) return;
  const bool asked_since = r->asked_since;
  m.recovering.erase(r);
  for (const auto& e : h.entries) api().send(id, message_kind::text, rooms_delivery_at(e.payload, e.offset));
  api().send(id, message_kind::text, rooms_joined(room, h, asked_since));
  // What arrived while the history was read: the part above its top (all
  // of it when the top is unknown or nothing is numbered).
  const bool known_top = h.result != room_history::outcome::unavailable && h.result != room_history::outcome::off;
  for (const auto& held : m.held)
    if (!known_top || held.offset == 0 || held.offset > h.top) api().send(id, message_kind::text, held.delivery);
  m.live.push_back(id);
  if (m.recovering.empty()) m.held.clear();
}

void rooms_app::leave(connection& c, const std::string& room) {
  const auto& rooms = c.state().rooms;
  const auto at = std::find(rooms.begin(), rooms.end(), room);
  if (at == rooms.end()) return;
  connection_state next = c.state();
  next.rooms.erase(next.rooms.begin() + (at - rooms.begin()));
  remove_member(room, c.id());
  api().keep_state(c, std::move(next));
}

rooms_app::room_members& rooms_app::members_of(const std::string& room) {
  auto [it, first] = rooms_.try_emplace(room);
  if (first) api().rooms().subscribe(room);
  return it->second;
}

void rooms_app::add_live(const std::string& room, conn_id id) { members_of(room).live.push_back(id); }

void rooms_app::remove_member(std::string_view room, conn_id id) {
  const auto it = rooms_.find(room);
  if (it == rooms_.end()) return;
  room_members& m = it->second;
  if (!erase_first(m.live, [&](conn_id x) { return x == id; }))
    erase_first(m.recovering, [&](const recovering_member& r) { return r.id == id; });
  if (m.recovering.empty()) m.held.clear();
  if (!m.empty()) return;
  rooms_.erase(it);
  api().rooms().unsubscribe(room);
}

void rooms_app::reply_error(connection& c, std::string_view message) {
  api().send(c.id(), message_kind::text, rooms_error(message));
}

}  // namespace fg::worker
