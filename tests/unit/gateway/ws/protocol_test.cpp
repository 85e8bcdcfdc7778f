#include "gateway/ws/protocol.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

using fg::ws::error;

error nth_error(int i) { return static_cast<error>(i); }

// The documented mapping (RFC 6455 §7.4.1): payload problems (invalid UTF-8,
// compressed data that does not inflate) are 1007, size limits 1009, every
// other protocol violation 1002. Listed by exception, so an error added
// without a decision gets 1002 here and fails if the code says otherwise.
std::uint16_t documented_close_code(error e) {
  static const std::vector<std::pair<std::uint16_t, std::vector<error>>> exceptions{
      {1000, {error::none}},
      {1007, {error::invalid_utf8, error::invalid_close_reason, error::invalid_deflate_data}},
      {1009, {error::message_too_big, error::too_many_fragments}},
  };
  for (const auto& [code, errors] : exceptions)
    if (std::find(errors.begin(), errors.end(), e) != errors.end()) return code;
  return 1002;
}

TEST(protocol, close_code_for_every_error) {
  for (int i = 0; i < fg::ws::error_kinds; ++i)
    EXPECT_EQ(fg::ws::close_code_for(nth_error(i)), documented_close_code(nth_error(i)))
        << fg::ws::to_string(nth_error(i));
}

TEST(protocol, every_error_has_a_distinct_name) {
  std::set<std::string> names;
  for (int i = 0; i < fg::ws::error_kinds; ++i) {
    const std::string name(fg::ws::to_string(nth_error(i)));
    EXPECT_FALSE(name.empty()) << i;
    EXPECT_NE(name, "unknown") << i;
    EXPECT_TRUE(names.insert(name).second) << "duplicate name " << name;
  }
  EXPECT_EQ(names.size(), static_cast<std::size_t>(fg::ws::error_kinds));
  EXPECT_EQ(fg::ws::to_string(error::none), "none");
  EXPECT_EQ(fg::ws::to_string(error::invalid_close_reason), "invalid_close_reason");
}

TEST(protocol, error_kinds_covers_the_last_error) {
  // A new error appended after invalid_deflate_data must move error_kinds.
  EXPECT_EQ(fg::ws::error_kinds - 1, static_cast<int>(error::invalid_deflate_data));
  EXPECT_EQ(fg::ws::to_string(nth_error(fg::ws::error_kinds)), "unknown");
}

// RFC 6455 §7.4, read as ranges: 0-999 unused; 1000-2999 for the protocol,
// of which only the defined, sendable codes count (1004 reserved, 1005 and
// 1006 never on the wire, 1015 TLS only, 1012-1014 not defined by 6455);
// 3000-3999 registered; 4000-4999 private; 5000+ undefined.
bool rfc_close_code_allowed(unsigned code) {
  if (code < 1000) return false;
  if (code <= 2999) return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1011);
  return code <= 4999;
}

TEST(protocol, is_valid_close_code_over_the_whole_range) {
  int valid = 0;
  for (unsigned code = 0; code <= 65535; ++code) {
    const bool got = fg::ws::is_valid_close_code(static_cast<std::uint16_t>(code));
    ASSERT_EQ(got, rfc_close_code_allowed(code)) << "code " << code;
    valid += got;
  }
  EXPECT_EQ(valid, 4 + 5 + 2000);
}

TEST(protocol, opcodes_and_control_classification) {
  using fg::ws::opcode;
  EXPECT_FALSE(fg::ws::is_control(opcode::continuation));
  EXPECT_FALSE(fg::ws::is_control(opcode::text));
  EXPECT_FALSE(fg::ws::is_control(opcode::binary));
  EXPECT_TRUE(fg::ws::is_control(opcode::close));
  EXPECT_TRUE(fg::ws::is_control(opcode::ping));
  EXPECT_TRUE(fg::ws::is_control(opcode::pong));
  EXPECT_EQ(static_cast<int>(opcode::pong), 0xA);
}

}  // namespace
