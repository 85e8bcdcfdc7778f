#include "worker/broker/history_lookup.hpp"

#include <utility>

namespace fg::worker {

namespace {

bool contiguous(const std::vector<room_history::entry>& entries, std::uint64_t after, std::uint64_t top) {
  if (entries.size() != top - after) return false;
  std::uint64_t want = after + 1;
  for (const auto& e : entries)
    if (e.offset != want++) return false;
  return true;
}

}  // namespace

room_history judge_history(const std::optional<history_since>& since, history_read read) {
  room_history h;
  h.epoch = std::move(read.epoch);
  h.top = read.top;
  if (!since) {
    h.result = room_history::outcome::current;
  } else if (since->epoch != h.epoch) {
    h.result = room_history::outcome::epoch_changed;
  } else if (since->offset > h.top) {
    h.result = room_history::outcome::ahead;
  } else if (contiguous(read.entries, since->offset, h.top)) {
    h.result = room_history::outcome::recovered;
    h.entries = std::move(read.entries);
  } else {
    h.result = room_history::outcome::trimmed;
  }
  return h;
}

const char* history_outcome_name(room_history::outcome o) noexcept {
  switch (o) {
    case room_history::outcome::current: return "current";
    case room_history::outcome::recovered: return "recovered";
    case room_history::outcome::epoch_changed: return "epoch_changed";
    case room_history::outcome::trimmed: return "trimmed";
    case room_history::outcome::ahead: return "ahead";
    case room_history::outcome::unavailable: return "unavailable";
    case room_history::outcome::off: return "off";
  }
  return "unknown";
}

}  // namespace fg::worker
