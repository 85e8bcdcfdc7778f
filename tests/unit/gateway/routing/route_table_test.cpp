// The route table driven without a socket: fake connections and links.
#include "gateway/routing/route_table.hpp"

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/fakes/gateway_fakes.hpp"

namespace fg::gateway {
namespace {

namespace pb = framegate::link;
using fakes::bytes;
using fakes::fake_connection;
using fakes::fake_link;
using fakes::request;

// A worker's Send.
pb::Envelope send_of(const std::vector<std::uint64_t>& ids, std::string payload, bool binary = false) {
  pb::Envelope e;
  auto* s = e.mutable_send();
  s->mutable_conn_ids()->Assign(ids.begin(), ids.end());
  s->set_payload(std::move(payload));
  s->set_binary(binary);
  return e;
}

class route_table_test : public ::testing::Test {
 protected:
  route_table_test() {
    config_.threads = 2;
    config_.credit_window = 4;
    config_.credit_bytes = 1 << 20;
  }

  // Builds the table (after a test changed config_) on `thread`.
  route_table& table(unsigned thread = 0) {
    if (!table_)
      table_ = std::make_unique<route_table>(config_, route_table_identity{"gw-test", thread}, compressor_,
                                             [this] { ++flushes_; });
    return *table_;
  }
  fake_link& worker(const std::string& id, std::vector<std::string> paths = {"/echo", "/rooms"},
                    std::uint32_t max_envelope = 0) {
    links_.push_back(std::make_unique<fake_link>(table()));
    links_.back()->register_as(id, paths, max_envelope);
    return *links_.back();
  }
  fake_connection& open(std::uint64_t id, request_info info = request("/echo")) {
    conns_.push_back(std::make_unique<fake_connection>(id, table()));
    table().on_open(*conns_.back(), std::move(info));
    return *conns_.back();
  }
  void message(fake_connection& c, std::string_view text) { table().on_message(c, ws::opcode::text, bytes(text)); }

  // The worker among `candidates` whose link got conn `id`'s Opened.
  static fake_link* serving(std::uint64_t id, std::initializer_list<fake_link*> candidates) {
    fake_link* found = nullptr;
    for (fake_link* l : candidates)
      for (const auto& o : l->opened())
        if (o.conn_id() == id) found = l;
    return found;
  }

  gateway_config config_;
  thread_counters thread_counters_;
  message_compressor compressor_{config_.deflate(), thread_counters_};
  int flushes_ = 0;
  // Destroyed in reverse: the table first (it closes its links, and holds
  // connections it must not outlive), then the links and connections.
  std::vector<std::unique_ptr<fake_connection>> conns_;
  std::vector<std::unique_ptr<fake_link>> links_;
  std::unique_ptr<route_table> table_;
};

// ---------------------------------------------------------------- admission and registration

TEST_F(route_table_test, admit_refuses_with_503_without_workers_and_404_for_an_unserved_path) {
  std::string_view reason;
  EXPECT_EQ(table().admit(request("/echo"), reason), 503u);
  EXPECT_EQ(reason, "no worker is available, try later");
  worker("w1", {"/echo"});
  EXPECT_EQ(table().admit(request("/rooms"), reason), 404u);
  EXPECT_EQ(table().admit(request("/echo"), reason), 0u);
  EXPECT_EQ(table().counters().refused_no_worker, 1u);
  EXPECT_EQ(table().counters().refused_unknown_path, 1u);
}

TEST_F(route_table_test, a_link_is_not_a_worker_until_it_registers) {
  fake_link unregistered(table());
  std::string_view reason;
  EXPECT_EQ(table().admit(request("/echo"), reason), 503u);
  EXPECT_EQ(table().live_workers(), 0u);
}

TEST_F(route_table_test, register_is_answered_with_welcome) {
  auto& w = worker("w1");
  const auto welcomes = w.of(pb::Envelope::kWelcome);
  ASSERT_EQ(welcomes.size(), 1u);
  EXPECT_EQ(welcomes[0].welcome().gateway_id(), "gw-test");
  EXPECT_EQ(welcomes[0].welcome().link_index(), 0u);
  EXPECT_EQ(welcomes[0].welcome().link_count(), 2u);
  EXPECT_EQ(welcomes[0].welcome().credit_window(), 4u);
  EXPECT_EQ(welcomes[0].welcome().max_message_size(), config_.reader.limits.max_message_size);
  EXPECT_EQ(welcomes[0].welcome().max_envelope(), max_worker_envelope(config_));
  EXPECT_EQ(table().live_workers(), 1u);
}

TEST_F(route_table_test, a_first_envelope_other_than_register_closes_the_link) {
  pb::Envelope ack;
  ack.mutable_ack()->set_seq(1);
  // A Send is read in place, not as an Envelope: checked all the same.
  for (const auto& e : {ack, send_of({1}, "")}) {
    fake_link l(table());
    l.deliver(e);
    EXPECT_TRUE(l.closed());
    EXPECT_EQ(l.close_reason, "the first envelope of a link must be Register");
  }
}

TEST_F(route_table_test, ping_is_answered_and_pings_go_to_registered_workers_only) {
  auto& w = worker("w1");
  fake_link unregistered(table());
  pb::Envelope ping;
  ping.mutable_ping()->set_nonce(42);
  w.deliver(ping);
  ASSERT_EQ(w.of(pb::Envelope::kPong).size(), 1u);
  EXPECT_EQ(w.of(pb::Envelope::kPong)[0].pong().nonce(), 42u);
  table().tick(std::chrono::steady_clock::now());
  EXPECT_EQ(w.of(pb::Envelope::kPing).size(), 1u);
  EXPECT_TRUE(unregistered.of(pb::Envelope::kPing).empty());
}

// ---------------------------------------------------------------- routing

TEST_F(route_table_test, open_announces_the_connection_and_messages_follow_in_order) {
  auto& w = worker("w1");
  auto info = request("/echo", "198.18.0.7");
  info.query = "a=1";
  info.headers.emplace_back("origin", "https://example.test");
  auto& c = open(7, info);
  const auto opened = w.opened();
  ASSERT_EQ(opened.size(), 1u);
  EXPECT_EQ(opened[0].conn_id(), 7u);
  EXPECT_EQ(opened[0].gateway_id(), "gw-test");
  EXPECT_EQ(opened[0].path(), "/echo");
  EXPECT_EQ(opened[0].query(), "a=1");
  EXPECT_EQ(opened[0].remote_address(), "198.18.0.7");
  EXPECT_EQ(opened[0].headers().at("origin"), "https://example.test");
  EXPECT_EQ(opened[0].sticky_key(), "conn:7");
  EXPECT_FALSE(opened[0].resumed());

  message(c, "one");
  table().on_message(c, ws::opcode::binary, bytes("two"));
  const auto m = w.messages();
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].payload(), "one");
  EXPECT_FALSE(m[0].binary());
  EXPECT_EQ(m[0].seq(), 1u);
  EXPECT_EQ(m[1].payload(), "two");
  EXPECT_TRUE(m[1].binary());
  EXPECT_EQ(m[1].seq(), 2u);
}

