// The dispatcher against a fake link output: routing, acks after the
// batch's sends, send_many grouped by link, state, close, link loss.
#include "worker/runtime/dispatcher.hpp"

#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <set>
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
  void on_hub_deliver(std::string_view room, std::string_view payload, deflated_segment pre) override {
    events.push_back("deliver " + std::string(room) + " " + std::string(payload) +
                     (pre.present() ? " pre " + std::string(pre.bytes) + "/" + std::to_string(pre.covers) : ""));
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

// The publish API waits for each message's receipt: the rooms app's broker
// decides it; the answer goes back once, on the link the request came on.
TEST_F(Dispatcher, ApiPublishWithARequestIsAnsweredOnceOnItsLink) {
  pb::Envelope e;
  auto* p = e.mutable_api_publish();
  p->set_path("/rooms");
  p->set_room("lobby");
  p->set_data("7");
  p->set_request(42);
  batch(3, {e});
  ASSERT_EQ(broker_.published.size(), 1u);
  EXPECT_EQ(broker_.published[0].payload, R"({"room":"lobby","data":7})");
  EXPECT_TRUE(out_.on(3).empty()) << "not before the broker took it";
  broker_.answer_publish({true, 9, {}});
  auto sent = out_.on(3);
  ASSERT_EQ(sent.size(), 1u);
  ASSERT_TRUE(sent[0].has_api_published());
  EXPECT_EQ(sent[0].api_published().request(), 42u);
  EXPECT_TRUE(sent[0].api_published().ok());
  EXPECT_EQ(sent[0].api_published().offset(), 9u);

  // No app at the path: answered at once, as a failure.
  p->set_path("/nowhere");
  p->set_request(43);
  batch(3, {e});
  sent = out_.on(3);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_FALSE(sent[1].api_published().ok());
  EXPECT_EQ(sent[1].api_published().request(), 43u);

  // Without a request nobody waits: nothing is sent back.
  p->set_path("/rooms");
  p->set_request(0);
  batch(3, {e});
  EXPECT_TRUE(broker_.receipts.size() <= 1u);
  if (!broker_.receipts.empty()) broker_.answer_publish({true, 10, {}});
  EXPECT_EQ(out_.on(3).size(), 2u);
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
  pb::Envelope compressed;
  compressed.mutable_broker_deliver()->set_room("r");
  compressed.mutable_broker_deliver()->set_payload("payload");
  compressed.mutable_broker_deliver()->set_deflated_prefix("zz");
  compressed.mutable_broker_deliver()->set_deflated_covers(6);
  batch(0, {e, compressed});
  EXPECT_EQ(hub_.events, (std::vector<std::string>{"deliver r p", "deliver r payload pre zz/6"}));
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

// ---------------------------------------------------------------- fairness

// Delivers `envs` as one read batch without serving a turn.
void read_only(dispatcher& d, std::uint32_t link, const std::vector<pb::Envelope>& envs) {
  for (const auto& e : envs) d.on_envelope(link, e);
}

// Each Ack in `sent` covers only messages whose echo came before it, and
// acks only grow.
void expect_acks_follow_their_replies(const std::vector<pb::Envelope>& sent,
                                      const std::map<std::string, std::uint64_t>& seq_of) {
  std::set<std::uint64_t> replied;
  std::uint64_t last_ack = 0;
  for (const auto& e : sent) {
    if (e.has_send()) replied.insert(seq_of.at(e.send().payload()));
    if (!e.has_ack()) continue;
    EXPECT_GT(e.ack().seq(), last_ack);
    last_ack = e.ack().seq();
    for (std::uint64_t seq = 1; seq <= last_ack; ++seq)
      ASSERT_TRUE(replied.contains(seq)) << "Ack " << last_ack << " before the reply to " << seq;
  }
}

TEST_F(Dispatcher, ABurstOfOneConnectionDoesNotDelayAnotherBeyondOneBudget) {
  batch(0, {opened(1, "/echo"), opened(2, "/echo")});
  std::vector<pb::Envelope> envs;
  std::map<std::string, std::uint64_t> seq_of;
  for (std::uint64_t seq = 1; seq <= 1000; ++seq) {
    envs.push_back(message_env(1, "a" + std::to_string(seq), seq));
    seq_of["a" + std::to_string(seq)] = seq;
  }
  envs.push_back(message_env(2, "b", 1001));
  seq_of["b"] = 1001;
  read_only(*d_, 0, envs);

  EXPECT_TRUE(d_->end_batch(0)) << "the burst is not done in one turn";
  std::vector<std::string> first_turn;
  for (const auto& e : out_.on(0))
    if (e.has_send()) first_turn.push_back(e.send().payload());
  ASSERT_EQ(first_turn.size(), dispatcher::turn_messages_per_connection + 1);
  EXPECT_EQ(first_turn.back(), "b") << "b's reply comes within the first turn, not after a1000";
  // Only a1..a16 are handled in order from the start: b (1001) is not covered yet.
  ASSERT_TRUE(out_.on(0).back().has_ack());
  EXPECT_EQ(out_.on(0).back().ack().seq(), dispatcher::turn_messages_per_connection);

  std::size_t turns = 1;
  while (d_->serve_turn()) ++turns;
  ++turns;  // the one that returned false
  EXPECT_EQ(turns, (1000 + dispatcher::turn_messages_per_connection - 1) / dispatcher::turn_messages_per_connection);
  EXPECT_EQ(d_->queued_messages(), 0u);
  const auto sent = out_.on(0);
  std::vector<std::string> a_replies;
  for (const auto& e : sent)
    if (e.has_send() && e.send().payload() != "b") a_replies.push_back(e.send().payload());
  ASSERT_EQ(a_replies.size(), 1000u);
  for (std::size_t i = 0; i < a_replies.size(); ++i) EXPECT_EQ(a_replies[i], "a" + std::to_string(i + 1));
  expect_acks_follow_their_replies(sent, seq_of);
  ASSERT_TRUE(sent.back().has_ack());
  EXPECT_EQ(sent.back().ack().seq(), 1001u);
}

TEST_F(Dispatcher, AByteBudgetLimitsATurnToOneLargeMessage) {
  batch(0, {opened(1, "/echo")});
  const std::string big(dispatcher::turn_bytes_per_connection, 'x');
  read_only(*d_, 0, {message_env(1, big, 1), message_env(1, big, 2)});
  EXPECT_TRUE(d_->end_batch(0));
  EXPECT_EQ(d_->queued_messages(), 1u);
  EXPECT_FALSE(d_->serve_turn());
  EXPECT_EQ(out_.on(0).back().ack().seq(), 2u);
}

TEST_F(Dispatcher, AClosedConnectionsQueuedMessagesAreHandledBeforeItsClose) {
  batch(0, {opened(7, "/rec")});
  std::vector<pb::Envelope> envs;
  for (std::uint64_t seq = 1; seq <= 20; ++seq) envs.push_back(message_env(7, "m", seq));
  envs.push_back(closed_env(7, 1000));
  read_only(*d_, 0, envs);
  while (d_->serve_turn()) {
  }
  ASSERT_EQ(rec_->events.size(), 22u);
  EXPECT_EQ(rec_->events[20], "message 7 m");
  EXPECT_EQ(rec_->events[21], "close 7 1000");
  EXPECT_EQ(d_->connection_count(), 0u);
  EXPECT_EQ(out_.on(0).back().ack().seq(), 20u);
}

TEST_F(Dispatcher, ALostLinkDropsItsQueuedMessagesAndLaterAcksDoNotWaitForThem) {
  batch(0, {opened(1, "/echo")});
  std::vector<pb::Envelope> envs;
  for (std::uint64_t seq = 1; seq <= 40; ++seq) envs.push_back(message_env(1, "m", seq));
  read_only(*d_, 0, envs);
  EXPECT_TRUE(d_->end_batch(0));
  d_->on_link_down(0);
  EXPECT_EQ(d_->queued_messages(), 0u);
  EXPECT_FALSE(d_->serve_turn());
  d_->on_link_up(0);
  out_.clear();
  batch(0, {opened(2, "/echo"), message_env(2, "after", 1)});
  const auto sent = out_.on(0);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].send().payload(), "after");
  EXPECT_EQ(sent[1].ack().seq(), 1u);
}

