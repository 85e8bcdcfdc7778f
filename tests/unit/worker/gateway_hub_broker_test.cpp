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
  broker_.on_hub_deliver("r", "p", {});
  EXPECT_EQ(delivered_, (std::vector<std::string>{"r p"}));
  EXPECT_EQ(broker_.stats().deliveries, 1u);
}

// --publish-deflate through the hub: the publisher compresses the stable
// prefix once, BrokerPublish carries it, and each receiving worker hands
// it to its apps (which pass it to the gateway with their Sends).
class CompressingHubBroker : public ::testing::Test {
 protected:
  CompressingHubBroker()
      : broker_(
            port_,
            [this](std::string_view, std::string_view payload, room_position, deflated_segment pre) {
              delivered_.push_back({std::string(payload), std::string(pre.bytes), pre.covers});
            },
            publish_compression{.enabled = true, .threshold = 64}) {}

  struct delivery {
    std::string payload, segment;
    std::size_t covers;
  };
  fakes::fake_hub_port port_;
  gateway_hub_broker broker_;
  std::vector<delivery> delivered_;
};

TEST_F(CompressingHubBroker, APublishCarriesTheCompressionOfItsStablePrefix) {
  const std::string payload = R"({"room":"r","data":")" + std::string(400, 'a') + R"("})";
  broker_.publish("r", payload, publish_options{true, nullptr, payload.size() - 1});
  ASSERT_EQ(port_.sent.size(), 1u);
  const pb::BrokerPublish& p = port_.sent[0].broker_publish();
  EXPECT_EQ(p.payload(), payload);
  EXPECT_EQ(p.deflated_covers(), payload.size() - 1);
  ASSERT_FALSE(p.deflated_prefix().empty());
  EXPECT_LT(p.deflated_prefix().size(), payload.size() / 4) << "400 repeated bytes compress well";
  EXPECT_EQ(broker_.stats().deflated_publishes, 1u);
  EXPECT_EQ(broker_.report().deflated_publishes, 1u);

  // What the hub relays arrives with it.
  broker_.on_hub_deliver("r", p.payload(), {p.deflated_prefix(), p.deflated_covers()});
  ASSERT_EQ(delivered_.size(), 1u);
  EXPECT_EQ(delivered_[0].segment, p.deflated_prefix());
  EXPECT_EQ(delivered_[0].covers, payload.size() - 1);
  EXPECT_EQ(broker_.report().deflated_deliveries, 1u);
}

TEST_F(CompressingHubBroker, SmallOrUnprefixedPublishesGoWithoutCompression) {
  broker_.publish("r", std::string(40, 'a'), publish_options{true, nullptr, 39});  // under the threshold
  broker_.publish("r", std::string(400, 'a'));                                     // no stable prefix said
  ASSERT_EQ(port_.sent.size(), 2u);
  for (const auto& e : port_.sent) {
    EXPECT_TRUE(e.broker_publish().deflated_prefix().empty());
    EXPECT_EQ(e.broker_publish().deflated_covers(), 0u);
  }
  EXPECT_EQ(broker_.stats().deflated_publishes, 0u);
}

TEST_F(CompressingHubBroker, ACompressionThatCannotBeOfThePayloadIsDroppedNotTheMessage) {
  broker_.on_hub_deliver("r", "short", {"zz", 6});  // covers more than the payload
  broker_.on_hub_deliver("r", "short", {"", 3});    // covers without a segment
  ASSERT_EQ(delivered_.size(), 2u);
  for (const auto& d : delivered_) {
    EXPECT_EQ(d.payload, "short");
    EXPECT_TRUE(d.segment.empty());
    EXPECT_EQ(d.covers, 0u);
  }
  EXPECT_EQ(broker_.stats().deliveries, 2u);
  EXPECT_EQ(broker_.stats().deflated_deliveries, 0u);
}

TEST_F(HubBroker, WithoutPublishDeflateNothingIsCompressed) {
  const std::string payload(4000, 'a');
  broker_.publish("r", payload, publish_options{true, nullptr, payload.size() - 1});
  ASSERT_EQ(port_.sent.size(), 1u);
  EXPECT_TRUE(port_.sent[0].broker_publish().deflated_prefix().empty());
  EXPECT_EQ(broker_.stats().deflated_publishes, 0u);
}

}  // namespace
