// /rooms: named rooms across the whole cluster (protocol: rooms_protocol.hpp).
//
// Local members are kept per room; the worker is subscribed to a room in
// the broker exactly while it has at least one local member in it (the
// first join subscribes, the last leave or close unsubscribes). A publish
// goes to the broker, not to local members: the broker delivers it back
// to every subscribed worker, this one included, and each worker sends it
// with one send_many to its own members. So every member anywhere gets it
// once, and a publisher that is not a member gets nothing back.
//
// Memberships are kept with api::keep_state (state.rooms), so when this
// worker dies the gateway hands them to the connection's next worker,
// which restores them from the resumed ConnectionOpened.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "worker/app.hpp"

namespace fg::worker {

class rooms_app final : public app {
 public:
  // Bounds the state the gateway keeps per connection.
  static constexpr std::size_t max_rooms_per_connection = 256;

  void on_open(connection& c) override;
  void on_message(connection& c, message m) override;
  void on_close(connection& c, std::uint16_t code) override;
  void on_room_message(std::string_view room, std::string_view payload) override;
  // The publish API's message: delivered exactly like a client's publish.
  void on_api_publish(std::string_view room, std::string_view data) override;

  // Local members of `room` (0 when this worker has none).
  [[nodiscard]] std::size_t local_members(std::string_view room) const;
  [[nodiscard]] std::size_t room_count() const noexcept { return members_.size(); }

 private:
  struct string_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };

  void join(connection& c, const std::string& room);
  void leave(connection& c, const std::string& room);
  void add_member(const std::string& room, conn_id id);
  void remove_member(std::string_view room, conn_id id);
  void reply_error(connection& c, std::string_view message);

  std::unordered_map<std::string, std::vector<conn_id>, string_hash, std::equal_to<>> members_;
};

}  // namespace fg::worker
