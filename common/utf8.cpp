#include "common/utf8.hpp"

#include <cstring>

namespace fg {

namespace {
constexpr std::uint64_t high_bits = 0x8080808080808080ULL;
}

bool utf8_validator::feed(const std::uint8_t* data, std::size_t size) noexcept {
  if (failed_) return false;
  std::size_t i = 0;
  while (i < size) {
    if (need_ == 0) {
      // ASCII fast path: most text is ASCII, so test 16 then 8 bytes at a time.
      while (i + 16 <= size) {
        std::uint64_t a, b;
        std::memcpy(&a, data + i, 8);
        std::memcpy(&b, data + i + 8, 8);
        if ((a | b) & high_bits) break;
        i += 16;
      }
      while (i + 8 <= size) {
        std::uint64_t w;
        std::memcpy(&w, data + i, 8);
        if (w & high_bits) break;
        i += 8;
      }
      if (i == size) break;
      const std::uint8_t lead = data[i++];
      if (lead < 0x80) continue;
      if (lead < 0xC2) {  // stray continuation byte, or overlong 2-byte form (C0, C1)
        failed_ = true;
        return false;
      }
      if (lead < 0xE0) {
        need_ = 1;
      } else if (lead < 0xF0) {
        need_ = 2;
        if (lead == 0xE0) lo_ = 0xA0;  // overlong 3-byte forms
        if (lead == 0xED) hi_ = 0x9F;  // UTF-16 surrogates D800..DFFF
      } else if (lead < 0xF5) {
        need_ = 3;
        if (lead == 0xF0) lo_ = 0x90;  // overlong 4-byte forms
        if (lead == 0xF4) hi_ = 0x8F;  // above U+10FFFF
      } else {                         // F5..FF never appear in UTF-8
        failed_ = true;
        return false;
      }
    } else {
      const std::uint8_t cont = data[i++];
      if (cont < lo_ || cont > hi_) {
        failed_ = true;
        return false;
      }
      lo_ = 0x80;
      hi_ = 0xBF;
      --need_;
    }
  }
  return true;
}

}  // namespace fg
