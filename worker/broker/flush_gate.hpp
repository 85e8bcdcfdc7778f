// The gate in front of the outbox after the publish connection (re)connects:
// the buffered publishes leave only once the subscribers that were there
// before the outage are back, since the other workers lost Redis at the
// same moment, resubscribe on their own schedule, and Redis pub/sub keeps
// nothing for a subscriber that is not there yet.
//
// Every PUBLISH reply says how many subscribers got it; the last count per
// room is remembered (note_receivers). While holding, check() says what
// to do next: open the gate, poll again later, or ask Redis (PUBSUB
// NUMSUB) how many subscribers the buffered rooms with a count have now.
// A room with no count waits the settle time instead; all of it is
// bounded by the wait given to begin(). When the gate opens, each buffered
// publish is told the count it should reach, so a flush to fewer
// subscribers can be counted as missed.
//
// Pure: the caller sends the NUMSUB, runs the poll timer and hands the
// time in.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "worker/broker/publish_outbox.hpp"

namespace fg::worker {

class flush_gate {
 public:
  using clock = std::chrono::steady_clock;

  // Rooms whose last subscriber count is remembered. Past this, the table
  // is cleared: a room forgotten just before an outage falls back to the
  // settle time.
  static constexpr std::size_t max_counted_rooms = 65536;
  // Rooms asked about in one PUBSUB NUMSUB.
  static constexpr std::size_t max_asked_rooms = 1024;

  enum class action {
    none,       // not holding, or an answer is awaited
    open,       // open the gate: nobody is missing, or nothing is buffered
    open_late,  // open the gate: the wait is over though some are missing
    poll,       // check again after the poll interval
    ask,        // ask for the subscriber counts of step::rooms
  };
  struct step {
    action what = action::none;
    std::vector<std::string> rooms;  // for action::ask
  };

  // The publish connection is up: hold until the earlier subscribers are
  // back, or `settle` for rooms with no count, at most max(wait, settle).
  void begin(clock::time_point now, std::chrono::milliseconds settle, std::chrono::milliseconds wait);
  // Stop holding (the connection is gone, or the broker stops); an answer
  // to an earlier question is ignored from now on.
  void cancel();
  [[nodiscard]] bool holding() const noexcept { return holding_; }

  // What to do now. `self_subscribed`: this worker's own resubscription
  // is acknowledged (until then it cannot count itself).
  [[nodiscard]] step check(clock::time_point now, const publish_outbox& outbox, bool self_subscribed);
  // Changes with every begin() and cancel(): a question carries it, and an
  // answer carrying another one is ignored.
  [[nodiscard]] std::uint64_t generation() const noexcept { return generation_; }
  // The question of check() was sent: check() says none until answered().
  void asked() noexcept { asking_ = true; }
  // `n` subscribers of `room` now is as many as before the outage (or the
  // room has no count).
  [[nodiscard]] bool back(std::string_view room, long long n) const;
  // The answer arrived: `all_back` when every room asked about is back.
  // Returns open or poll.
  action answered(bool all_back, clock::time_point now);
  // Stops holding; each publish not yet written in `outbox` is told the
  // count it should reach (-1: none).
  void open(publish_outbox& outbox);

  // A PUBLISH to `room` reached `n` subscribers.
  void note_receivers(std::string_view room, long long n);
  // The subscribers the last PUBLISH to `room` reached; -1 if unknown.
  [[nodiscard]] long long receivers(std::string_view room) const;

 private:
  struct string_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };

  bool holding_ = false;
  bool asking_ = false;
  bool uncounted_ = false;        // a buffered room has no count: also wait the settle time
  std::uint64_t generation_ = 0;  // an answer of an earlier gate is ignored
  clock::time_point deadline_, settle_until_;
  std::unordered_map<std::string, long long, string_hash, std::equal_to<>> receivers_;  // bounded
};

}  // namespace fg::worker
