// Fuzzes the frame parser through the message reader, with small limits so
// the limit paths are reachable. The oracle: the same bytes fed whole and
// fed in pieces must give the same messages and the same error, and every
// delivered message must respect the limits and the UTF-8 rules.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "common/utf8.hpp"
#include "gateway/ws/message_reader.hpp"
#include "tests/fuzz/whole_and_split.hpp"

using namespace fg::ws;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::uint8_t seed = data[0];
  const std::uint8_t flags = data[1];
  reader_options opt;
  opt.limits.max_message_size = 64u << (flags & 0x07);  // 64 B .. 8 KiB
  opt.limits.max_fragments = 1u + ((flags >> 3) & 0x07) * 3;
  opt.limits.allow_rsv1 = (flags & 0x40) != 0;
  opt.validate_utf8 = (flags & 0x80) == 0;
  data += 2;
  size -= 2;

  // A failed reader refuses everything after (sticky).
  fg::fuzz::check_whole_and_split(
      seed, data, size, opt, [](message_reader&) {}, true);
  return 0;
}
