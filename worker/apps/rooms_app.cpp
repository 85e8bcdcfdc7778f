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

bool contains(const std::vector<conn_id>& ids, conn_id id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// Every member gets a delivery's bytes but the last, which an offset
// replaces (rooms_delivery_at).
std::size_t stable_prefix_of(std::string_view delivery) { return delivery.empty() ? 0 : delivery.size() - 1; }

}  // namespace

void rooms_app::on_open(connection& c) {
  if (!c.info().resumed || c.state().rooms.empty()) return;
  // Carry on where the failed worker stopped. The list came from a peer
  // process: drop what a join would have refused, and tell the gateway
  // only if that changed anything.
  connection_state kept = c.state();
  std::vector<std::string> restored;
  for (const auto& room : kept.rooms) {
    if (!valid_room_name(room) || restored.size() >= max_rooms_per_connection) continue;
    if (std::find(restored.begin(), restored.end(), room) != restored.end()) continue;
    restored.push_back(room);
    room_members& m = members_of(room);
    m.live.push_back(c.id());
    // Present already (the failed worker's share expires): no join event.
    count_presence(room, m, c, true, false);
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
    reply_error(c, parsed.error, parsed.id);
    return;
  }
  const rooms_request& req = *parsed.request;
  if (req.op != rooms_op::leave && !room_allowed(c.info(), req.room)) {
    reply_error(c, "forbidden: the connection's token does not allow room " + json::quote(req.room), req.id);
    return;
  }
  switch (req.op) {
    case rooms_op::join: join(c, req); break;
    case rooms_op::leave: leave(c, req); break;
    case rooms_op::publish: publish(c, req); break;
    case rooms_op::presence: presence(c, req); break;
  }
}

void rooms_app::on_close(connection& c, std::uint16_t) {
  for (const auto& room : c.state().rooms) remove_member(room, c);
}

void rooms_app::on_api_publish(std::string_view room, std::string_view data,
                               std::function<void(publish_receipt)> done) {
  const std::string delivery = rooms_delivery(room, data);
  api().rooms().publish(room, delivery, publish_options{true, std::move(done), stable_prefix_of(delivery)});
}

void rooms_app::on_room_message(std::string_view room, std::string_view payload, room_position at,
                                deflated_segment pre) {
  if (const auto events_of = room_of_presence_events(room)) {
    const auto it = rooms_.find(*events_of);
    if (it != rooms_.end() && !it->second.listeners.empty())
      api().send_many(it->second.listeners, message_kind::text, payload);
    return;
  }
  const auto it = rooms_.find(room);
  if (it == rooms_.end()) return;
  room_members& m = it->second;
  // Numbered messages tell members their offset; a foreign message (no
  // position) goes out as it came.
  const std::string numbered = at.offset != 0 ? rooms_delivery_at(payload, at.offset) : std::string();
  const std::string_view delivery = at.offset != 0 ? std::string_view(numbered) : payload;
  // The offset replaces the payload's last byte: the publisher's
  // compression may cover every byte before it (stable_prefix, publish()).
  if (at.offset != 0 && pre.covers >= payload.size()) pre = {};
  if (!m.live.empty()) api().send_many(m.live, message_kind::text, delivery, pre);
  if (m.recovering.empty()) return;
  m.held.push_back({at.offset, std::string(delivery)});
  if (m.held.size() <= max_held_messages) return;
  // The history read is far behind the live traffic: end every waiting
  // recovery now, unrecovered, with everything held.
  const std::string name(room);
  const std::vector<recovering_member> waiting = m.recovering;
  for (const recovering_member& r : waiting)
    finish_recovery(name, r.id, r.ticket,
                    {room_history::outcome::unavailable, {}, 0, {}, "too many messages while reading it"});
}

std::size_t rooms_app::local_members(std::string_view room) const {
  const auto it = rooms_.find(room);
  return it == rooms_.end() ? 0 : it->second.live.size() + it->second.recovering.size();
}

void rooms_app::join(connection& c, const rooms_request& req) {
  if (req.wants_position()) {
    recover(c, req);
  } else {
    const auto& rooms = c.state().rooms;
    if (std::find(rooms.begin(), rooms.end(), req.room) == rooms.end()) {
      if (!remember_room(c, req.room, req.id)) return;
      add_live(req.room, c);
    }
    if (!req.id.empty()) answer(c, rooms_joined_plain(req.room), req.id);
  }
  if (!req.presence_events) return;
  const auto it = rooms_.find(req.room);
  if (it == rooms_.end() || contains(it->second.listeners, c.id())) return;
  if (it->second.listeners.empty()) api().rooms().subscribe(presence_events_room(req.room));
  it->second.listeners.push_back(c.id());
}

bool rooms_app::remember_room(connection& c, const std::string& room, std::string_view id) {
  const auto& rooms = c.state().rooms;
  if (std::find(rooms.begin(), rooms.end(), room) != rooms.end()) return true;
  if (rooms.size() >= max_rooms_per_connection) {
    reply_error(c, "too many rooms: a connection may be in at most " + std::to_string(max_rooms_per_connection), id);
    return false;
  }
  connection_state next = c.state();
  next.rooms.push_back(room);
  api().keep_state(c, std::move(next));
  return true;
}

