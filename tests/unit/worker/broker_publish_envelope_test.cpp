// A message of the gateway's publish API (ApiPublish) reaches the app
// mounted at its path; the rooms app publishes it through the broker as
// the delivery a client's publish would make.
#include <gtest/gtest.h>

#include "common/logging.hpp"
#include "tests/fakes/worker_fakes.hpp"
#include "worker/apps/rooms_app.hpp"
#include "worker/runtime/app_registry.hpp"
#include "worker/runtime/dispatcher.hpp"

namespace {

using namespace fg::worker;
namespace pb = framegate::link;

pb::Envelope api_publish(std::string path, std::string room, std::string data) {
  pb::Envelope e;
  e.mutable_api_publish()->set_path(std::move(path));
  e.mutable_api_publish()->set_room(std::move(room));
  e.mutable_api_publish()->set_data(std::move(data));
  return e;
}

// A dispatcher with the rooms app at /rooms and a recording broker.
class DispatcherApiPublish : public ::testing::Test {
 protected:
  DispatcherApiPublish() { d.set_broker(broker, nullptr); }
  static app_registry rooms_only() {
    app_registry r;
    r.mount("/rooms", std::make_unique<rooms_app>());
    return r;
  }
  app_registry apps = rooms_only();  // mounted before the dispatcher attaches the apps
  fakes::fake_link_output out;
  fakes::fake_broker broker;
  dispatcher d{"w1", apps, out, fg::component_logger("worker-test")};
};

TEST_F(DispatcherApiPublish, TheRoomsAppPublishesTheDeliveryThroughTheBroker) {
  d.on_envelope(1, api_publish("/rooms", "lobby \"east\"", "{\"n\": 1}"));
  d.end_batch(1);

  ASSERT_EQ(broker.published.size(), 1u);
  EXPECT_EQ(broker.published[0].room, "lobby \"east\"");
  EXPECT_EQ(broker.published[0].payload, "{\"room\":\"lobby \\\"east\\\"\",\"data\":{\"n\": 1}}");
  EXPECT_EQ(d.stats().unexpected_envelopes, 0u);
  EXPECT_TRUE(out.log.empty()) << "nothing to acknowledge: an ApiPublish has no seq";
}

TEST_F(DispatcherApiPublish, APathWithNoAppIsDroppedAndCounted) {
  d.on_envelope(1, api_publish("/elsewhere", "lobby", "1"));
  EXPECT_TRUE(broker.published.empty());
  EXPECT_EQ(d.stats().unexpected_envelopes, 1u);
}

}  // namespace
