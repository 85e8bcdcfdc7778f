// The link codec: length-prefixed protobuf envelopes, batched both ways.
//
// Wire layout of one envelope (all integers big-endian):
//   0      2        3        4               8
//   +------+--------+--------+---------------+-------------------------+
//   | "FG" | version| flags  | length (u32)  | Envelope (protobuf)     |
//   +------+--------+--------+---------------+-------------------------+
// The decoder is pure: bytes in, envelopes out. It checks magic, version
// and the length limit before it parses a byte of protobuf, and a decode
// error is final for the link (the caller closes it and logs the reason).
//
// Hot envelopes (hot_envelopes.hpp) skip the generated code: feed's
// `try_hot` sees each envelope's bytes first, in the caller's buffer, and
// what it takes is never copied into an Envelope. What it declines is
// parsed as before, so a malformed envelope fails the link either way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "common/byte_buffer.hpp"
#include "framegate/link.pb.h"

namespace fg::link {

inline constexpr std::size_t header_size = 8;
inline constexpr std::uint8_t magic0 = 'F';
inline constexpr std::uint8_t magic1 = 'G';
inline constexpr std::uint8_t protocol_version = 1;
inline constexpr std::uint32_t default_max_envelope = 32u * 1024 * 1024;

enum class decode_error : std::uint8_t { none, bad_magic, bad_version, too_large, malformed };
std::string_view to_string(decode_error e) noexcept;

// Appends one framed envelope to `out`.
void encode(const framegate::link::Envelope& envelope, byte_buffer& out);

class decoder {
 public:
  explicit decoder(std::uint32_t max_envelope = default_max_envelope) : max_envelope_(max_envelope) {}

  // Decodes every complete envelope in `in` (after any bytes kept from
  // earlier calls), calling on_envelope(const Envelope&) for each; keeps a
  // trailing partial envelope for the next call.
  template <class Fn>
  decode_error feed(std::span<const std::uint8_t> in, Fn&& on_envelope) {
    return feed(
        in, [](std::span<const std::uint8_t>) { return false; }, on_envelope);
  }
  // The same, offering each envelope's bytes (after the frame header) to
  // try_hot(std::span<const std::uint8_t>) -> bool first; on_envelope gets
  // those it declines (false). The bytes are valid during the call only.
  template <class Hot, class Fn>
  decode_error feed(std::span<const std::uint8_t> in, Hot&& try_hot, Fn&& on_envelope);

  [[nodiscard]] decode_error failed() const noexcept { return failed_; }
  // Bytes held for an incomplete envelope.
  [[nodiscard]] std::size_t pending() const noexcept { return pending_.size(); }

 private:
  // Decodes complete envelopes from the front of `bytes`; returns how many
  // bytes were used.
  template <class Hot, class Fn>
  std::size_t decode_complete(std::span<const std::uint8_t> bytes, Hot& try_hot, Fn& on_envelope);
  decode_error check_header(const std::uint8_t* h, std::uint32_t& length) const noexcept;
  // Appends to pending_ what `in` has of the held envelope (up to its
  // end); returns how many bytes of `in` it took.
  std::size_t top_up_pending(std::span<const std::uint8_t> in);
  [[nodiscard]] bool pending_complete() const noexcept;

  std::uint32_t max_envelope_;
  decode_error failed_ = decode_error::none;
  byte_buffer pending_;
  framegate::link::Envelope envelope_;  // reused: protobuf keeps its allocations across Clear()
};

template <class Hot, class Fn>
decode_error decoder::feed(std::span<const std::uint8_t> in, Hot&& try_hot, Fn&& on_envelope) {
  if (failed_ != decode_error::none) return failed_;
  if (!pending_.empty()) {
    // Only the rest of the held envelope is copied; the envelopes after
    // it are decoded where they are, not moved through pending_ too.
    const std::size_t taken = top_up_pending(in);
    in = in.subspan(taken);
    if (failed_ != decode_error::none || !pending_complete()) return failed_;
    decode_complete(pending_.span(), try_hot, on_envelope);
    pending_.clear();
    if (failed_ != decode_error::none) return failed_;
  }
  const std::size_t used = decode_complete(in, try_hot, on_envelope);
  if (failed_ == decode_error::none && used < in.size()) pending_.append(in.subspan(used));
  return failed_;
}

template <class Hot, class Fn>
std::size_t decoder::decode_complete(std::span<const std::uint8_t> bytes, Hot& try_hot, Fn& on_envelope) {
  std::size_t off = 0;
  while (bytes.size() - off >= header_size) {
    std::uint32_t length = 0;
    if ((failed_ = check_header(bytes.data() + off, length)) != decode_error::none) return off;
    if (bytes.size() - off - header_size < length) break;
    const std::uint8_t* body = bytes.data() + off + header_size;
    if (try_hot(std::span<const std::uint8_t>(body, length))) {
      off += header_size + length;
      continue;
    }
    envelope_.Clear();
    if (!envelope_.ParseFromArray(body, static_cast<int>(length))) {
      failed_ = decode_error::malformed;
      return off;
    }
    off += header_size + length;
    on_envelope(static_cast<const framegate::link::Envelope&>(envelope_));
  }
  return off;
}

}  // namespace fg::link
