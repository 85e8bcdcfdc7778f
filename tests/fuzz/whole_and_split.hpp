// The oracle both reader fuzz targets share: the same bytes fed to a fresh
// message reader whole, and fed to another in the pieces split_input(seed)
// makes, must give the same messages and the same error. Both readers
// borrow from one set of pools and give back at teardown, as a session does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/buffer_pool.hpp"
#include "gateway/ws/inflater.hpp"
#include "gateway/ws/message_reader.hpp"
#include "tests/fuzz/check.hpp"
#include "tests/fuzz/checking_handler.hpp"
#include "tests/fuzz/split_input.hpp"

namespace fg::fuzz {

// `prepare(reader)` runs on each reader before it is fed (e.g. to enable
// deflate); with `sticky`, a reader that failed must also refuse a valid
// frame fed after the failure.
template <class Prepare>
void check_whole_and_split(std::uint8_t seed, const std::uint8_t* data, std::size_t size, const ws::reader_options& opt,
                           Prepare&& prepare, bool sticky) {
  fg::buffer_pool buffers;
  ws::inflater_pool inflaters;
  const ws::reader_pools pools{buffers, inflaters};

  checking_handler whole_h{opt, {}};
  ws::error whole_err;
  {
    ws::message_reader r;
    prepare(r);
    std::vector<std::uint8_t> all(data, data + size);
    whole_err = r.feed(all, opt, pools, whole_h);
    r.release_buffers(pools);
  }

  checking_handler split_h{opt, {}};
  ws::error split_err = ws::error::none;
  {
    ws::message_reader r;
    prepare(r);
    for (auto& piece : split_input(seed, data, size)) {
      split_err = r.feed(piece, opt, pools, split_h);
      if (split_err == ws::error::none) continue;
      if (sticky) {
        std::vector<std::uint8_t> more{0x81, 0x80, 0, 0, 0, 0};
        check(r.feed(more, opt, pools, split_h) == split_err);
      }
      break;
    }
    r.release_buffers(pools);
  }
  check(whole_err == split_err);
  check(whole_h.log == split_h.log);
}

}  // namespace fg::fuzz
