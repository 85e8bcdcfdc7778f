#include "common/link/hot_envelopes.hpp"

namespace fg::link {

namespace {

using wire::field;
using wire::wire_type;

// Envelope's oneof fields are 1..16 (link.proto); others are unknown.
constexpr std::uint32_t last_envelope_field = 16;
constexpr std::uint32_t message_field = 4;
constexpr std::uint32_t send_field = 6;

// The bytes of the one `body` field of `envelope`, when it holds that
// field once and nothing else that libprotobuf would read as known.
std::optional<std::span<const std::uint8_t>> sole_body(std::span<const std::uint8_t> envelope,
                                                       std::uint32_t body) noexcept {
  std::optional<std::span<const std::uint8_t>> found;
  const bool readable = wire::for_each_field(envelope, [&](const field& f) {
    if (f.number > last_envelope_field) return true;  // unknown: skipped
    if (f.number != body || f.type != wire_type::length_delimited || found) return false;
    found = f.bytes;
    return true;
  });
  return readable ? found : std::nullopt;
}

// Counts the varints filling `packed` exactly; nothing when one is broken.
std::optional<std::size_t> count_packed(std::span<const std::uint8_t> packed) noexcept {
  const std::uint8_t* p = packed.data();
  const std::uint8_t* const end = p + packed.size();
  std::size_t n = 0;
  for (std::uint64_t ignored = 0; p != end; ++n)
    if ((p = wire::get_varint(p, end, ignored)) == nullptr) return std::nullopt;
  return n;
}

}  // namespace

std::optional<send_view> send_view::parse(std::span<const std::uint8_t> envelope) noexcept {
  const auto body = sole_body(envelope, send_field);
  if (!body) return std::nullopt;
  send_view v;
  v.send_ = *body;
  const bool taken = wire::for_each_field(*body, [&](const field& f) {
    switch (f.number) {
      case conn_ids_field:
        if (f.type == wire_type::varint) {
          ++v.recipients_;
          return true;
        }
        if (f.type != wire_type::length_delimited) return false;
        if (const auto n = count_packed(f.bytes)) {
          v.recipients_ += *n;
          return true;
        }
        return false;
      case 2:  // binary
        if (f.type != wire_type::varint) return false;
        v.binary_ = f.value != 0;
        return true;
      case 3:  // payload
        if (f.type != wire_type::length_delimited) return false;
        v.payload_ = f.bytes;
        return true;
      case 4:  // deflated_prefix
        if (f.type != wire_type::length_delimited) return false;
        v.deflated_ = f.bytes;
        return true;
      case 5:  // deflated_covers
        if (f.type != wire_type::varint) return false;
        v.covers_ = f.value;
        return true;
      default: return true;  // unknown: skipped
    }
  });
  return taken ? std::optional<send_view>(v) : std::nullopt;
}

std::optional<message_view> message_view::parse(std::span<const std::uint8_t> envelope) noexcept {
  const auto body = sole_body(envelope, message_field);
  if (!body) return std::nullopt;
  message_view m;
  const bool taken = wire::for_each_field(*body, [&](const field& f) {
    if (f.number > 4) return true;  // unknown: skipped
    if (f.type != (f.number == 3 ? wire_type::length_delimited : wire_type::varint)) return false;
    switch (f.number) {
      case 1: m.conn_id = f.value; break;
      case 2: m.binary = f.value != 0; break;
      case 3: m.payload = f.bytes; break;
      case 4: m.seq = f.value; break;
    }
    return true;
  });
  return taken ? std::optional<message_view>(m) : std::nullopt;
}

}  // namespace fg::link