TEST_F(route_table_test, connections_go_only_to_workers_serving_their_path) {
  auto& echo = worker("w-echo", {"/echo"});
  auto& rooms = worker("w-rooms", {"/rooms"});
  for (std::uint64_t id = 1; id <= 20; ++id) open(id, request(id % 2 ? "/echo" : "/rooms"));
  for (const auto& o : echo.opened()) EXPECT_EQ(o.path(), "/echo");
  for (const auto& o : rooms.opened()) EXPECT_EQ(o.path(), "/rooms");
  EXPECT_EQ(echo.opened().size(), 10u);
  EXPECT_EQ(rooms.opened().size(), 10u);
}

TEST_F(route_table_test, the_default_key_spreads_connections_over_every_worker) {
  auto& a = worker("w1");
  auto& b = worker("w2");
  auto& c = worker("w3");
  for (std::uint64_t id = 1; id <= 300; ++id) open(id);
  for (const fake_link* l : {&a, &b, &c}) {
    EXPECT_GT(l->opened().size(), 50u);
    EXPECT_LT(l->opened().size(), 150u);
  }
}

// One client's connections share a worker when its key is the same, for every key kind.
struct sticky_case {
  const char* name;
  const char* spec;
  const char* key;  // the sticky key both connections carry
  void (*decorate)(request_info&, int variant);
};

class sticky_key_routing : public route_table_test, public ::testing::WithParamInterface<sticky_case> {};

