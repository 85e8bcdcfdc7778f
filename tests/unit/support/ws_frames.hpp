// Shared helpers for the WebSocket engine tests: a client-frame builder
// (masked by default, every header field overridable so malformed frames
// can be built too) and a splitter that feeds an input in pieces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/ws/protocol.hpp"
#include "gateway/ws/unmask.hpp"

namespace fg::test {

using bytes = std::vector<std::uint8_t>;

inline bytes to_bytes(std::string_view s) { return bytes(s.begin(), s.end()); }
inline std::string to_string(std::span<const std::uint8_t> b) { return std::string(b.begin(), b.end()); }

inline bytes concat(std::initializer_list<bytes> parts) {
  bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// A payload whose bytes differ from position to position, so a payload
// delivered shifted, truncated or unmasked with the wrong phase is noticed.
inline bytes pattern(std::size_t size, std::uint8_t seed = 0) {
  bytes out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<std::uint8_t>(i * 31 + seed + (i >> 8));
  return out;
}

enum class length_form { minimal, bits16, bits64 };

struct frame_spec {
  std::uint8_t opcode = 0x1;  // raw nibble, so reserved opcodes can be built
  bool fin = true;
  std::uint8_t rsv = 0;  // any of 0x40 (RSV1), 0x20 (RSV2), 0x10 (RSV3)
  bool masked = true;
  ws::mask_key key{0x37, 0xFA, 0x21, 0x3D};
  length_form form = length_form::minimal;
  // Overrides the length written in the header (the payload is still
  // appended as given), for headers that announce more than is sent.
  std::optional<std::uint64_t> declared_length{};
};

inline bytes build_frame(const frame_spec& s, std::span<const std::uint8_t> payload) {
  const std::uint64_t len = s.declared_length.value_or(payload.size());
  bytes out;
  out.push_back(static_cast<std::uint8_t>((s.fin ? 0x80 : 0) | s.rsv | (s.opcode & 0x0F)));
  const std::uint8_t mask_bit = s.masked ? 0x80 : 0;
  length_form form = s.form;
  if (form == length_form::minimal)
    form = len < 126 ? length_form::minimal : len <= 0xFFFF ? length_form::bits16 : length_form::bits64;
  if (form == length_form::minimal) {
    out.push_back(static_cast<std::uint8_t>(mask_bit | len));
  } else if (form == length_form::bits16) {
    out.push_back(static_cast<std::uint8_t>(mask_bit | 126));
    out.push_back(static_cast<std::uint8_t>(len >> 8));
    out.push_back(static_cast<std::uint8_t>(len));
  } else {
    out.push_back(static_cast<std::uint8_t>(mask_bit | 127));
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(len >> (56 - 8 * i)));
  }
  if (s.masked) out.insert(out.end(), s.key.begin(), s.key.end());
  for (std::size_t i = 0; i < payload.size(); ++i)
    out.push_back(static_cast<std::uint8_t>(payload[i] ^ (s.masked ? s.key[i & 3] : 0)));
  return out;
}

inline bytes frame(std::uint8_t opcode, std::span<const std::uint8_t> payload, bool fin = true) {
  return build_frame({.opcode = opcode, .fin = fin}, payload);
}
inline bytes frame(std::uint8_t opcode, std::string_view payload, bool fin = true) {
  return frame(opcode, to_bytes(payload), fin);
}

// Opcode nibbles, as raw bytes for the builder.
inline constexpr std::uint8_t op_cont = 0x0, op_text = 0x1, op_binary = 0x2, op_close = 0x8, op_ping = 0x9,
                              op_pong = 0xA;

// A close frame payload: big-endian code then reason.
inline bytes close_payload(std::uint16_t code, std::string_view reason = {}) {
  bytes out{static_cast<std::uint8_t>(code >> 8), static_cast<std::uint8_t>(code)};
  out.insert(out.end(), reason.begin(), reason.end());
  return out;
}

// Feeds `input` cut at `cuts` (ascending offsets). Every piece gets its own
// heap copy, so a read past a piece's end is caught by ASan, and the caller's
// input is left masked for the next split. Stops at the first error.
template <class Feed>
ws::error feed_pieces(const bytes& input, std::span<const std::size_t> cuts, Feed&& feed) {
  std::size_t from = 0;
  auto feed_range = [&](std::size_t to) {
    bytes piece(input.begin() + static_cast<std::ptrdiff_t>(from), input.begin() + static_cast<std::ptrdiff_t>(to));
    from = to;
    return feed(std::span<std::uint8_t>(piece));
  };
  for (std::size_t cut : cuts)
    if (ws::error e = feed_range(cut); e != ws::error::none) return e;
  return feed_range(input.size());
}

// All the ways the tests split an input: whole, every 2-way split, every
// 3-way split for short inputs, and byte at a time.
inline std::vector<std::vector<std::size_t>> all_splits(std::size_t size, std::size_t three_way_up_to = 64) {
  std::vector<std::vector<std::size_t>> out{{}};
  for (std::size_t a = 0; a <= size; ++a) out.push_back({a});
  if (size <= three_way_up_to)
    for (std::size_t a = 1; a < size; ++a)
      for (std::size_t b = a + 1; b < size; ++b) out.push_back({a, b});
  std::vector<std::size_t> each;
  for (std::size_t a = 1; a < size; ++a) each.push_back(a);
  out.push_back(each);
  return out;
}

inline std::string describe(std::span<const std::size_t> cuts) {
  std::string s = "cuts:";
  for (std::size_t c : cuts) s += " " + std::to_string(c);
  return s;
}

}  // namespace fg::test
