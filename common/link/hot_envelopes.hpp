// Allocation-free readers for the two envelopes on the data path:
// Envelope{send} (worker -> gateway) and Envelope{message} (gateway ->
// worker). They read an envelope's bytes in place: a Send's payload is a
// span into the link's read buffer and its recipients are read from the
// packed varints as they are visited, so delivering a Send costs no
// allocation and no copy before the payload is framed for a client.
// Every other envelope, and every hot one they decline, goes through the
// generated code (codec.hpp's decoder, via feed's `try_hot`).
//
// Semantics are libprotobuf's wherever bytes are accepted: fields in any
// order, unknown fields skipped, conn_ids packed or not (and split over
// several fields, in order), the last value of a scalar or bytes field
// wins. Declined, so decided by libprotobuf (which may accept or reject
// them): malformed bytes, groups, a known field with an unexpected wire
// type, an envelope holding any known field besides the one body, or the
// body field twice (libprotobuf merges those). Declining instead of
// failing keeps one judge of validity: the fast path can only be faster,
// never stricter or looser (tests/fuzz/hot_envelopes_fuzz.cpp checks it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "common/deflate/deflated_prefix.hpp"
#include "common/link/wire_format.hpp"

namespace fg::link {

class send_view {
 public:
  // The Send in an Envelope's bytes (without the frame header), or
  // nothing when the envelope is not one this reader takes (see above).
  static std::optional<send_view> parse(std::span<const std::uint8_t> envelope) noexcept;

  [[nodiscard]] bool binary() const noexcept { return binary_; }
  [[nodiscard]] std::span<const std::uint8_t> payload() const noexcept { return payload_; }
  [[nodiscard]] std::size_t recipient_count() const noexcept { return recipients_; }
  // The publisher's compression of the payload's first bytes (Send fields
  // 4 and 5); none when absent, or when it claims more bytes than the
  // payload has.
  [[nodiscard]] deflated_prefix deflated() const noexcept {
    if (deflated_.empty() || covers_ > payload_.size()) return {};
    return {deflated_, static_cast<std::size_t>(covers_), 15};
  }

  // Calls fn(std::uint64_t) for each recipient, in wire order.
  template <class Fn>
  void for_each_recipient(Fn&& fn) const {
    // parse() checked every field and varint: none fails here.
    wire::for_each_field(send_, [&](const wire::field& f) {
      if (f.number != conn_ids_field) return true;
      if (f.type == wire::wire_type::varint) {
        fn(f.value);
        return true;
      }
      const std::uint8_t* p = f.bytes.data();
      const std::uint8_t* const end = p + f.bytes.size();
      for (std::uint64_t id = 0; p != end;) {
        p = wire::get_varint(p, end, id);
        fn(id);
      }
      return true;
    });
  }

  static constexpr std::uint32_t conn_ids_field = 1;

 private:
  std::span<const std::uint8_t> send_;  // the Send message's bytes
  std::span<const std::uint8_t> payload_;
  std::span<const std::uint8_t> deflated_;
  std::uint64_t covers_ = 0;
  std::size_t recipients_ = 0;
  bool binary_ = false;
};

// A client message, as the worker's dispatcher takes it; the payload
// points into the bytes it was read from (or into a parsed Message).
struct message_view {
  std::uint64_t conn_id = 0;
  bool binary = false;
  std::span<const std::uint8_t> payload;
  std::uint64_t seq = 0;

  // The Message in an Envelope's bytes, or nothing (see above).
  static std::optional<message_view> parse(std::span<const std::uint8_t> envelope) noexcept;
};

}  // namespace fg::link
