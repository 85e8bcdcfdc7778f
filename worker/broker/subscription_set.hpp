// Which rooms this worker wants (rooms with local members) and what the
// subscribe connection was told, so that the changes of one loop turn
// leave as their net difference: at most one SUBSCRIBE and one
// UNSUBSCRIBE, nothing for a join and a leave of the same room.
//
// A room is confirmed once every SUBSCRIBE/UNSUBSCRIBE sent for it was
// answered. After a (re)connect every wanted room is subscribed again;
// the resubscription is complete when each of those SUBSCRIBEs is
// answered (until then this worker cannot count itself as a subscriber).
//
// Pure: the caller sends the commands and hands the replies back.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace fg::worker {

class subscription_set {
 public:
  struct changes {
    std::vector<std::string> subscribe, unsubscribe;
  };

  // False when nothing changed (already wanted / not wanted).
  bool want(std::string_view room);
  bool unwant(std::string_view room);
  [[nodiscard]] bool wants(std::string_view room) const { return wanted_.contains(room); }

  // Rooms wanted or unwanted since the last take_changes()/drop_changes().
  [[nodiscard]] bool changed() const noexcept { return !touched_.empty(); }
  // The net difference of the changes with what the connection was told;
  // it counts as told from now on.
  changes take_changes();
  // No connection to tell: a (re)connect subscribes the whole wanted set.
  void drop_changes() noexcept { touched_.clear(); }

  // A new subscribe connection: forgets what the old one was told and
  // returns every wanted room, to subscribe again.
  std::vector<std::string> reconnect();
  // `rooms` were subscribed again after a (re)connect: they count as told,
  // and as the resubscription to complete.
  void resubscribing(const std::vector<std::string>& rooms);
  // The subscribe connection is gone: it was told nothing that still counts.
  void connection_lost();

  // A SUBSCRIBE or UNSUBSCRIBE naming `rooms` was sent.
  void sent(const std::vector<std::string>& rooms);
  // Redis answered one room of a SUBSCRIBE (`subscribe`) or an UNSUBSCRIBE.
  // True when this answer completes the resubscription.
  bool answered(std::string_view room, bool subscribe);

  // Told to the current connection and every command for it answered.
  [[nodiscard]] bool confirmed(std::string_view room) const {
    return announced_.contains(room) && !pending_.contains(room);
  }
  [[nodiscard]] bool resubscribed() const noexcept { return resub_pending_ == 0; }
  [[nodiscard]] std::size_t wanted() const noexcept { return wanted_.size(); }
  [[nodiscard]] std::size_t announced() const noexcept { return announced_.size(); }

 private:
  struct string_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  using room_set = std::unordered_set<std::string, string_hash, std::equal_to<>>;

  room_set wanted_;     // rooms with local members
  room_set announced_;  // sent on the current subscribe connection
  std::unordered_map<std::string, unsigned, string_hash, std::equal_to<>> pending_;  // replies awaited, per room
  std::vector<std::string> touched_;                                                 // changed since the last flush
  std::size_t resub_pending_ = 0;  // replies awaited for the resubscription after a reconnect
};

}  // namespace fg::worker
