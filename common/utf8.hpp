// Incremental UTF-8 validation (RFC 3629, Unicode Table 3-7).
//
// The validator is fed a message in any number of pieces and rejects at the
// first byte after which no continuation could make the text valid, so a
// WebSocket text message fails fast (RFC 6455 §8.1) rather than at its end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace fg {

class utf8_validator {
 public:
  // Returns false at the first byte that can no longer be valid; the
  // validator then stays failed until reset().
  bool feed(const std::uint8_t* data, std::size_t size) noexcept;
  bool feed(std::span<const std::uint8_t> bytes) noexcept { return feed(bytes.data(), bytes.size()); }

  // True when everything fed so far is valid and no sequence is left open.
  [[nodiscard]] bool complete() const noexcept { return !failed_ && need_ == 0; }
  [[nodiscard]] bool failed() const noexcept { return failed_; }
  void reset() noexcept { *this = utf8_validator{}; }

 private:
  std::uint8_t need_ = 0;   // continuation bytes still expected
  std::uint8_t lo_ = 0x80;  // allowed range of the next continuation byte
  std::uint8_t hi_ = 0xBF;
  bool failed_ = false;
};

// Whole-buffer convenience for close reasons and tests.
inline bool is_valid_utf8(std::span<const std::uint8_t> bytes) noexcept {
  utf8_validator v;
  return v.feed(bytes) && v.complete();
}

}  // namespace fg
