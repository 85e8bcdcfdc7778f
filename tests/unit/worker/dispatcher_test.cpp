// The dispatcher against a fake link output: routing, acks after the
// batch's sends, send_many grouped by link, state, close, link loss.
#include "worker/runtime/dispatcher.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "common/logging.hpp"
#include "tests/fakes/worker_fakes.hpp"
#include "worker/apps/echo_app.hpp"
#include "worker/apps/rooms_app.hpp"

namespace {

using namespace fg::worker;
namespace pb = framegate::link;

// Records every callback; can be told to throw or to broadcast.
class recording_app final : public app {
 public:
  void on_open(connection& c) override {
    events.push_back("open " + std::to_string(c.id()) + (c.info().resumed ? " resumed" : ""));
    opened_state = c.state();
  }
  void on_message(connection& c, message m) override {
    events.push_back("message " + std::to_string(c.id()) + " " + std::string(m.payload));
    if (m.payload == "throw") throw std::runtime_error("boom");
    if (m.payload == "keep") {
      connection_state s;
      s.rooms = {"k"};
      s.app_data = "d";
      api().keep_state(c, s);
    }
    if (m.payload == "close") api().close(c.id(), 4000, "asked");
    if (m.payload == "reply-twice") {
      api().send(c.id(), message_kind::text, "one");
      api().send(c.id(), message_kind::text, "two");
    }
  }
  void on_close(connection& c, std::uint16_t code) override {
    events.push_back("close " + std::to_string(c.id()) + " " + std::to_string(code));
  }
  void on_room_message(std::string_view room, std::string_view payload) override {
    events.push_back("room " + std::string(room) + " " + std::string(payload));
  }

  std::vector<std::string> events;
  connection_state opened_state;
};

class RecordingHub final : public hub_listener {
 public:
  void on_hub_up() override { events.push_back("up"); }
  void on_hub_down() override { events.push_back("down"); }
  void on_hub_deliver(std::string_view room, std::string_view payload) override {
    events.push_back("deliver " + std::string(room) + " " + std::string(payload));
  }
  std::vector<std::string> events;
};

pb::Envelope opened(std::uint64_t id, std::string path, bool resumed = false, std::vector<std::string> rooms = {}) {
  pb::Envelope e;
  auto* o = e.mutable_opened();
  o->set_conn_id(id);
  o->set_path(std::move(path));
  o->set_gateway_id("g1");
  (*o->mutable_headers())["origin"] = "o";
  o->set_resumed(resumed);
  for (auto& r : rooms) o->mutable_state()->add_rooms(r);
  return e;
}

pb::Envelope message_env(std::uint64_t id, std::string payload, std::uint64_t seq, bool binary = false) {
  pb::Envelope e;
  auto* m = e.mutable_message();
  m->set_conn_id(id);
  m->set_payload(std::move(payload));
  m->set_seq(seq);
  m->set_binary(binary);
  return e;
}

pb::Envelope closed_env(std::uint64_t id, std::uint32_t code) {
  pb::Envelope e;
  e.mutable_closed()->set_conn_id(id);
  e.mutable_closed()->set_code(code);
  return e;
}

class Dispatcher : public ::testing::Test {
 protected:
  Dispatcher() {
    auto rec = std::make_unique<recording_app>();
    rec_ = rec.get();
    auto rooms = std::make_unique<rooms_app>();
    rooms_ = rooms.get();
    apps_.mount("/rec", std::move(rec));
    apps_.mount("/echo", std::make_unique<echo_app>());
    apps_.mount("/rooms", std::move(rooms));
    d_ = std::make_unique<dispatcher>("w1", apps_, out_, fg::component_logger("worker-test"));
    d_->set_broker(broker_, &hub_);
  }

  // Delivers envelopes as one read batch on `link`.
  void batch(std::uint32_t link, std::initializer_list<pb::Envelope> envs) {
    for (const auto& e : envs) d_->on_envelope(link, e);
    d_->end_batch(link);
  }