// ---------------------------------------------------------------- state deltas

pb::Envelope rooms_op(std::uint64_t id, const std::string& op, const std::string& room, std::uint64_t seq) {
  return message_env(id, R"({"op":")" + op + R"(","room":")" + room + R"("})", seq);
}

std::vector<pb::StateUpdate> state_updates(const fakes::fake_link_output& out, std::uint32_t link) {
  std::vector<pb::StateUpdate> updates;
  for (const auto& e : out.on(link))
    if (e.has_state()) updates.push_back(e.state());
  return updates;
}

std::vector<std::string> names(const google::protobuf::RepeatedPtrField<std::string>& rooms) {
  return {rooms.begin(), rooms.end()};
}

TEST_F(Dispatcher, MembershipChangesLeaveAsOneDeltaPerTurn) {
  batch(0, {opened(3, "/rooms")});
  batch(0, {rooms_op(3, "join", "a", 1), rooms_op(3, "join", "b", 2), rooms_op(3, "join", "c", 3),
            rooms_op(3, "leave", "a", 4)});
  auto updates = state_updates(out_, 0);
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].conn_id(), 3u);
  EXPECT_FALSE(updates[0].has_state());
  EXPECT_EQ(names(updates[0].rooms_joined()), (std::vector<std::string>{"b", "c"}));
  EXPECT_TRUE(updates[0].rooms_left().empty());
  // The update precedes the turn's Ack.
  EXPECT_TRUE(out_.on(0).back().has_ack());
  EXPECT_TRUE(out_.on(0)[out_.on(0).size() - 2].has_state());

  out_.clear();
  batch(0, {rooms_op(3, "leave", "b", 5)});
  updates = state_updates(out_, 0);
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_TRUE(updates[0].rooms_joined().empty());
  EXPECT_EQ(names(updates[0].rooms_left()), (std::vector<std::string>{"b"}));
}

