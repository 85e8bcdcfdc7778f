// The worker's text views as the byte spans the link's Send encoder takes.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "common/link/send_encoder.hpp"
#include "worker/app.hpp"

namespace fg::worker {

inline std::span<const std::uint8_t> byte_span(std::string_view s) noexcept {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

inline link::send_compression send_compression_of(deflated_segment pre) noexcept {
  return {byte_span(pre.bytes), pre.covers};
}

}  // namespace fg::worker
