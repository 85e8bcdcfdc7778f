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

#include "common/buffer_pool.hpp"
#include "common/utf8.hpp"
#include "gateway/ws/inflater.hpp"
#include "gateway/ws/message_reader.hpp"
#include "tests/fuzz/checking_handler.hpp"
#include "tests/fuzz/split_input.hpp"

namespace {

using namespace fg::ws;

using fg::fuzz::check;
using fg::fuzz::checking_handler;

}  // namespace

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

  // Both readers borrow from the same pools and give back at teardown, as a session does.
  fg::buffer_pool buffers;
  inflater_pool inflaters;
  const reader_pools pools{buffers, inflaters};
  checking_handler whole_h{opt, {}};
  error whole_err;
  {
    message_reader r;
    std::vector<std::uint8_t> all(data, data + size);
    whole_err = r.feed(all, opt, pools, whole_h);
    r.release_buffers(pools);
  }

  checking_handler split_h{opt, {}};
  error split_err = error::none;
  {
    message_reader r;
    for (auto& piece : fg::fuzz::split_input(seed, data, size)) {
      split_err = r.feed(piece, opt, pools, split_h);
      if (split_err != error::none) {
        // Sticky: a failed reader refuses everything after.
        std::vector<std::uint8_t> more{0x81, 0x80, 0, 0, 0, 0};
        check(r.feed(more, opt, pools, split_h) == split_err);
        break;
      }
    }
    r.release_buffers(pools);
  }
  check(whole_err == split_err);
  check(whole_h.log == split_h.log);
  return 0;
}
