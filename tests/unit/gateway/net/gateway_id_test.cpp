#include "gateway/net/gateway_id.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace fg::gateway {
namespace {

TEST(GatewayId, FifteenLowerCaseHexDigitsOfSixtyBits) {
  EXPECT_EQ(make_gateway_id(0), "000000000000000");
  EXPECT_EQ(make_gateway_id(0x0123456789abcdefULL), "123456789abcdef");
  EXPECT_EQ(make_gateway_id(~std::uint64_t{0}), "fffffffffffffff");
  EXPECT_NE(make_gateway_id(1), make_gateway_id(2));
}

TEST(GatewayId, FitsTheInlineBufferOfTheStringsWorkersCopyItInto) {
  // Every connection's info on a worker holds a copy: past the inline
  // buffer, each copy is a heap block.
  const std::string id = make_gateway_id(0xfedcba9876543210ULL);
  EXPECT_EQ(id.size(), gateway_id_digits);
  EXPECT_LE(id.size(), std::string().capacity());
  const std::string copy = id;  // NOLINT(performance-unnecessary-copy-initialization): the copy is the point
  EXPECT_EQ(copy.capacity(), std::string().capacity());
}

}  // namespace
}  // namespace fg::gateway