TEST_P(sticky_key_routing, connections_with_one_key_land_on_one_worker_and_the_key_is_announced) {
  config_.sticky_key = GetParam().spec;
  std::vector<fake_link*> workers;
  for (int i = 0; i < 4; ++i) workers.push_back(&worker("w" + std::to_string(i)));
  std::set<fake_link*> chosen;
  for (std::uint64_t id = 1; id <= 12; ++id) {
    auto info = request("/echo", "198.18.0.1");
    GetParam().decorate(info, static_cast<int>(id));
    open(id, info);
    fake_link* w = serving(id, {workers[0], workers[1], workers[2], workers[3]});
    ASSERT_NE(w, nullptr);
    chosen.insert(w);
    EXPECT_EQ(w->opened().back().sticky_key(), GetParam().key);
  }
  EXPECT_EQ(chosen.size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(
    every_kind, sticky_key_routing,
    ::testing::Values(sticky_case{"ip", "ip", "198.18.0.1", [](request_info&, int) {}},
                      sticky_case{"header", "header:X-User", "alice",
                                  [](request_info& r, int) { r.headers.emplace_back("x-user", "alice"); }},
                      sticky_case{"query", "query:user", "alice",
                                  [](request_info& r, int v) { r.query = "v=" + std::to_string(v) + "&user=alice"; }},
                      sticky_case{"cookie", "cookie:sid", "s-1",
                                  [](request_info& r, int v) {
                                    r.headers.emplace_back("cookie", "n=" + std::to_string(v) + "; sid=s-1");
                                  }}),
    [](const auto& p) { return std::string(p.param.name); });

TEST_F(route_table_test, an_absent_sticky_key_falls_back_to_the_connection_id) {
  config_.sticky_key = "header:x-user";
  auto& w = worker("w1");
  open(9);
  EXPECT_EQ(w.opened().back().sticky_key(), "conn:9");
}

TEST_F(route_table_test, a_message_too_big_for_the_worker_closes_the_connection_with_1009) {
  auto& w = worker("w1", {"/echo"}, 64 + 10);  // takes payloads up to 10 bytes
  auto& c = open(1);
  message(c, "0123456789");
  message(c, "0123456789A");
  EXPECT_EQ(w.messages().size(), 1u);
  EXPECT_EQ(c.close_code, ws::close_code::message_too_big);
  EXPECT_EQ(table().counters().too_big_for_worker, 1u);
}

// ---------------------------------------------------------------- what workers send back

TEST_F(route_table_test, send_reaches_every_listed_connection_and_nobody_else) {
  worker("w1");
  auto& a = open(1);
  auto& b = open(2);
  auto& other = open(3);
  pb::Envelope e;
  auto* s = e.mutable_send();
  s->add_conn_ids(1);
  s->add_conn_ids(2);
  s->add_conn_ids(99);  // gone: ignored
  s->set_payload("hi");
  links_[0]->deliver(e);
  EXPECT_EQ(a.payloads(), std::vector<std::string>{"hi"});
  EXPECT_EQ(b.payloads(), std::vector<std::string>{"hi"});
  EXPECT_TRUE(other.sent.empty());
  EXPECT_EQ(a.sent[0].op, ws::opcode::text);
  EXPECT_GE(flushes_, 1);  // what the batch queued is written at its end
}

TEST_F(route_table_test, a_send_to_one_connection_is_framed_for_it_and_a_send_to_many_is_shared) {
  worker("w1");
  auto& a = open(1);
  auto& b = open(2);
  links_[0]->deliver(send_of({1}, "one"));
  links_[0]->deliver(send_of({1, 2}, "both", true));
  EXPECT_EQ(a.payloads(), (std::vector<std::string>{"one", "both"}));
  EXPECT_EQ(b.payloads(), std::vector<std::string>{"both"});
  EXPECT_EQ(a.sent[1].op, ws::opcode::binary);
  EXPECT_EQ(a.shared_sends, 1);  // the second only: one recipient needs no shared frame
  EXPECT_EQ(b.shared_sends, 1);
}

TEST_F(route_table_test, a_send_parsed_by_the_generated_code_is_delivered_the_same) {
  worker("w1");
  auto& a = open(1);
  auto& b = open(2);
  const pb::Envelope e = send_of({2, 1}, std::string("\xff\x00", 2), true);
  links_[0]->deliver_parsed(e);
  EXPECT_EQ(a.payloads(), std::vector<std::string>{std::string("\xff\x00", 2)});
  EXPECT_EQ(b.payloads(), a.payloads());
  EXPECT_EQ(a.sent[0].op, ws::opcode::binary);
  config_.reader.limits.max_message_size = 1;  // and rejected the same
  links_[0]->deliver_parsed(e);
  EXPECT_EQ(a.close_code, ws::close_code::internal_error);
  EXPECT_EQ(b.close_code, ws::close_code::internal_error);
}

TEST_F(route_table_test, a_worker_closes_a_connection_and_hears_it_closed) {
  auto& w = worker("w1");
  auto& c = open(5);
  pb::Envelope e;
  e.mutable_close()->set_conn_id(5);
  e.mutable_close()->set_code(4000);
  e.mutable_close()->set_reason("bye");
  w.deliver(e);
  EXPECT_EQ(c.close_code, 4000);
  EXPECT_EQ(c.close_reason, "bye");
  open(6).client_closes(1001);
  // Both are reported, with their code and who closed.
  const auto closed = w.of(pb::Envelope::kClosed);
  ASSERT_EQ(closed.size(), 2u);
  EXPECT_EQ(closed[0].closed().conn_id(), 5u);
  EXPECT_EQ(closed[0].closed().code(), 4000u);
  EXPECT_EQ(closed[0].closed().closer(), pb::CLOSER_SERVER);
  EXPECT_EQ(closed[1].closed().conn_id(), 6u);
  EXPECT_EQ(closed[1].closed().code(), 1001u);
  EXPECT_EQ(closed[1].closed().closer(), pb::CLOSER_CLIENT);
}

TEST_F(route_table_test, a_wave_of_clients_leaving_hands_the_routes_buckets_back_once) {
  auto& w = worker("w1");
  for (std::uint64_t id = 1; id <= 3000; ++id) open(id);
  EXPECT_EQ(table().shed_unused(), 0u);  // every route still there
  for (std::uint64_t id = 31; id <= 3000; ++id) conns_[id - 1]->client_closes();
  EXPECT_GT(table().shed_unused(), 0u);
  EXPECT_EQ(table().shed_unused(), 0u);  // already the size the thirty left need
  // The routes that stayed still lead to their worker.
  message(*conns_[29], "still here");
  const auto m = w.messages();
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].conn_id(), 30u);
  EXPECT_EQ(m[0].payload(), "still here");
}

// ---------------------------------------------------------------- credits

TEST_F(route_table_test, a_worker_out_of_credit_pauses_its_clients_until_it_acknowledges) {
  auto& w = worker("w1");
  auto& c = open(1);
  for (int i = 0; i < 3; ++i) message(c, "m");
  EXPECT_TRUE(table().can_read(c));
  message(c, "m");  // the fourth: the window of 4 is full
  EXPECT_FALSE(table().can_read(c));
  EXPECT_EQ(table().counters().credit_pauses, 1u);
  w.ack(1);  // one back: room again
  EXPECT_EQ(c.resumes, 1);
  EXPECT_TRUE(table().can_read(c));
}

TEST_F(route_table_test, credit_counts_bytes_too) {
  config_.credit_bytes = 10;
  auto& w = worker("w1");
  auto& c = open(1);
  message(c, "0123456789");
  EXPECT_FALSE(table().can_read(c));
  w.ack(1);
  EXPECT_EQ(c.resumes, 1);
}

