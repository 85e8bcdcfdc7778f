// The close codes both processes share (RFC 6455 §7.4.1), and how a code
// read from the link becomes one.
#include "common/close_codes.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

namespace close_code = fg::close_code;

TEST(CloseCodes, AreTheRegisteredValues) {
  static_assert(close_code::normal == 1000);
  static_assert(close_code::going_away == 1001);
  static_assert(close_code::protocol_error == 1002);
  static_assert(close_code::unsupported_data == 1003);
  static_assert(close_code::no_status == 1005);
  static_assert(close_code::abnormal == 1006);
  static_assert(close_code::invalid_payload == 1007);
  static_assert(close_code::policy_violation == 1008);
  static_assert(close_code::message_too_big == 1009);
  static_assert(close_code::internal_error == 1011);
  SUCCEED();
}

TEST(CloseCodes, ACodeFromTheLinkKeepsEvery16BitValue) {
  for (const std::uint32_t code : {0u, 1000u, 1006u, 3000u, 4999u, 65535u})
    EXPECT_EQ(close_code::from_link(code), code) << code;
}

TEST(CloseCodes, ACodeFromTheLinkOver16BitsIsAbnormal) {
  for (const std::uint32_t code : {65536u, 66536u, 0xFFFFFFFFu})
    EXPECT_EQ(close_code::from_link(code), close_code::abnormal) << code;
}

}  // namespace
