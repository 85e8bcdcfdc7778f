// A message_reader handler for the fuzz targets: it checks every event
// against the reader's contract (limits, UTF-8, close codes) and logs
// them, so that two runs over the same input (whole, split) can be
// compared. Aborts on a broken contract: that is the fuzzer's finding.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/utf8.hpp"
#include "gateway/ws/message_reader.hpp"
#include "tests/fuzz/check.hpp"

namespace fg::fuzz {

struct checking_handler {
  const ws::reader_options& opt;
  std::string log;  // every event, for comparing runs

  void record(char kind, std::span<const std::uint8_t> p) {
    log += kind;
    log += std::to_string(p.size());
    log += ':';
    log.append(p.begin(), p.end());
  }
  void on_message(ws::opcode op, std::span<std::uint8_t> p) {
    check(op == ws::opcode::text || op == ws::opcode::binary);
    check(p.size() <= opt.limits.max_message_size);
    if (op == ws::opcode::text && opt.validate_utf8) check(is_valid_utf8(p));
    record(op == ws::opcode::text ? 'T' : 'B', p);
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
    check(code == ws::close_code::no_status ? reason.empty() : ws::is_valid_close_code(code));
    check(reason.size() <= 123);
    check(is_valid_utf8({reinterpret_cast<const std::uint8_t*>(reason.data()), reason.size()}));
    log += 'C' + std::to_string(code) + ':';
    log += reason;
  }
};

}  // namespace fg::fuzz