TEST_F(route_table_test, one_workers_exhausted_credit_pauses_only_its_own_clients) {
  auto& a = worker("w1");
  auto& b = worker("w2");
  std::vector<fake_connection*> on_a, on_b;
  for (std::uint64_t id = 1; id <= 20; ++id) {
    auto& c = open(id);
    (serving(id, {&a, &b}) == &a ? on_a : on_b).push_back(&c);
  }
  ASSERT_FALSE(on_a.empty());
  ASSERT_FALSE(on_b.empty());
  for (int i = 0; i < 4; ++i) message(*on_a[0], "m");
  EXPECT_FALSE(table().can_read(*on_a.back()));
  EXPECT_TRUE(table().can_read(*on_b[0]));
}

// ---------------------------------------------------------------- held closes

TEST_F(route_table_test, a_close_waits_for_the_replies_to_what_was_sent_before_it) {
  auto& w = worker("w1");
  auto& c = open(1);
  EXPECT_FALSE(table().hold_close(c));  // nothing on its way
  message(c, "a");
  message(c, "b");
  ASSERT_TRUE(table().hold_close(c));
  w.ack(1);
  EXPECT_EQ(c.closes_released, 0);
  w.ack(2);
  EXPECT_EQ(c.closes_released, 1);
}

TEST_F(route_table_test, an_acknowledged_message_holds_no_close) {
  auto& w = worker("w1");
  auto& c = open(1);
  message(c, "a");
  w.ack(1);
  EXPECT_FALSE(table().hold_close(c));
}

// ---------------------------------------------------------------- failover

class failover_test : public route_table_test {
 protected:
  // Two workers and a connection on each; returns the connection on `a`.
  void SetUp() override {
    a_ = &worker("w1");
    b_ = &worker("w2");
    for (std::uint64_t id = 1; on_a_ == nullptr || on_b_ == nullptr; ++id) {
      auto& c = open(id);
      (serving(id, {a_, b_}) == a_ ? on_a_ : on_b_) = &c;
    }
  }
  fake_link* a_ = nullptr;
  fake_link* b_ = nullptr;
  fake_connection* on_a_ = nullptr;
  fake_connection* on_b_ = nullptr;
};

TEST_F(failover_test, a_resumed_connection_is_announced_with_everything_it_was_opened_with) {
  request_info info = request("/rooms", "198.18.0.9");
  info.query = "room=lobby&x=1";
  info.subprotocol = "chat.v2";
  info.headers = {{"origin", "https://example.test"}, {"cookie", "session=abc"}};
  info.user = "alice";
  info.rooms_restricted = true;
  info.rooms_allowed = {"lobby", "team-*"};
  std::uint64_t id = 100;
  while (true) {  // a connection that lands on a
    const request_info copy = info;
    open(id, copy);
    if (serving(id, {a_, b_}) == a_) break;
    ++id;
  }
  pb::ConnectionOpened first;
  for (const auto& o : a_->opened())
    if (o.conn_id() == id) first = o;
  a_->close("killed");
  pb::ConnectionOpened resumed;
  for (const auto& o : b_->opened())
    if (o.conn_id() == id) resumed = o;
  ASSERT_TRUE(resumed.resumed());
  resumed.set_resumed(false);
  resumed.clear_state();
  std::string difference;
  google::protobuf::util::MessageDifferencer diff;
  diff.ReportDifferencesToString(&difference);
  EXPECT_TRUE(diff.Compare(first, resumed)) << difference;
  EXPECT_EQ(first.path(), "/rooms");
  EXPECT_EQ(first.user(), "alice");
  EXPECT_EQ(first.rooms_allowed_size(), 2);
}

TEST_F(failover_test, a_lost_worker_s_connections_resume_on_the_next_with_their_state) {
  pb::Envelope state;
  state.mutable_state()->set_conn_id(on_a_->id());
  state.mutable_state()->mutable_state()->add_rooms("lobby");
  a_->deliver(state);
  const std::size_t opened_on_b = b_->opened().size();
  a_->close("killed");
  EXPECT_TRUE(on_a_->is_open());
  const auto opened = b_->opened();
  ASSERT_EQ(opened.size(), opened_on_b + 1);
  EXPECT_EQ(opened.back().conn_id(), on_a_->id());
  EXPECT_TRUE(opened.back().resumed());
  ASSERT_EQ(opened.back().state().rooms_size(), 1);
  EXPECT_EQ(opened.back().state().rooms(0), "lobby");
  EXPECT_EQ(table().counters().connections_moved, 1u);
  // And it stays there: its next message goes to b.
  message(*on_a_, "after");
  EXPECT_EQ(b_->messages().back().payload(), "after");
}

TEST_F(failover_test, unacknowledged_messages_are_replayed_in_order_after_the_resume) {
  message(*on_a_, "1");
  message(*on_a_, "2");
  message(*on_a_, "3");
  a_->ack(1);
  a_->close("killed");
  const auto& got = b_->received;
  const auto resumed = std::find_if(got.begin(), got.end(), [&](const pb::Envelope& e) {
    return e.has_opened() && e.opened().conn_id() == on_a_->id();
  });
  ASSERT_NE(resumed, got.end());
  std::vector<std::string> replayed;
  for (auto it = resumed; it != got.end(); ++it)
    if (it->has_message()) replayed.push_back(it->message().payload());
  EXPECT_EQ(replayed, (std::vector<std::string>{"2", "3"}));
  EXPECT_EQ(table().counters().messages_replayed, 2u);
  EXPECT_GE(flushes_, 1);
}

