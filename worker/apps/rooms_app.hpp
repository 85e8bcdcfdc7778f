// /rooms: named rooms across the whole cluster (protocol: rooms_protocol.hpp,
// docs/PROTOCOL.md).
//
// Local members are kept per room; the worker is subscribed to a room in
// the broker exactly while it has at least one local member in it (the
// first join subscribes, the last leave or close unsubscribes). A publish
// goes to the broker, not to local members: the broker delivers it back
// to every subscribed worker, this one included, and each worker sends it
// with one send_many to its own members. So every member anywhere gets it
// once, and a publisher that is not a member gets nothing back.
//
// Recovery. A join with "recover" or "since" makes the member wait while
// the broker reads the room's history (broker::history). Live messages
// that arrive meanwhile are held for the waiting members; when the history
// comes, the member gets the recovered messages, the "joined" answer, then
// the held messages above the history's top, and becomes a live member:
// every message once, in offset order, no gap between history and live.
//
// Memberships are kept with api::keep_state (state.rooms), so when this
// worker dies the gateway hands them to the connection's next worker,
// which restores them from the resumed ConnectionOpened (as live members:
// clients find what they missed by the gap in offsets, and ask with
// "since").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "worker/app.hpp"
#include "worker/apps/rooms_protocol.hpp"

namespace fg::worker {

class rooms_app final : public app {
 public:
  // Bounds the state the gateway keeps per connection.
  static constexpr std::size_t max_rooms_per_connection = 256;
  // Live messages held for a room's recovering members; past it their
  // recoveries end at once, unrecovered (the history read is too slow).
  static constexpr std::size_t max_held_messages = 10'000;

  void on_open(connection& c) override;
  void on_message(connection& c, message m) override;
  void on_close(connection& c, std::uint16_t code) override;
  void on_room_message(std::string_view room, std::string_view payload, room_position at,
                       deflated_segment pre) override;
  // The publish API's message: delivered exactly like a client's publish.
  void on_api_publish(std::string_view room, std::string_view data, std::function<void(publish_receipt)> done) override;

  // Local members of `room` (0 when this worker has none), recovering ones included.
  [[nodiscard]] std::size_t local_members(std::string_view room) const;
  [[nodiscard]] std::size_t room_count() const noexcept { return rooms_.size(); }

 private:
  struct string_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  struct recovering_member {
    conn_id id = 0;
    std::uint64_t ticket = 0;  // tells this request's answer from an earlier one's
    bool asked_since = false;
    std::string request_id;  // the join's "id", repeated in its answer
  };
  struct held_message {
    std::uint64_t offset = 0;
    std::string delivery;
  };
  struct room_members {
    std::vector<conn_id> live;
    std::vector<recovering_member> recovering;
    std::vector<held_message> held;  // while any member recovers
    std::vector<conn_id> listeners;  // members that asked for presence events (subscribed to them while any)
    std::unordered_map<std::string, std::uint32_t> users;  // local connections per user (presence)
    [[nodiscard]] bool empty() const noexcept { return live.empty() && recovering.empty(); }
  };
  using room_map = std::unordered_map<std::string, room_members, string_hash, std::equal_to<>>;

  void join(connection& c, const rooms_request& req);
  void leave(connection& c, const rooms_request& req);
  void publish(connection& c, const rooms_request& req);
  void presence(connection& c, const rooms_request& req);
  // Adds the room to the connection's kept state; false (answered) when
  // the connection is in too many rooms.
  bool remember_room(connection& c, const std::string& room, std::string_view id);
  room_members& members_of(const std::string& room);
  void add_live(const std::string& room, const connection& c);
  void remove_member(std::string_view room, const connection& c);
  // One more or one less local connection of c's user in the room: the
  // broker's presence share, and (unless restored) an event for listeners.
  void count_presence(std::string_view room, room_members& m, const connection& c, bool joined, bool announce);
  void recover(connection& c, const rooms_request& req);
  void finish_recovery(const std::string& room, conn_id id, std::uint64_t ticket, room_history h);
  void reply_error(connection& c, std::string_view message, std::string_view id = {});
  void answer(const connection& c, std::string text, std::string_view id);

  room_map rooms_;
  std::uint64_t next_ticket_ = 0;
};

}  // namespace fg::worker
