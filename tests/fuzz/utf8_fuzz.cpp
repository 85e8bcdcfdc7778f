// Fuzzes the incremental UTF-8 validator: fed in pieces (split by the first
// byte), byte by byte and whole, it must reach the same verdict, and a
// byte-wise failure must be the point after which the whole buffer fails.
#include <cstddef>
#include <cstdint>

#include "common/utf8.hpp"
#include "tests/fuzz/check.hpp"
#include "tests/fuzz/split_input.hpp"

using fg::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t seed = data[0];
  ++data;
  --size;

  fg::utf8_validator whole;
  const bool whole_ok = whole.feed(data, size);
  check(whole_ok == !whole.failed());
  check(whole.complete() == fg::is_valid_utf8({data, size}));

  fg::utf8_validator pieces;
  bool pieces_ok = true;
  for (const auto& piece : fg::fuzz::split_input(seed, data, size)) pieces_ok = pieces.feed(piece) && pieces_ok;
  check(pieces_ok == whole_ok);
  check(pieces.complete() == whole.complete());

  fg::utf8_validator bytewise;
  std::size_t fail_at = size;
  for (std::size_t i = 0; i < size; ++i)
    if (!bytewise.feed(data + i, 1)) {
      fail_at = i;
      break;
    }
  check((fail_at == size) == whole_ok);
  if (fail_at < size) {
    // Everything before the failing byte is a valid prefix; with it, not.
    fg::utf8_validator prefix;
    check(prefix.feed(data, fail_at));
    check(!prefix.feed(data + fail_at, 1));
  } else {
    check(bytewise.complete() == whole.complete());
  }
  return 0;
}