TEST_F(failover_test, a_hung_worker_cut_off_frees_its_paused_clients_and_replays_what_it_held) {
  // A worker that stops acknowledging: its window fills and its clients pause.
  for (int i = 0; i < 4; ++i) message(*on_a_, "m" + std::to_string(i));
  ASSERT_FALSE(table().can_read(*on_a_));
  // Cut off (as a link timeout does): the paused client reads again on b,
  // which gets all four, in order.
  a_->close("no answer");
  EXPECT_EQ(on_a_->resumes, 1);
  std::vector<std::string> replayed;
  for (const auto& m : b_->messages())
    if (m.conn_id() == on_a_->id()) replayed.push_back(m.payload());
  EXPECT_EQ(replayed, (std::vector<std::string>{"m0", "m1", "m2", "m3"}));
  // The replay fills b's window in turn, until b acknowledges it.
  EXPECT_FALSE(table().can_read(*on_a_));
  b_->ack(b_->messages().back().seq());
  EXPECT_TRUE(table().can_read(*on_a_));
}

TEST_F(failover_test, a_held_close_is_released_when_its_worker_dies) {
  message(*on_a_, "x");
  ASSERT_TRUE(table().hold_close(*on_a_));
  const std::size_t closed_on_b = b_->of(pb::Envelope::kClosed).size();
  a_->close("killed");
  EXPECT_EQ(on_a_->closes_released, 1);
  EXPECT_FALSE(on_a_->is_open());
  // It closed: nothing about it is announced or replayed anywhere.
  EXPECT_EQ(serving(on_a_->id(), {b_}), nullptr);
  EXPECT_EQ(b_->of(pb::Envelope::kClosed).size(), closed_on_b);
}

TEST_F(failover_test, the_other_workers_connections_do_not_move) {
  a_->close("killed");
  EXPECT_EQ(table().counters().connections_moved, 1u);
  EXPECT_TRUE(on_b_->is_open());
  for (const auto& o : b_->opened()) {
    if (o.conn_id() == on_b_->id()) {
      EXPECT_FALSE(o.resumed());
    }
  }
}

TEST_F(failover_test, with_no_worker_left_connections_close_with_1013) {
  a_->close("killed");
  b_->close("killed");
  EXPECT_EQ(on_a_->close_code, ws::close_code::try_again_later);
  EXPECT_EQ(on_b_->close_code, ws::close_code::try_again_later);
  EXPECT_EQ(table().counters().closed_no_worker, 2u);
  EXPECT_EQ(table().live_workers(), 0u);
}

TEST_F(failover_test, a_rejoining_worker_takes_new_connections_and_the_moved_stay_put) {
  a_->close("killed");
  auto& again = worker("w1");  // same id: same hash, wins the same keys again
  message(*on_a_, "still on b");
  EXPECT_EQ(b_->messages().back().payload(), "still on b");
  EXPECT_TRUE(again.messages().empty());
  // A new connection with the moved one's key goes to the rejoined worker.
  config_.sticky_key = "conn";
  std::uint64_t id = 1000;
  while (true) {
    auto& c = open(++id);
    if (serving(c.id(), {&again}) != nullptr) break;
    ASSERT_LT(id, 1100u);
  }
  EXPECT_EQ(table().live_workers(), 2u);
}

TEST_F(failover_test, a_worker_that_never_registered_leaves_nothing_behind) {
  fake_link stray(table());
  stray.close("gone");
  EXPECT_EQ(table().counters().connections_moved, 0u);
  EXPECT_TRUE(on_a_->is_open());
}

// ---------------------------------------------------------------- rooms hub and publish API

TEST_F(route_table_test, the_hub_on_thread_0_relays_a_publish_to_subscribed_workers_once_each) {
  auto& a = worker("w1");
  auto& b = worker("w2");
  auto& c = worker("w3");
  pb::Envelope sub;
  sub.mutable_broker_subscribe()->add_subscribe("lobby");
  a.deliver(sub);
  a.deliver(sub);
  b.deliver(sub);
  pb::Envelope pub;
  pub.mutable_broker_publish()->set_room("lobby");
  pub.mutable_broker_publish()->set_payload("{}");
  c.deliver(pub);
  EXPECT_EQ(a.of(pb::Envelope::kBrokerDeliver).size(), 1u);
  EXPECT_EQ(b.of(pb::Envelope::kBrokerDeliver).size(), 1u);
  EXPECT_TRUE(c.of(pb::Envelope::kBrokerDeliver).empty());
  a.close("killed");  // forgotten by the hub
  b.deliver(pub);
  EXPECT_EQ(b.of(pb::Envelope::kBrokerDeliver).size(), 2u);
}

TEST_F(route_table_test, the_hub_hands_back_the_buckets_of_rooms_gone_with_their_worker) {
  auto& a = worker("w1");
  auto& b = worker("w2");
  pb::Envelope sub;
  for (int i = 0; i < 2000; ++i) sub.mutable_broker_subscribe()->add_subscribe("room-" + std::to_string(i));
  a.deliver(sub);
  pb::Envelope lobby;
  lobby.mutable_broker_subscribe()->add_subscribe("lobby");
  b.deliver(lobby);
  EXPECT_EQ(table().shed_unused(), 0u);
  a.close("killed");  // its 2,000 rooms go with it
  EXPECT_GT(table().shed_unused(), 0u);
  // The room left is still relayed.
  pb::Envelope pub;
  pub.mutable_broker_publish()->set_room("lobby");
  pub.mutable_broker_publish()->set_payload("{}");
  b.deliver(pub);
  EXPECT_EQ(b.of(pb::Envelope::kBrokerDeliver).size(), 1u);
}

