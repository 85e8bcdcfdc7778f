// Reading a connection's identity from CLIENT INFO (Redis 6.2 and later).
#include "worker/broker/redis_client_identity.hpp"

#include <gtest/gtest.h>

namespace fg::worker {
namespace {

TEST(ParseClientInfo, TakesIdAndAddrFromRedisSevensLine) {
  const auto got = parse_client_info(
      "id=7 addr=127.0.0.1:50406 laddr=127.0.0.1:6379 fd=8 name= age=0 idle=0 flags=N db=0 sub=0 psub=0 ssub=0 "
      "multi=-1 qbuf=26 qbuf-free=20448 argv-mem=10 multi-mem=0 rbs=1024 rbp=0 obl=0 oll=0 omem=0 "
      "tot-mem=22298 events=r cmd=client|info user=default redir=-1 resp=2\n");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->id, 7u);
  EXPECT_EQ(got->addr, "127.0.0.1:50406");
}

TEST(ParseClientInfo, KeepsAnIpv6AddressWhole) {
  const auto got = parse_client_info("id=18446744073709551615 addr=[::1]:6000 laddr=[::1]:6379\r\n");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->id, 18446744073709551615u);
  EXPECT_EQ(got->addr, "[::1]:6000");
}

TEST(ParseClientInfo, NeedsBothFieldsWellFormed) {
  for (const char* line :
       {"", "addr=127.0.0.1:1", "id=3", "id= addr=127.0.0.1:1", "id=3x addr=127.0.0.1:1", "id=-3 addr=127.0.0.1:1",
        "id=3 addr=", "id=99999999999999999999 addr=a:1", "ERR unknown subcommand 'INFO'"})
    EXPECT_FALSE(parse_client_info(line).has_value()) << line;
}

TEST(ParseClientInfo, NamesAreWholeFields) {
  // laddr= and a client name holding "id=" are not the fields asked for.
  const auto got = parse_client_info("laddr=10.0.0.1:6379 name=xid=9 id=4 addr=10.0.0.2:41000");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->id, 4u);
  EXPECT_EQ(got->addr, "10.0.0.2:41000");
}

}  // namespace
}  // namespace fg::worker