void rooms_app::recover(connection& c, const rooms_request& req) {
  if (!remember_room(c, req.room, req.id)) return;
  // A member asking again (a client that saw a gap) waits like a new one;
  // its earlier request's answer, if still coming, is ignored (ticket).
  room_members& m = members_of(req.room);
  const bool was_member = erase_first(m.live, [&](conn_id id) { return id == c.id(); }) ||
                          erase_first(m.recovering, [&](const recovering_member& r) { return r.id == c.id(); });
  if (!was_member) count_presence(req.room, m, c, true, true);
  const std::uint64_t ticket = ++next_ticket_;
  m.recovering.push_back({c.id(), ticket, req.since.has_value(), std::string(req.id)});
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
  const recovering_member done = std::move(*r);
  m.recovering.erase(r);
  for (const auto& e : h.entries) api().send(id, message_kind::text, rooms_delivery_at(e.payload, e.offset));
  api().send(id, message_kind::text, with_request_id(rooms_joined(room, h, done.asked_since), done.request_id));
  // What arrived while the history was read: the part above its top (all
  // of it when the top is unknown or nothing is numbered).
  const bool known_top = h.result != room_history::outcome::unavailable && h.result != room_history::outcome::off;
  for (const auto& held : m.held)
    if (!known_top || held.offset == 0 || held.offset > h.top) api().send(id, message_kind::text, held.delivery);
  m.live.push_back(id);
  if (m.recovering.empty()) m.held.clear();
}

void rooms_app::leave(connection& c, const rooms_request& req) {
  const auto& rooms = c.state().rooms;
  const auto at = std::find(rooms.begin(), rooms.end(), req.room);
  if (at != rooms.end()) {
    connection_state next = c.state();
    next.rooms.erase(next.rooms.begin() + (at - rooms.begin()));
    remove_member(req.room, c);
    api().keep_state(c, std::move(next));
  }
  if (!req.id.empty()) answer(c, rooms_left(req.room), req.id);
}

void rooms_app::publish(connection& c, const rooms_request& req) {
  const std::string delivery = rooms_delivery(req.room, req.data);
  if (req.id.empty())
    return api().rooms().publish(req.room, delivery, publish_options{true, nullptr, stable_prefix_of(delivery)});
  // The receipt comes later: the answer needs the connection's id, the
  // room and the request's id, not the message.
  api().rooms().publish(
      req.room, delivery,
      publish_options{true,
                      [this, to = c.id(), room = req.room, id = std::string(req.id)](publish_receipt r) {
                        const std::string text =
                            r.ok ? rooms_published(room, r.offset) : rooms_error("publish failed: " + r.error);
                        api().send(to, message_kind::text, with_request_id(text, id));
                      },
                      stable_prefix_of(delivery)});
}

void rooms_app::presence(connection& c, const rooms_request& req) {
  api().rooms().presence(req.room, [this, to = c.id(), room = req.room, id = std::string(req.id)](presence_result r) {
    const std::string text = r.ok ? rooms_presence(room, r.members) : rooms_error("presence: " + r.error);
    api().send(to, message_kind::text, with_request_id(text, id));
  });
}

rooms_app::room_members& rooms_app::members_of(const std::string& room) {
  auto [it, first] = rooms_.try_emplace(room);
  if (first) api().rooms().subscribe(room);
  return it->second;
}

void rooms_app::add_live(const std::string& room, const connection& c) {
  room_members& m = members_of(room);
  m.live.push_back(c.id());
  count_presence(room, m, c, true, true);
}

void rooms_app::remove_member(std::string_view room, const connection& c) {
  const auto it = rooms_.find(room);
  if (it == rooms_.end()) return;
  room_members& m = it->second;
  const conn_id id = c.id();
  if (!erase_first(m.live, [&](conn_id x) { return x == id; }) &&
      !erase_first(m.recovering, [&](const recovering_member& r) { return r.id == id; }))
    return;
  if (erase_first(m.listeners, [&](conn_id x) { return x == id; }) && m.listeners.empty())
    api().rooms().unsubscribe(presence_events_room(room));
  count_presence(room, m, c, false, true);
  if (m.recovering.empty()) m.held.clear();
  if (!m.empty()) return;
  rooms_.erase(it);
  api().rooms().unsubscribe(room);
}

void rooms_app::count_presence(std::string_view room, room_members& m, const connection& c, bool joined,
                               bool announce) {
  const std::string& user = c.info().user;
  std::uint32_t& n = m.users[user];
  n = joined ? n + 1 : (n > 0 ? n - 1 : 0);
  api().rooms().set_presence(room, user, n);
  if (n == 0) m.users.erase(user);
  if (announce)
    api().rooms().publish(presence_events_room(room), rooms_presence_event(room, joined, user),
                          publish_options{false, nullptr});
}

void rooms_app::reply_error(connection& c, std::string_view message, std::string_view id) {
  answer(c, rooms_error(message), id);
}

void rooms_app::answer(const connection& c, std::string text, std::string_view id) {
  api().send(c.id(), message_kind::text, with_request_id(std::move(text), id));
}

}  // namespace fg::worker