TEST_F(route_table_test, other_threads_run_no_hub) {
  table(1);
  auto& a = worker("w1");
  pb::Envelope sub;
  sub.mutable_broker_subscribe()->add_subscribe("lobby");
  a.deliver(sub);
  pb::Envelope pub;
  pub.mutable_broker_publish()->set_room("lobby");
  a.deliver(pub);
  EXPECT_TRUE(a.of(pb::Envelope::kBrokerDeliver).empty());
  EXPECT_EQ(a.of(pb::Envelope::kWelcome)[0].welcome().link_index(), 1u);
}

TEST_F(route_table_test, publish_to_rooms_sends_each_room_to_one_rooms_worker_by_its_name) {
  using result = route_table::publish_result;
  EXPECT_EQ(table().publish_to_rooms(std::vector<room_message>{{"lobby", "{}"}}), result::no_worker);
  auto& echo_only = worker("w0", {"/echo"});
  EXPECT_EQ(table().publish_to_rooms(std::vector<room_message>{{"lobby", "{}"}}), result::no_worker);
  auto& a = worker("w1");
  auto& b = worker("w2");
  const std::vector<room_message> batch{{"lobby", "1"}, {"lobby", "2"}, {"kitchen", "3"}, {"lobby", "4"}};
  EXPECT_EQ(table().publish_to_rooms(batch), result::sent);
  EXPECT_TRUE(echo_only.of(pb::Envelope::kApiPublish).empty());
  for (const fake_link* l : {&a, &b}) {
    std::vector<std::string> lobby;
    for (const auto& e : l->of(pb::Envelope::kApiPublish)) {
      EXPECT_EQ(e.api_publish().path(), "/rooms");
      if (e.api_publish().room() == "lobby") lobby.push_back(e.api_publish().data());
    }
    EXPECT_TRUE(lobby.empty() || lobby == (std::vector<std::string>{"1", "2", "4"}));
  }
  EXPECT_EQ(a.of(pb::Envelope::kApiPublish).size() + b.of(pb::Envelope::kApiPublish).size(), 4u);
}

// The publish API waits for each message's receipt from its worker (the
// offset Redis gave it); a worker that goes away, or never answers, fails
// its messages instead of leaving the caller waiting.
TEST_F(route_table_test, publish_receipts_come_back_in_message_order_or_fail) {
  auto& a = worker("w1");
  auto& b = worker("w2");
  std::optional<std::vector<api_receipt>> got;
  const std::vector<room_message> batch{{"lobby", "1"}, {"kitchen", "2"}, {"garden", "3"}, {"attic", "4"}};
  ASSERT_EQ(table().publish_to_rooms(batch, [&](std::vector<api_receipt> r) { got = std::move(r); }),
            route_table::publish_result::sent);
  // Each worker answers what it was sent, with the data as its offset.
  for (fake_link* l : {&a, &b}) {
    for (const auto& e : l->of(pb::Envelope::kApiPublish)) {
      EXPECT_NE(e.api_publish().request(), 0u);
      EXPECT_FALSE(got.has_value());
      pb::Envelope answer;
      answer.mutable_api_published()->set_request(e.api_publish().request());
      answer.mutable_api_published()->set_ok(true);
      answer.mutable_api_published()->set_offset(std::stoull(e.api_publish().data()));
      l->deliver(answer);
    }
  }
  ASSERT_TRUE(got.has_value());
  ASSERT_EQ(got->size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_TRUE((*got)[i].ok);
    EXPECT_EQ((*got)[i].offset, i + 1);
  }
  EXPECT_EQ(table().receipts_pending(), 0u);

  // Unanswered: the worker goes away, or stays silent past the bound.
  got.reset();
  ASSERT_EQ(table().publish_to_rooms(batch, [&](std::vector<api_receipt> r) { got = std::move(r); }),
            route_table::publish_result::sent);
  a.close("killed");
  EXPECT_FALSE(got.has_value()) << "b's messages are still unanswered";
  table().tick(std::chrono::steady_clock::now() + 5 * config_.link_timeout);
  ASSERT_TRUE(got.has_value());
  for (const auto& r : *got) {
    EXPECT_FALSE(r.ok);
    EXPECT_FALSE(r.error.empty());
  }
  EXPECT_EQ(table().receipts_pending(), 0u);

  pb::Envelope late;
  late.mutable_api_published()->set_request(1);
  b.deliver(late);  // a late or unknown answer changes nothing
  EXPECT_EQ(table().receipts_pending(), 0u);
  // Without a receipt callback nothing is asked of the workers.
  const std::size_t before = b.of(pb::Envelope::kApiPublish).size();
  EXPECT_EQ(table().publish_to_rooms(batch), route_table::publish_result::sent);
  const auto sent = b.of(pb::Envelope::kApiPublish);
  ASSERT_EQ(sent.size(), before + 4);
  for (std::size_t i = before; i < sent.size(); ++i) EXPECT_EQ(sent[i].api_publish().request(), 0u);
  EXPECT_EQ(table().receipts_pending(), 0u);
}

TEST_F(route_table_test, publish_to_a_worker_whose_link_is_full_is_refused_whole) {
  using result = route_table::publish_result;
  auto& w = worker("w1");
  w.backlog = config_.credit_bytes + 1;
  EXPECT_EQ(table().publish_to_rooms(std::vector<room_message>{{"lobby", "1"}, {"kitchen", "2"}}), result::busy);
  EXPECT_TRUE(w.of(pb::Envelope::kApiPublish).empty());
  w.backlog = 0;
  EXPECT_EQ(table().publish_to_rooms(std::vector<room_message>{{"lobby", "1"}}), result::sent);
}

