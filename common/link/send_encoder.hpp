// Hand-encoding of the worker's hot envelope, Envelope{send: Send{conn_ids,
// binary, payload}}, straight into the link's output buffer: the payload
// is copied once, from the app's string_view to the bytes the socket
// writes. Through the generated classes it was copied three times (into
// Send.payload, serialized into the batch, then by the kernel) and cost a
// ByteSizeLong walk. The bytes are exactly what SerializeToString makes
// (conn_ids packed; false and empty fields left out); tests check it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/byte_buffer.hpp"

namespace fg::link {

// A publisher's compression of a Send's payload (Send.deflated_prefix and
// deflated_covers, link.proto); no segment: none.
struct send_compression {
  std::span<const std::uint8_t> segment;
  std::size_t covers = 0;
};

// Appends a framed Envelope{send} to `out`; returns its total size.
std::size_t encode_send(byte_buffer& out, std::span<const std::uint64_t> conn_ids, bool binary,
                        std::span<const std::uint8_t> payload, send_compression pre = {});

}  // namespace fg::link