TEST_F(Dispatcher, AJoinAndLeaveOfOneRoomInOneTurnCancel) {
  batch(0, {opened(3, "/rooms")});
  batch(0, {rooms_op(3, "join", "t", 1), rooms_op(3, "leave", "t", 2)});
  EXPECT_TRUE(state_updates(out_, 0).empty());
  EXPECT_EQ(out_.on(0).back().ack().seq(), 2u);
}

TEST_F(Dispatcher, AChangeOfAppDataSendsTheFullState) {
  batch(2, {opened(6, "/rec")});
  batch(2, {message_env(6, "keep", 1)});
  const auto updates = state_updates(out_, 2);
  ASSERT_EQ(updates.size(), 1u);
  ASSERT_TRUE(updates[0].has_state());
  EXPECT_EQ(names(updates[0].state().rooms()), (std::vector<std::string>{"k"}));
  EXPECT_EQ(updates[0].state().app_data(), "d");
  EXPECT_TRUE(updates[0].rooms_joined().empty());
}

TEST_F(Dispatcher, AThousandToggleCostsRoomNamesNotRoomLists) {
  // A member of 255 rooms toggles one more 1,000 times, one message per
  // read (the worst case for coalescing). Each StateUpdate used to carry
  // all 256 rooms (about 8 KiB here, 8 MB in all); a delta carries one.
  batch(0, {opened(3, "/rooms")});
  std::uint64_t seq = 0;
  for (int i = 0; i < 255; ++i)
    batch(0, {rooms_op(3, "join", "a-room-with-a-longish-name-" + std::to_string(i), ++seq)});
  out_.clear();
  for (int i = 0; i < 1000; ++i) batch(0, {rooms_op(3, i % 2 == 0 ? "join" : "leave", "toggle", ++seq)});
  std::size_t state_bytes = 0;
  std::size_t updates = 0;
  for (const auto& e : out_.on(0))
    if (e.has_state()) {
      state_bytes += e.ByteSizeLong();
      ++updates;
    }
  EXPECT_EQ(updates, 1000u);
  EXPECT_LT(state_bytes, 32u * 1024u) << state_bytes << " bytes of StateUpdate for 1,000 toggles";
  std::cout << "[ measured ] " << state_bytes << " bytes of StateUpdate for 1,000 toggles\n";
}

}  // namespace