TEST_F(route_table_test, publish_larger_than_its_worker_takes_is_refused_whole) {
  using result = route_table::publish_result;
  auto& w = worker("w1", {"/rooms"}, 64 + 100);  // takes payloads up to 100 bytes
  const std::vector<room_message> batch{{"lobby", "1"}, {"kitchen", std::string(200, '7')}};
  EXPECT_EQ(table().publish_to_rooms(batch), result::too_big);
  EXPECT_TRUE(w.of(pb::Envelope::kApiPublish).empty());
  EXPECT_FALSE(w.closed());
  EXPECT_EQ(table().publish_to_rooms(std::vector<room_message>{{"lobby", "1"}}), result::sent);
}

// ---------------------------------------------------------------- what a worker may not send

class worker_input_test : public failover_test {
 protected:
  void send_to(fake_link& l, std::vector<std::uint64_t> ids, std::string payload, bool binary = false) {
    l.deliver(send_of(ids, std::move(payload), binary));
  }
  void close_from(fake_link& l, std::uint64_t id, std::uint32_t code, std::string reason) {
    pb::Envelope e;
    e.mutable_close()->set_conn_id(id);
    e.mutable_close()->set_code(code);
    e.mutable_close()->set_reason(std::move(reason));
    l.deliver(e);
  }
  std::uint64_t rejected(worker_rejection why) {
    return table().counters().worker_rejected[static_cast<std::size_t>(why)];
  }
};

TEST_F(worker_input_test, a_send_too_big_for_clients_closes_its_recipients_not_the_link) {
  config_.reader.limits.max_message_size = 8;
  send_to(*a_, {on_a_->id()}, "123456789");
  EXPECT_EQ(on_a_->close_code, ws::close_code::internal_error);
  EXPECT_TRUE(on_a_->sent.empty());
  EXPECT_FALSE(a_->closed());
  EXPECT_TRUE(on_b_->is_open());
  EXPECT_EQ(rejected(worker_rejection::too_big), 1u);
  send_to(*b_, {on_b_->id()}, "12345678");  // at the limit: delivered
  EXPECT_EQ(on_b_->payloads(), std::vector<std::string>{"12345678"});
}

TEST_F(worker_input_test, a_text_send_that_is_not_utf8_closes_its_recipients) {
  send_to(*a_, {on_a_->id()}, "caf\xc3");
  EXPECT_EQ(on_a_->close_code, ws::close_code::internal_error);
  EXPECT_EQ(rejected(worker_rejection::invalid_utf8), 1u);
  send_to(*b_, {on_b_->id()}, "caf\xc3", true);  // binary: any bytes
  EXPECT_EQ(on_b_->sent.size(), 1u);
  EXPECT_FALSE(a_->closed());
}

TEST_F(worker_input_test, a_close_code_no_endpoint_may_send_becomes_1011) {
  for (const std::uint32_t bad : {1005u, 1006u, 1015u, 999u, 70000u}) {
    auto& c = open(100 + bad);
    close_from(*serving(c.id(), {a_, b_}), c.id(), bad, "x");
    EXPECT_EQ(c.close_code, ws::close_code::internal_error) << bad;
  }
  EXPECT_EQ(rejected(worker_rejection::bad_close_code), 5u);
  close_from(*a_, on_a_->id(), 1013, "later");  // a server may ask to come back later
  EXPECT_EQ(on_a_->close_code, 1013);
  EXPECT_EQ(on_a_->close_reason, "later");
}

TEST_F(worker_input_test, a_close_reason_is_cut_at_a_character_and_dropped_if_invalid) {
  std::string long_reason(122, 'a');
  long_reason += "\xc3\xa9\xc3\xa9";  // é é: the cut at 123 bytes falls inside the first
  close_from(*a_, on_a_->id(), 4000, long_reason);
  EXPECT_EQ(on_a_->close_reason, std::string(122, 'a'));
  close_from(*b_, on_b_->id(), 4000, "bad \xff");
  EXPECT_EQ(on_b_->close_code, 4000);
  EXPECT_EQ(on_b_->close_reason, "");
}

// ---------------------------------------------------------------- link supervision

class link_supervision_test : public failover_test {
 protected:
  using clock = std::chrono::steady_clock;
  void tick_at(double seconds) {
    table().tick(start_ + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds)));
  }
  void pong(fake_link& l) {
    pb::Envelope e;
    e.mutable_pong()->set_nonce(1);
    l.deliver(e);
  }
  std::uint64_t cut(link_cutoff why) { return table().counters().links_cut[static_cast<std::size_t>(why)]; }
  clock::time_point start_ = clock::now();
};

TEST_F(link_supervision_test, a_silent_worker_is_cut_off_after_the_timeout_and_its_clients_move) {
  // config_.link_timeout is 3 s by default; b answers every ping, a never does.
  message(*on_a_, "unanswered");
  for (double t = 0; t <= 2.5; t += 1) {
    tick_at(t);
    pong(*b_);
  }
  EXPECT_FALSE(a_->closed());  // 2.5 s since last heard: not yet
  tick_at(3.5);
  EXPECT_TRUE(a_->closed());
  EXPECT_FALSE(b_->closed());
  EXPECT_EQ(cut(link_cutoff::timeout), 1u);
  EXPECT_TRUE(on_a_->is_open());
  ASSERT_EQ(b_->messages().back().payload(), "unanswered");  // replayed on b
  EXPECT_EQ(table().live_workers(), 1u);
}

TEST_F(link_supervision_test, a_worker_heard_between_ticks_stays) {
  for (double t = 0; t <= 10; t += 1) {
    tick_at(t);
    pong(*a_);
    pong(*b_);
  }
  EXPECT_FALSE(a_->closed());
  EXPECT_FALSE(b_->closed());
  EXPECT_GE(a_->of(pb::Envelope::kPing).size(), 10u);
}

