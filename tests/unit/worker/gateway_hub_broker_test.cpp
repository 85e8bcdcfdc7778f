// The gateway-hub broker against a fake link 0: coalescing per turn,
// ordering with publishes, and resubscription after link 0 comes back.
#include "worker/broker/gateway_hub_broker.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/fakes/worker_fakes.hpp"

namespace {

using namespace fg::worker;
namespace pb = framegate::link;

std::vector<std::string> sorted(const google::protobuf::RepeatedPtrField<std::string>& f) {
  std::vector<std::string> v(f.begin(), f.end());
  std::sort(v.begin(), v.end());
  return v;
}

class HubBroker : public ::testing::Test {
 protected:
  HubBroker()
      : broker_(port_, [this](std::string_view room, std::string_view payload, room_position, deflated_segment) {
          delivered_.emplace_back(std::string(room) + " " + std::string(payload));
        }) {}

  fakes::fake_hub_port port_;
  gateway_hub_broker broker_;
  std::vector<std::string> delivered_;
};

TEST_F(HubBroker, ChangesOfOneTurnLeaveAsOneNetBrokerSubscribe) {
  broker_.subscribe("a");
  broker_.subscribe("b");
  broker_.subscribe("a");
  broker_.subscribe("c");
  broker_.unsubscribe("c");  // joined and left within the turn: nothing to say
  EXPECT_TRUE(port_.sent.empty()) << "nothing before the end of the turn";
  port_.end_turn();
  ASSERT_EQ(port_.sent.size(), 1u);
  ASSERT_TRUE(port_.sent[0].has_broker_subscribe());
  EXPECT_EQ(sorted(port_.sent[0].broker_subscribe().subscribe()), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(port_.sent[0].broker_subscribe().unsubscribe_size(), 0);

  broker_.unsubscribe("a");
  broker_.unsubscribe("zzz");  // never subscribed
  port_.end_turn();
  ASSERT_EQ(port_.sent.size(), 2u);
  EXPECT_EQ(sorted(port_.sent[1].broker_subscribe().unsubscribe()), (std::vector<std::string>{"a"}));
  EXPECT_EQ(port_.sent[1].broker_subscribe().subscribe_size(), 0);

  // Leave and rejoin within one turn: the hub's view is unchanged.
  broker_.unsubscribe("b");
  broker_.subscribe("b");
  port_.end_turn();
  EXPECT_EQ(port_.sent.size(), 2u);
}

TEST_F(HubBroker, APublishFollowsTheSubscriptionsBeforeIt) {
  broker_.subscribe("r");
  broker_.publish("r", "payload");
  ASSERT_EQ(port_.sent.size(), 2u);
  EXPECT_TRUE(port_.sent[0].has_broker_subscribe());
  ASSERT_TRUE(port_.sent[1].has_broker_publish());
  EXPECT_EQ(port_.sent[1].broker_publish().room(), "r");
  EXPECT_EQ(port_.sent[1].broker_publish().payload(), "payload");
  port_.end_turn();
  EXPECT_EQ(port_.sent.size(), 2u) << "no second BrokerSubscribe";
}

TEST_F(HubBroker, PublishingNeedsNoSubscription) {
  broker_.publish("elsewhere", "x");
  ASSERT_EQ(port_.sent.size(), 1u);
  EXPECT_TRUE(port_.sent[0].has_broker_publish());
}

TEST_F(HubBroker, WhileLinkZeroIsDownPublishesAreDroppedAndCounted) {
  port_.ready = false;
  broker_.publish("r", "x");
  EXPECT_EQ(broker_.stats().publishes_dropped, 1u);
  broker_.subscribe("r");
  port_.end_turn();
  EXPECT_TRUE(port_.sent.empty());
  EXPECT_TRUE(broker_.wants("r"));
}

TEST_F(HubBroker, LinkZeroComingBackResubscribesEverythingWanted) {
  broker_.subscribe("a");
  broker_.subscribe("b");
  port_.end_turn();
  port_.sent.clear();

  broker_.on_hub_down();
  port_.ready = false;
  broker_.unsubscribe("a");
  broker_.subscribe("c");
  port_.end_turn();
  EXPECT_TRUE(port_.sent.empty());

  port_.ready = true;
  broker_.on_hub_up();
  ASSERT_EQ(port_.sent.size(), 1u);
  EXPECT_EQ(sorted(port_.sent[0].broker_subscribe().subscribe()), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(port_.sent[0].broker_subscribe().unsubscribe_size(), 0);
  port_.end_turn();
  EXPECT_EQ(port_.sent.size(), 1u);

  // Nothing wanted: nothing sent on reconnect.
  gateway_hub_broker idle(port_, nullptr);
  idle.on_hub_up();
  EXPECT_EQ(port_.sent.size(), 1u);
}

TEST_F(HubBroker, DeliveriesGoToTheCallback) {
  broker_.on_hub_deliver("r", "p");
  EXPECT_EQ(delivered_, (std::vector<std::string>{"r p"}));
  EXPECT_EQ(broker_.stats().deliveries, 1u);
}

}  // namespace
