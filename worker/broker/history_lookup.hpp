// What a history read means for the position a client asked for: the
// pure half of broker::history (the Redis half is history_scripts.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "worker/app.hpp"

namespace fg::worker {

// What the read script returned, entries already checked (a forged or
// unreadable entry is left out, and so shows as a gap).
struct history_read {
  std::string epoch;
  std::uint64_t top = 0;
  std::vector<room_history::entry> entries;  // ascending offsets above the asked one
};

// current without `since`; otherwise recovered only when the entries are
// exactly the offsets since->offset + 1 .. top of the same epoch.
room_history judge_history(const std::optional<history_since>& since, history_read read);

// The metric label of `o`.
const char* history_outcome_name(room_history::outcome o) noexcept;
inline constexpr std::size_t history_outcome_count = 7;
using history_outcome_counts = std::array<std::uint64_t, history_outcome_count>;

}  // namespace fg::worker