  app_registry apps_;
  recording_app* rec_ = nullptr;
  rooms_app* rooms_ = nullptr;
  fakes::fake_link_output out_;
  fakes::fake_broker broker_;
  RecordingHub hub_;
  std::unique_ptr<dispatcher> d_;
};

TEST_F(Dispatcher, EchoRepliesOnTheConnectionsLinkThenAcksTheBatch) {
  batch(1, {opened(5, "/echo")});
  EXPECT_TRUE(out_.log.empty()) << "no message, no Ack";
  batch(1, {message_env(5, "hi", 10), message_env(5, std::string("\0\1", 2), 11, true)});

  const auto sent = out_.on(1);
  ASSERT_EQ(sent.size(), 3u);
  ASSERT_TRUE(sent[0].has_send());
  EXPECT_EQ(sent[0].send().payload(), "hi");
  EXPECT_FALSE(sent[0].send().binary());
  EXPECT_EQ(std::vector<std::uint64_t>(sent[0].send().conn_ids().begin(), sent[0].send().conn_ids().end()),
            (std::vector<std::uint64_t>{5}));
  EXPECT_TRUE(sent[1].send().binary());
  EXPECT_EQ(sent[1].send().payload(), std::string("\0\1", 2));
  // One Ack per batch, for the highest seq, after the batch's sends.
  ASSERT_TRUE(sent[2].has_ack());
  EXPECT_EQ(sent[2].ack().seq(), 11u);
  EXPECT_EQ(out_.log.size(), 3u) << "nothing on other links";
}

TEST_F(Dispatcher, MessagesForUnknownConnectionsAreStillAcked) {
  batch(0, {message_env(99, "lost", 3)});
  const auto sent = out_.on(0);
  ASSERT_EQ(sent.size(), 1u);
  ASSERT_TRUE(sent[0].has_ack());
  EXPECT_EQ(sent[0].ack().seq(), 3u);
  EXPECT_EQ(d_->stats().messages_to_unknown, 1u);
}

TEST_F(Dispatcher, SendManyGroupsRecipientsByTheirLinkOneSendPerLink) {
  batch(0, {opened(1, "/rec"), opened(3, "/rec")});
  batch(1, {opened(2, "/rec")});
  batch(2, {opened(4, "/rec")});
  out_.clear();

  const std::vector<conn_id> to{1, 2, 3, 4, 77, 1000};
  d_->send_many(to, message_kind::text, "all");

  ASSERT_EQ(out_.log.size(), 3u);
  std::map<std::uint32_t, std::vector<std::uint64_t>> by_link;
  for (const auto& q : out_.log) {
    ASSERT_TRUE(q.envelope.has_send());
    EXPECT_EQ(q.envelope.send().payload(), "all");
    EXPECT_TRUE(by_link.find(q.link) == by_link.end()) << "two Sends on link " << q.link;
    by_link[q.link].assign(q.envelope.send().conn_ids().begin(), q.envelope.send().conn_ids().end());
  }
  EXPECT_EQ(by_link[0], (std::vector<std::uint64_t>{1, 3}));
  EXPECT_EQ(by_link[1], (std::vector<std::uint64_t>{2}));
  EXPECT_EQ(by_link[2], (std::vector<std::uint64_t>{4}));
  EXPECT_EQ(d_->stats().sends_to_unknown, 2u);

  // All on one link: one Send. None known: nothing.
  out_.clear();
  const std::vector<conn_id> same{3, 1};
  d_->send_many(same, message_kind::binary, "b");
  ASSERT_EQ(out_.log.size(), 1u);
  EXPECT_TRUE(out_.log[0].envelope.send().binary());
  out_.clear();
  const std::vector<conn_id> none{50, 51};
  d_->send_many(none, message_kind::text, "x");
  EXPECT_TRUE(out_.log.empty());
}

TEST_F(Dispatcher, AHugeRecipientListIsCutIntoBoundedSends) {
  std::vector<conn_id> all;
  const std::size_t n = dispatcher::max_recipients_per_send * 2 + 10;
  for (conn_id id = 1; id <= n; ++id) {
    d_->on_envelope(1, opened(id, "/rec"));
    all.push_back(id);
  }
  out_.clear();
  d_->send_many(all, message_kind::text, "big room");
  ASSERT_EQ(out_.log.size(), 3u);
  std::vector<conn_id> seen;
  for (const auto& q : out_.log) {
    EXPECT_EQ(q.link, 1u);
    EXPECT_LE(static_cast<std::size_t>(q.envelope.send().conn_ids_size()), dispatcher::max_recipients_per_send);
    EXPECT_EQ(q.envelope.send().payload(), "big room");
    seen.insert(seen.end(), q.envelope.send().conn_ids().begin(), q.envelope.send().conn_ids().end());
  }
  EXPECT_EQ(seen, all);
}

TEST_F(Dispatcher, PingIsAnsweredOnItsLink) {
  pb::Envelope ping;
  ping.mutable_ping()->set_nonce(1234);
  batch(2, {ping});
  const auto sent = out_.on(2);
  ASSERT_EQ(sent.size(), 1u);
  ASSERT_TRUE(sent[0].has_pong());
  EXPECT_EQ(sent[0].pong().nonce(), 1234u);
}

TEST_F(Dispatcher, ClosedConnectionsAreForgotten) {
  batch(0, {opened(1, "/rec"), message_env(1, "a", 1), closed_env(1, 1001), message_env(1, "b", 2)});
  EXPECT_EQ(rec_->events, (std::vector<std::string>{"open 1", "message 1 a", "close 1 1001"}));
  EXPECT_EQ(d_->connection_count(), 0u);
  EXPECT_EQ(d_->link_of(1), -1);
  d_->send(1, message_kind::text, "late");
  EXPECT_EQ(d_->stats().sends_to_unknown, 1u);
}

TEST_F(Dispatcher, ALostLinkClosesItsConnectionsOnly) {
  batch(0, {opened(1, "/rec")});
  batch(1, {opened(2, "/rec"), opened(3, "/rec")});
  rec_->events.clear();
  d_->on_link_down(1);
  std::sort(rec_->events.begin(), rec_->events.end());
  EXPECT_EQ(rec_->events, (std::vector<std::string>{"close 2 1006", "close 3 1006"}));
  EXPECT_EQ(d_->link_of(1), 0);
  EXPECT_EQ(d_->connection_count(), 1u);
  EXPECT_TRUE(hub_.events.empty()) << "only link 0 is the hub";
  d_->on_link_down(0);
  d_->on_link_up(0);
  EXPECT_EQ(hub_.events, (std::vector<std::string>{"down", "up"}));
}

TEST_F(Dispatcher, APathWithoutAnAppIsClosed) {
  batch(3, {opened(8, "/nowhere")});
  const auto sent = out_.on(3);
  ASSERT_EQ(sent.size(), 1u);
  ASSERT_TRUE(sent[0].has_close());
  EXPECT_EQ(sent[0].close().conn_id(), 8u);
  EXPECT_EQ(sent[0].close().code(), 1011u);
  EXPECT_EQ(d_->connection_count(), 0u);
}

TEST_F(Dispatcher, ResumedConnectionsCarryTheirState) {
  batch(0, {opened(4, "/rec", true, {"a", "b"})});
  EXPECT_EQ(rec_->events, (std::vector<std::string>{"open 4 resumed"}));
  EXPECT_EQ(rec_->opened_state.rooms, (std::vector<std::string>{"a", "b"}));

  // The rooms app restores its memberships from it.
  batch(1, {opened(5, "/rooms", true, {"lobby"})});
  EXPECT_EQ(rooms_->local_members("lobby"), 1u);
  EXPECT_EQ(broker_.subscribed, (std::set<std::string>{"lobby"}));
}

TEST_F(Dispatcher, KeepStateSendsAStateUpdateOnTheConnectionsLink) {
  batch(2, {opened(6, "/rec")});
  out_.clear();
  batch(2, {message_env(6, "keep", 1)});
  const auto sent = out_.on(2);
  ASSERT_EQ(sent.size(), 2u);
  ASSERT_TRUE(sent[0].has_state());
  EXPECT_EQ(sent[0].state().conn_id(), 6u);
  ASSERT_EQ(sent[0].state().state().rooms_size(), 1);
  EXPECT_EQ(sent[0].state().state().rooms(0), "k");
  EXPECT_EQ(sent[0].state().state().app_data(), "d");
  EXPECT_TRUE(sent[1].has_ack());
}

TEST_F(Dispatcher, CloseAsksTheGatewayAndWaitsForItsConnectionClosed) {
  batch(1, {opened(6, "/rec"), message_env(6, "close", 1)});
  const auto sent = out_.on(1);
  ASSERT_GE(sent.size(), 1u);
  ASSERT_TRUE(sent[0].has_close());
  EXPECT_EQ(sent[0].close().code(), 4000u);
  EXPECT_EQ(sent[0].close().reason(), "asked");
  EXPECT_EQ(d_->connection_count(), 1u);
}

TEST_F(Dispatcher, AnAppExceptionClosesThatConnectionOnly) {
  batch(0, {opened(1, "/rec"), opened(2, "/rec"), message_env(1, "throw", 1), message_env(2, "reply-twice", 2)});
  const auto sent = out_.on(0);
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_TRUE(sent[0].has_close());
  EXPECT_EQ(sent[0].close().conn_id(), 1u);
  EXPECT_EQ(sent[0].close().code(), 1011u);
  EXPECT_EQ(sent[1].send().payload(), "one");
  EXPECT_EQ(sent[2].send().payload(), "two");
  EXPECT_EQ(sent[3].ack().seq(), 2u);
  EXPECT_EQ(d_->stats().app_errors, 1u);
}

TEST_F(Dispatcher, HubDeliveriesGoToTheListenerAndRoomMessagesToEveryApp) {
  pb::Envelope e;
  e.mutable_broker_deliver()->set_room("r");
  e.mutable_broker_deliver()->set_payload("p");
  batch(0, {e});
  EXPECT_EQ(hub_.events, (std::vector<std::string>{"deliver r p"}));
  EXPECT_TRUE(out_.log.empty()) << "a delivery is not a Message: no Ack";

  d_->deliver_room_message("r", "p2");
  EXPECT_EQ(rec_->events, (std::vector<std::string>{"room r p2"}));
}

TEST_F(Dispatcher, UnexpectedEnvelopesAreIgnoredAndCounted) {
  pb::Envelope e;
  e.mutable_send()->add_conn_ids(1);
  batch(0, {e});
  EXPECT_EQ(d_->stats().unexpected_envelopes, 1u);
  EXPECT_TRUE(out_.log.empty());
}

}  // namespace
