#include "worker/apps/rooms_app.hpp"

#include <algorithm>

#include "worker/apps/rooms_protocol.hpp"

namespace fg::worker {

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
    add_member(room, c.id());
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
  switch (req.op) {
    case rooms_op::join: join(c, req.room); break;
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

void rooms_app::on_room_message(std::string_view room, std::string_view payload) {
  const auto it = members_.find(room);
  if (it == members_.end()) return;
  api().send_many(it->second, message_kind::text, payload);
}

std::size_t rooms_app::local_members(std::string_view room) const {
  const auto it = members_.find(room);
  return it == members_.end() ? 0 : it->second.size();
}

void rooms_app::join(connection& c, const std::string& room) {
  const auto& rooms = c.state().rooms;
  if (std::find(rooms.begin(), rooms.end(), room) != rooms.end()) return;
  if (rooms.size() >= max_rooms_per_connection) {
    reply_error(c, "too many rooms: a connection may be in at most " + std::to_string(max_rooms_per_connection));
    return;
  }
  connection_state next = c.state();
  next.rooms.push_back(room);
  add_member(room, c.id());
  api().keep_state(c, std::move(next));
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

void rooms_app::add_member(const std::string& room, conn_id id) {
  auto [it, first] = members_.try_emplace(room);
  it->second.push_back(id);
  if (first) api().rooms().subscribe(room);
}

void rooms_app::remove_member(std::string_view room, conn_id id) {
  const auto it = members_.find(room);
  if (it == members_.end()) return;
  auto& ids = it->second;
  // Order does not matter to a broadcast: swap-and-pop.
  if (const auto at = std::find(ids.begin(), ids.end(), id); at != ids.end()) {
    *at = ids.back();
    ids.pop_back();
  }
  if (!ids.empty()) return;
  api().rooms().unsubscribe(room);
  members_.erase(it);
}

void rooms_app::reply_error(connection& c, std::string_view message) {
  api().send(c.id(), message_kind::text, rooms_error(message));
}

}  // namespace fg::worker
