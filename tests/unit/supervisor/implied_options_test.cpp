// What `framegate up` turns on for its children because of other options
// (supervisor/implied_options.hpp): --publish-deflate from --deflate.
#include "supervisor/implied_options.hpp"

#include <optional>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "tests/unit/support/scoped_env.hpp"

namespace {

using fg::supervisor::flag_value_is_on;
using fg::supervisor::imply_publish_deflate;
using fg::supervisor::supervisor_options;
using fg::test::scoped_env;

// The variables the rule reads, unset: the caller's environment must not
// decide a test.
struct implied_options_test : ::testing::Test {
  scoped_env deflate{"FRAMEGATE_DEFLATE", std::nullopt};
  scoped_env takeover{"FRAMEGATE_DEFLATE_TAKEOVER", std::nullopt};
  scoped_env threshold{"FRAMEGATE_DEFLATE_THRESHOLD", std::nullopt};
  scoped_env level{"FRAMEGATE_DEFLATE_LEVEL", std::nullopt};
  scoped_env publish{"FRAMEGATE_PUBLISH_DEFLATE", std::nullopt};
  scoped_env publish_threshold{"FRAMEGATE_PUBLISH_DEFLATE_THRESHOLD", std::nullopt};
  scoped_env publish_level{"FRAMEGATE_PUBLISH_DEFLATE_LEVEL", std::nullopt};

  static supervisor_options with(fg::supervisor::passthrough_map passthrough) {
    supervisor_options opts;
    opts.passthrough = std::move(passthrough);
    return opts;
  }
};

TEST(flag_value, is_read_as_the_children_read_it) {
  for (const char* on : {"true", "TRUE", "on", "yes", "enable", "t", "y", "+", "1", "7"})
    EXPECT_TRUE(flag_value_is_on(on)) << on;
  for (const char* off : {"false", "off", "no", "disable", "f", "n", "-", "0", "-1", "", "maybe"})
    EXPECT_FALSE(flag_value_is_on(off)) << off;
}

TEST_F(implied_options_test, deflate_with_the_private_redis_turns_on_publish_deflate) {
  auto opts = with({{"deflate", "true"}});
  EXPECT_TRUE(imply_publish_deflate(opts));
  EXPECT_EQ(opts.passthrough, (fg::supervisor::passthrough_map{{"deflate", "true"}, {"publish-deflate", "true"}}));
  EXPECT_EQ(opts.implied, (std::set<std::string>{"publish-deflate"}));
  EXPECT_TRUE(opts.publish_deflate_implied());
}

TEST_F(implied_options_test, the_workers_compress_at_the_gateways_threshold_and_level) {
  auto opts = with({{"deflate", "on"}, {"deflate-threshold", "256"}, {"deflate-level", "6"}});
  ASSERT_TRUE(imply_publish_deflate(opts));
  EXPECT_EQ(opts.passthrough["publish-deflate-threshold"], "256");
  EXPECT_EQ(opts.passthrough["publish-deflate-level"], "6");
  EXPECT_EQ(opts.implied,
            (std::set<std::string>{"publish-deflate", "publish-deflate-threshold", "publish-deflate-level"}));
  // The workers' own values, where given, stay theirs.
  auto own = with({{"deflate", "1"}, {"deflate-threshold", "256"}, {"publish-deflate-threshold", "4096"}});
  ASSERT_TRUE(imply_publish_deflate(own));
  EXPECT_EQ(own.passthrough["publish-deflate-threshold"], "4096");
  EXPECT_FALSE(own.passthrough.contains("publish-deflate-level"));
  EXPECT_FALSE(own.implied.contains("publish-deflate-threshold"));
}

TEST_F(implied_options_test, the_environment_counts_as_given) {
  const scoped_env on("FRAMEGATE_DEFLATE", "yes");
  const scoped_env threshold_env("FRAMEGATE_DEFLATE_THRESHOLD", "300");
  auto opts = with({});
  ASSERT_TRUE(imply_publish_deflate(opts));
  EXPECT_EQ(opts.passthrough["publish-deflate-threshold"], "300");
  // A flag wins over the environment, as it does for the children.
  auto off = with({{"deflate", "false"}});
  EXPECT_FALSE(imply_publish_deflate(off));
  const scoped_env chosen("FRAMEGATE_PUBLISH_DEFLATE", "false");
  auto left = with({});
  EXPECT_FALSE(imply_publish_deflate(left));
  EXPECT_FALSE(left.passthrough.contains("publish-deflate"));
}

TEST_F(implied_options_test, nothing_is_implied_where_it_could_not_help_or_is_not_ours_to_decide) {
  struct refused {
    const char* why;
    supervisor_options opts;
  };
  supervisor_options other_redis = with({{"deflate", "true"}});
  other_redis.redis = "redis://127.0.0.1:6379";
  supervisor_options cluster = with({{"deflate", "true"}});
  cluster.redis_cluster = "127.0.0.1:7000";
  for (refused r : {refused{"deflate off", with({})}, refused{"deflate false", with({{"deflate", "false"}})},
                    refused{"another's redis", other_redis}, refused{"a redis cluster", cluster},
                    refused{"server takeover", with({{"deflate", "true"}, {"deflate-takeover", "server"}})},
                    refused{"both takeover", with({{"deflate", "true"}, {"deflate-takeover", "both"}})},
                    refused{"chosen off", with({{"deflate", "true"}, {"publish-deflate", "false"}})}}) {
    const auto before = r.opts.passthrough;
    EXPECT_FALSE(imply_publish_deflate(r.opts)) << r.why;
    EXPECT_EQ(r.opts.passthrough, before) << r.why;
    EXPECT_TRUE(r.opts.implied.empty()) << r.why;
  }
  auto client = with({{"deflate", "true"}, {"deflate-takeover", "client"}});
  EXPECT_TRUE(imply_publish_deflate(client)) << "the server compresses without takeover";
}

TEST_F(implied_options_test, without_redis_the_hub_carries_the_publishers_compression) {
  supervisor_options hub = with({{"deflate", "true"}});
  hub.no_redis = true;
  ASSERT_TRUE(imply_publish_deflate(hub)) << "every worker behind the hub is one of ours";
  EXPECT_EQ(hub.passthrough["publish-deflate"], "true");
  EXPECT_EQ(hub.implied, (std::set<std::string>{"publish-deflate"}));
}

}  // namespace