TEST_F(link_supervision_test, a_link_that_never_registers_is_cut_too) {
  fake_link stray(table());
  tick_at(0);
  tick_at(1);
  tick_at(4.5);
  EXPECT_TRUE(stray.closed());
}

TEST_F(link_supervision_test, no_timeout_when_it_is_off) {
  config_.link_timeout = std::chrono::milliseconds(0);
  tick_at(0);
  tick_at(1000);
  EXPECT_FALSE(a_->closed());
}

TEST_F(link_supervision_test, a_worker_that_stops_reading_its_link_is_cut_off) {
  a_->backlog = 4 * config_.credit_bytes + 1;
  tick_at(0);
  EXPECT_TRUE(a_->closed());
  EXPECT_EQ(cut(link_cutoff::backlog), 1u);
  EXPECT_TRUE(on_a_->is_open());
}

// ---------------------------------------------------------------- metrics and shutdown

TEST_F(route_table_test, a_snapshot_has_a_row_per_worker_with_its_connections_and_unacked) {
  auto& w = worker("w1");
  auto& c = open(1);
  open(2);
  message(c, "abc");
  thread_snapshot snap;
  table().snapshot(snap);
  EXPECT_TRUE(snap.routing);
  ASSERT_EQ(snap.workers.size(), 1u);
  EXPECT_EQ(snap.workers[0].worker, "w1");
  EXPECT_EQ(snap.workers[0].links, 1u);
  EXPECT_EQ(snap.workers[0].connections, 2u);
  EXPECT_EQ(snap.workers[0].routed, 2u);
  EXPECT_EQ(snap.workers[0].unacked, 1u);
  EXPECT_EQ(snap.workers[0].unacked_bytes, 3u);
  EXPECT_GE(snap.workers[0].replay_held_bytes, 3u) << "the block the payload sits in";
  w.close("killed");
  thread_snapshot after;
  table().snapshot(after);
  ASSERT_EQ(after.workers.size(), 1u);  // its counters outlive it
  EXPECT_EQ(after.workers[0].links, 0u);
  EXPECT_EQ(after.workers[0].routed, 2u);
}

TEST_F(route_table_test, stop_closes_every_link_and_moves_nobody) {
  auto& a = worker("w1");
  auto& b = worker("w2");
  links_.push_back(std::make_unique<fake_link>(table()));  // connected, no Register yet
  auto& unregistered = *links_.back();
  auto& c = open(1);
  table().stop();
  EXPECT_TRUE(a.closed());
  EXPECT_TRUE(b.closed());
  EXPECT_TRUE(unregistered.closed());  // else the loop would hold it past the gateway's stop
  EXPECT_EQ(table().counters().connections_moved, 0u);
  EXPECT_TRUE(c.is_open());
  message(c, "dropped quietly");  // no worker: nothing to send it to
}

// ---------------------------------------------------------------- state deltas

// A StateUpdate for conn `id`: `full` replaces the kept rooms when given.
pb::Envelope state_update(std::uint64_t id, std::vector<std::string> joined, std::vector<std::string> left,
                          const std::vector<std::string>* full = nullptr) {
  pb::Envelope e;
  auto* u = e.mutable_state();
  u->set_conn_id(id);
  for (auto& r : joined) u->add_rooms_joined(std::move(r));
  for (auto& r : left) u->add_rooms_left(std::move(r));
  if (full != nullptr)
    for (const auto& r : *full) u->mutable_state()->add_rooms(r);
  return e;
}

// The rooms conn `id` resumes with on `to` once its worker `from` is gone.
std::vector<std::string> resumed_rooms(fake_link& from, fake_link& to, std::uint64_t id) {
  from.close("killed");
  for (const auto& o : to.opened())
    if (o.conn_id() == id && o.resumed()) return {o.state().rooms().begin(), o.state().rooms().end()};
  ADD_FAILURE() << "conn " << id << " was not resumed";
  return {};
}

TEST_F(failover_test, state_deltas_amend_the_kept_rooms_and_survive_failover) {
  a_->deliver(state_update(on_a_->id(), {"a", "b", "c"}, {}));
  a_->deliver(state_update(on_a_->id(), {"d", "b"}, {"a", "missing"}));  // b already kept: not twice
  EXPECT_EQ(resumed_rooms(*a_, *b_, on_a_->id()), (std::vector<std::string>{"b", "c", "d"}));
}

TEST_F(failover_test, a_full_state_replaces_then_its_deltas_apply) {
  a_->deliver(state_update(on_a_->id(), {"old"}, {}));
  const std::vector<std::string> full{"x", "y"};
  a_->deliver(state_update(on_a_->id(), {"z"}, {"x"}, &full));
  EXPECT_EQ(resumed_rooms(*a_, *b_, on_a_->id()), (std::vector<std::string>{"y", "z"}));
}

TEST_F(failover_test, an_update_with_neither_state_nor_delta_keeps_an_empty_state) {
  a_->deliver(state_update(on_a_->id(), {"a"}, {}));
  a_->deliver(state_update(on_a_->id(), {}, {}));
  EXPECT_TRUE(resumed_rooms(*a_, *b_, on_a_->id()).empty());
}

TEST_F(failover_test, a_delta_for_an_unknown_connection_is_ignored) {
  a_->deliver(state_update(12345, {"a"}, {}));
  EXPECT_TRUE(resumed_rooms(*a_, *b_, on_a_->id()).empty());
}

}  // namespace
}  // namespace fg::gateway
