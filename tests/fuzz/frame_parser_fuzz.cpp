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
#include "tests/fuzz/split_input.hpp"

namespace {

using namespace fg::ws;

void check(bool ok) {
  if (!ok) std::abort();
}

struct checking_handler {
  const reader_options& opt;
  std::string log;  // every event, for comparing the two runs

  void record(char kind, std::span<const std::uint8_t> p) {
    log += kind;
    log += std::to_string(p.size());
    log += ':';
    log.append(p.begin(), p.end());
  }
  void on_message(opcode op, std::span<std::uint8_t> p) {
    check(op == opcode::text || op == opcode::binary);
    check(p.size() <= opt.limits.max_message_size);
    if (op == opcode::text && opt.validate_utf8) check(fg::is_valid_utf8(p));
    record(op == opcode::text ? 'T' : 'B', p);
  }
  void on_ping(std::span<std::uint8_t> p) {
    check(p.size() <= 125);
    record('I', p);
  }
  void on_pong(std::span<std::uint8_t> p) {
    check(p.size() <= 125);
    record('O', p);
  }
  void on_close(std::uint16_t code, std::string_view reason) {
    check(code == close_code::no_status ? reason.empty() : is_valid_close_code(code));
    check(reason.size() <= 123);
    check(fg::is_valid_utf8({reinterpret_cast<const std::uint8_t*>(reason.data()), reason.size()}));
    log += 'C' + std::to_string(code) + ':';
    log += reason;
  }
};

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

  checking_handler whole_h{opt, {}};
  error whole_err;
  {
    message_reader r;
    std::vector<std::uint8_t> all(data, data + size);
    whole_err = r.feed(all, opt, whole_h);
  }

  checking_handler split_h{opt, {}};
  error split_err = error::none;
  {
    message_reader r;
    for (auto& piece : fg::fuzz::split_input(seed, data, size)) {
      split_err = r.feed(piece, opt, split_h);
      if (split_err != error::none) {
        // Sticky: a failed reader refuses everything after.
        std::vector<std::uint8_t> more{0x81, 0x80, 0, 0, 0, 0};
        check(r.feed(more, opt, split_h) == split_err);
        break;
      }
    }
  }
  check(whole_err == split_err);
  check(whole_h.log == split_h.log);
  return 0;
}
