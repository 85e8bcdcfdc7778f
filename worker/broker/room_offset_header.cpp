#include "worker/broker/room_offset_header.hpp"

namespace fg::worker {

namespace {

constexpr std::string_view magic = "fgo ";

bool epoch_char(char c) noexcept { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'); }

}  // namespace

bool valid_room_epoch(std::string_view epoch) noexcept {
  if (epoch.empty() || epoch.size() > max_room_epoch_bytes) return false;
  for (const char c : epoch)
    if (!epoch_char(c)) return false;
  return true;
}

std::optional<room_offset_header> parse_room_offset_header(std::string_view message) noexcept {
  if (!message.starts_with(magic)) return std::nullopt;
  std::string_view s = message.substr(magic.size());
  const std::size_t space = s.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  room_offset_header h;
  h.epoch = s.substr(0, space);
  if (!valid_room_epoch(h.epoch)) return std::nullopt;
  s.remove_prefix(space + 1);
  std::size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') {
    if (digits == 14) return std::nullopt;  // above max_room_offset
    h.offset = h.offset * 10 + static_cast<std::uint64_t>(s[digits] - '0');
    ++digits;
  }
  if (digits == 0 || (digits > 1 && s[0] == '0') || h.offset == 0) return std::nullopt;
  if (digits == s.size() || s[digits] != '\n') return std::nullopt;
  h.rest = s.substr(digits + 1);
  return h;
}

}  // namespace fg::worker
