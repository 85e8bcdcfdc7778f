// A BrokerPublish from the gateway (its HTTP publish API) is published
// through the worker's broker.
#include <gtest/gtest.h>

#include "common/logging.hpp"
#include "tests/fakes/worker_fakes.hpp"
#include "worker/runtime/app_registry.hpp"
#include "worker/runtime/dispatcher.hpp"

namespace {

using namespace fg::worker;
namespace pb = framegate::link;

TEST(DispatcherBrokerPublish, GatewayPublishGoesThroughTheBroker) {
  app_registry apps;
  fakes::fake_link_output out;
  fakes::fake_broker broker;
  dispatcher d("w1", apps, out, fg::component_logger("worker-test"));
  d.set_broker(broker, nullptr);

  pb::Envelope e;
  e.mutable_broker_publish()->set_room("lobby");
  e.mutable_broker_publish()->set_payload("{\"room\":\"lobby\",\"data\":1}");
  d.on_envelope(1, e);
  d.end_batch(1);

  ASSERT_EQ(broker.published.size(), 1u);
  EXPECT_EQ(broker.published[0].room, "lobby");
  EXPECT_EQ(broker.published[0].payload, "{\"room\":\"lobby\",\"data\":1}");
  EXPECT_EQ(d.stats().unexpected_envelopes, 0u);
  EXPECT_TRUE(out.log.empty()) << "nothing to acknowledge: a BrokerPublish has no seq";
}

}  // namespace
