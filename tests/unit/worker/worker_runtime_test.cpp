// The worker runtime over real Unix sockets, against a scripted gateway
// on the same io_context: Register/Welcome on every link, echo with its
// Ack, batching, rooms through the hub, and every way a link can fail
// (drop, garbage, no Welcome, gateway not there yet) ending in a reconnect.
#include "worker/runtime/worker_runtime.hpp"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/write.hpp>

#include "common/link/link_socket.hpp"
#include "common/logging.hpp"
#include "tests/unit/support/scoped_temp_dir.hpp"
#include "tests/unit/support/unix_socket_probe.hpp"
#include "worker/apps/echo_app.hpp"
#include "worker/apps/rooms_app.hpp"
#include "worker/broker/gateway_hub_broker.hpp"
#include "worker/broker/inbound_check.hpp"

namespace {

namespace asio = boost::asio;
namespace pb = framegate::link;
using proto = asio::local::stream_protocol;
using namespace fg::worker;
using namespace std::chrono_literals;

// One accepted link, as the gateway sees it.
struct gw_conn {
  explicit gw_conn(asio::io_context& io) : socket(io) {}
  proto::socket socket;
  fg::link::decoder decoder;
  std::array<std::uint8_t, 65536> buf{};
  std::vector<pb::Envelope> got;
  std::size_t reads = 0;
  bool eof = false;

  void read() {
    socket.async_read_some(asio::buffer(buf), [this](const boost::system::error_code& ec, std::size_t n) {
      if (ec) {
        eof = true;
        return;
      }
      ++reads;
      decoder.feed(std::span<const std::uint8_t>(buf.data(), n), [this](const pb::Envelope& e) { got.push_back(e); });
      read();
    });
  }
  void write(const std::vector<pb::Envelope>& envs) {
    fg::byte_buffer out;
    for (const auto& e : envs) fg::link::encode(e, out);
    asio::write(socket, asio::buffer(out.data(), out.size()));
  }
  void write_raw(std::string_view bytes) { asio::write(socket, asio::buffer(bytes.data(), bytes.size())); }
  [[nodiscard]] std::size_t count(pb::Envelope::BodyCase c) const {
    return static_cast<std::size_t>(
        std::count_if(got.begin(), got.end(), [c](const pb::Envelope& e) { return e.body_case() == c; }));
  }
};

// Listens on link-0..n-1.sock; keeps every accepted link.
class fake_gateway {
 public:
  fake_gateway(asio::io_context& io, const std::filesystem::path& dir, std::uint32_t threads) : io_(io) {
    for (std::uint32_t i = 0; i < threads; ++i) listen(dir, i);
  }
  void listen(const std::filesystem::path& dir, std::uint32_t i) {
    const std::string path = fg::link::link_socket_path(dir.native(), i);
    std::filesystem::remove(path);
    acceptors_.push_back(std::make_unique<proto::acceptor>(io_, proto::endpoint(path)));
    accepted_.resize(acceptors_.size());
    accept(acceptors_.size() - 1);
  }
  void accept(std::size_t i) {
    auto conn = std::make_shared<gw_conn>(io_);
    acceptors_[i]->async_accept(conn->socket, [this, i, conn](const boost::system::error_code& ec) {
      if (ec) return;
      accepted_[i].push_back(conn);
      conn->read();
      accept(i);
    });
  }
  std::vector<std::shared_ptr<gw_conn>>& accepted(std::size_t i) { return accepted_[i]; }
  gw_conn& last(std::size_t i) { return *accepted_[i].back(); }

  void close() {
    for (auto& a : acceptors_) a->close();
    for (auto& list : accepted_)
      for (auto& c : list) c->socket.close();
  }

 private:
  asio::io_context& io_;
  std::vector<std::unique_ptr<proto::acceptor>> acceptors_;
  std::vector<std::vector<std::shared_ptr<gw_conn>>> accepted_;
};

pb::Envelope welcome(std::uint32_t index, std::uint32_t count) {
  pb::Envelope e;
  e.mutable_welcome()->set_gateway_id("g-test");
  e.mutable_welcome()->set_link_index(index);
  e.mutable_welcome()->set_link_count(count);
  e.mutable_welcome()->set_credit_window(256);
  return e;
}

pb::Envelope opened(std::uint64_t id, const std::string& path) {
  pb::Envelope e;
  e.mutable_opened()->set_conn_id(id);
  e.mutable_opened()->set_path(path);
  return e;
}

pb::Envelope text(std::uint64_t id, const std::string& payload, std::uint64_t seq) {
  pb::Envelope e;
  e.mutable_message()->set_conn_id(id);
  e.mutable_message()->set_payload(payload);
  e.mutable_message()->set_seq(seq);
  return e;
}

class WorkerRuntime : public ::testing::Test {
 protected:
  WorkerRuntime() {
    config_.id = "wt";
    config_.link_dir = dir_.native();
    config_.link.backoff_min = 5ms;
    config_.link.backoff_max = 40ms;
    config_.link.welcome_timeout = 150ms;
    auto rooms = std::make_unique<rooms_app>();
    rooms_ = rooms.get();
    apps_.mount("/echo", std::make_unique<echo_app>());
    apps_.mount("/rooms", std::move(rooms));
  }
  ~WorkerRuntime() override {
    if (runtime_) runtime_->stop();
    if (gateway_) gateway_->close();
    io_.run_for(50ms);
  }

  void start_worker() {
    runtime_ = std::make_unique<worker_runtime>(io_, config_, apps_, fg::component_logger("worker-test"));
    hub_ = std::make_unique<gateway_hub_broker>(
        *runtime_, [this](std::string_view room, std::string_view payload, room_position, deflated_segment) {
          runtime_->core().deliver_room_message(room, payload);
        });
    runtime_->set_broker(*hub_, hub_.get());
    runtime_->start();
  }

  // Runs the loop until `done` holds; false after 5 s.
  bool run_until(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      io_.run_one_for(10ms);
    }
    return true;
  }

  std::uint64_t echo_batch(std::uint64_t messages, const std::function<std::string(std::uint64_t)>& payload);

  // Waits for the Register on link i and answers it.
  void register_link(std::uint32_t i, std::uint32_t count) {
    ASSERT_TRUE(run_until([&] { return !gateway_->accepted(i).empty() && !gateway_->last(i).got.empty(); }));
    gateway_->last(i).write({welcome(i, count)});
    ASSERT_TRUE(run_until([&] { return runtime_->link_at(i) != nullptr && runtime_->link_at(i)->ready(); }));
  }

  asio::io_context io_;
  fg::test::scoped_temp_dir tmp_{"fgw-rt"};
  const std::filesystem::path dir_ = tmp_.path();
  worker_config config_;
  app_registry apps_;
  rooms_app* rooms_ = nullptr;
  std::unique_ptr<fake_gateway> gateway_;
  std::unique_ptr<worker_runtime> runtime_;
  std::unique_ptr<gateway_hub_broker> hub_;
};

TEST_F(WorkerRuntime, RegistersFirstOnEveryLinkSocket) {
  gateway_ = std::make_unique<fake_gateway>(io_, dir_, 3);
  start_worker();
  for (std::uint32_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(run_until([&] { return !gateway_->accepted(i).empty() && !gateway_->last(i).got.empty(); }));
    const auto& first = gateway_->last(i).got.front();
    ASSERT_TRUE(first.has_register_()) << first.DebugString();
    EXPECT_EQ(first.register_().worker_id(), "wt");
    EXPECT_EQ(first.register_().link_index(), i);
    EXPECT_EQ(first.register_().pid(), static_cast<std::uint32_t>(::getpid()));
    EXPECT_EQ(std::vector<std::string>(first.register_().paths().begin(), first.register_().paths().end()),
              (std::vector<std::string>{"/echo", "/rooms"}));
  }
  for (std::uint32_t i = 0; i < 3; ++i) register_link(i, 3);
  EXPECT_EQ(runtime_->ready_links(), 3u);
}

TEST_F(WorkerRuntime, AsksForTheConfiguredSendBufferOnEveryLinkSocket) {
  config_.link.sndbuf = 96 * 1024;  // below any host's net.core.wmem_max: granted whole
  gateway_ = std::make_unique<fake_gateway>(io_, dir_, 2);
  start_worker();
  for (std::uint32_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(run_until([&] { return !gateway_->accepted(i).empty() && !gateway_->last(i).got.empty(); }));
    const auto ours =
        fg::test::find_unix_socket(fg::link::link_socket_path(dir_.native(), i), fg::test::unix_end::connected_to);
    ASSERT_TRUE(ours.has_value()) << "link " << i;
    EXPECT_EQ(fg::test::send_buffer_of(*ours), 2 * config_.link.sndbuf) << "link " << i;  // Linux reports it doubled
  }
}

// Broker deliveries are checked against what every gateway link takes.
TEST_F(WorkerRuntime, TheGatewayLimitForDeliveriesIsTheSmallestTheWelcomesTold) {
  gateway_ = std::make_unique<fake_gateway>(io_, dir_, 3);
  start_worker();
  EXPECT_EQ(runtime_->gateway_max_payload(), 0u) << "nothing told yet";
  const auto answer = [&](std::uint32_t i, std::uint64_t max_message, std::uint32_t max_envelope) {
    ASSERT_TRUE(run_until([&] { return !gateway_->accepted(i).empty() && !gateway_->last(i).got.empty(); }));
    pb::Envelope w = welcome(i, 3);
    w.mutable_welcome()->set_max_message_size(max_message);
    w.mutable_welcome()->set_max_envelope(max_envelope);
    gateway_->last(i).write({w});
    ASSERT_TRUE(run_until([&] { return runtime_->link_at(i) != nullptr && runtime_->link_at(i)->ready(); }));
  };
  answer(0, 0, 0);  // an older gateway: not told
  EXPECT_EQ(runtime_->gateway_max_payload(), 0u);
  answer(1, 1000000, 0);
  EXPECT_EQ(runtime_->gateway_max_payload(), 1000000u);
  answer(2, 2000000, 500000);  // its envelope limit, less the Send framing, is smaller still
  EXPECT_EQ(runtime_->gateway_max_payload(), 500000u - send_envelope_overhead);
}

// Opens 10 /echo connections on a fresh worker's link, writes `messages`
// round-robin to them in one write, and waits for the Ack of the last.
// Returns how many writes the worker answered with.
std::uint64_t WorkerRuntime::echo_batch(std::uint64_t messages,
                                        const std::function<std::string(std::uint64_t)>& payload) {
  gateway_ = std::make_unique<fake_gateway>(io_, dir_, 1);
  start_worker();
  register_link(0, 1);
  auto& gw = gateway_->last(0);
  const auto writes_before = runtime_->link_at(0)->stats().writes;
  std::vector<pb::Envelope> batch;
  for (std::uint64_t id = 1; id <= 10; ++id) batch.push_back(opened(id, "/echo"));
  for (std::uint64_t seq = 1; seq <= messages; ++seq) batch.push_back(text(1 + (seq - 1) % 10, payload(seq), seq));
  gw.write(batch);
  EXPECT_TRUE(
      run_until([&] { return !gw.got.empty() && gw.got.back().has_ack() && gw.got.back().ack().seq() == messages; }));
  return runtime_->link_at(0)->stats().writes - writes_before;
}

TEST_F(WorkerRuntime, EchoesAndAcksABatchInOneWrite) {
  // 100 messages from 10 connections: within one turn's budgets.
  const auto writes = echo_batch(100, [](std::uint64_t seq) { return std::to_string(seq); });
  auto& gw = gateway_->last(0);
  ASSERT_EQ(gw.count(pb::Envelope::kSend), 100u);
  // Each connection's replies in order, all before the one Ack.
  std::map<std::uint64_t, std::uint64_t> last_of;
  for (const auto& e : gw.got) {
    if (!e.has_send()) continue;
    const std::uint64_t seq = std::stoull(e.send().payload());
    EXPECT_GT(seq, last_of[e.send().conn_ids(0)]);
    last_of[e.send().conn_ids(0)] = seq;
  }
  // The batch (~2.5 KB, one write on a Unix socket) arrives in one read:
  // its 100 replies and its Ack leave in one write, not one per envelope
  // (nor a first write for the first reply and a second for the rest).
  EXPECT_EQ(writes, 1u);
  EXPECT_EQ(gw.count(pb::Envelope::kAck), 1u);
}

// A busy gateway thread writes ~100 KiB per turn at 1 KiB messages. Read
// in one piece, the batch is answered in one write, so the gateway gets
// each client's replies in one read and writes them to the client at once.
TEST_F(WorkerRuntime, AnswersABatchLargerThan64KiBInOneWrite) {
  // 10 connections x 12 messages of 1 KiB: 120 KiB, within one turn's budgets.
  const auto writes = echo_batch(120, [](std::uint64_t) { return std::string(1024, 'k'); });
  auto& gw = gateway_->last(0);
  EXPECT_EQ(gw.count(pb::Envelope::kSend), 120u);
  EXPECT_EQ(writes, 1u);
  EXPECT_EQ(runtime_->link_write_waits(), 0u) << "the link's send buffer holds the whole batch";
  EXPECT_EQ(gw.count(pb::Envelope::kAck), 1u);
}

// The same batch through a send buffer far smaller than it: the socket
// takes a part, the rest follows when there is room, in order, and the
// wait is counted (framegate_worker_link_write_waits_total).
TEST_F(WorkerRuntime, CountsAWriteItsLinkSocketDidNotTakeWhole) {
  config_.link.sndbuf = 4096;  // the kernel's floor is about this
  const auto writes = echo_batch(120, [](std::uint64_t seq) { return std::to_string(seq) + std::string(1024, 'k'); });
  auto& gw = gateway_->last(0);
  ASSERT_EQ(gw.count(pb::Envelope::kSend), 120u);
  std::map<std::uint64_t, std::uint64_t> last_of;  // each connection's replies, in order and whole
  for (const auto& e : gw.got) {
    if (!e.has_send()) continue;
    const std::uint64_t seq = std::stoull(e.send().payload());
    EXPECT_EQ(e.send().payload(), std::to_string(seq) + std::string(1024, 'k'));
    EXPECT_GT(seq, last_of[e.send().conn_ids(0)]);
    last_of[e.send().conn_ids(0)] = seq;
  }
  EXPECT_EQ(writes, 1u);
  EXPECT_EQ(runtime_->link_write_waits(), 1u);
}

// At 50k messages/s a read carries a message or two: a handler posted to
// write them, or a write completion, would cost the worker's loop a turn
// (an epoll_wait) each, as much as the hop itself. The replies leave in
// the read's own handler, written whole at once, with no write in flight.
TEST_F(WorkerRuntime, AnswersAReadWithinItsOwnHandler) {
  echo_batch(1, [](std::uint64_t) { return std::string("warm-up"); });
  auto& gw = gateway_->last(0);
  const gateway_link& link = *runtime_->link_at(0);
  const auto read_before = link.stats().bytes_read;
  const auto writes_before = link.stats().writes;
  const auto written_before = link.stats().bytes_written;
  gw.write({text(3, "one", 2), text(4, "two", 3)});
  while (link.stats().bytes_read == read_before) ASSERT_EQ(io_.run_one_for(1s), 1u);
  EXPECT_EQ(link.stats().writes, writes_before + 1);
  EXPECT_GT(link.stats().bytes_written, written_before);
  EXPECT_EQ(link.output_bytes(), 0u);
  ASSERT_TRUE(run_until([&] { return gw.got.back().has_ack() && gw.got.back().ack().seq() == 3; }));
  EXPECT_EQ(gw.count(pb::Envelope::kSend), 3u);
}

// A gateway that stops reading: the socket takes part of a batch, the
// rest goes on asynchronously, reads pause above the high-water mark, and
// once the gateway reads again every reply arrives, in order, with no loss.
TEST_F(WorkerRuntime, OutputTheSocketDoesNotTakeAtOnceFollowsInOrder) {
  config_.link.output_high_water = 256 * 1024;
  echo_batch(1, [](std::uint64_t) { return std::string("warm-up"); });
  auto& gw = gateway_->last(0);
  const gateway_link& link = *runtime_->link_at(0);
  gw.socket.cancel();  // the gateway stops reading
  ASSERT_TRUE(run_until([&] { return gw.eof; }));
  const std::string kib(1024, 'p');
  std::uint64_t seq = 1;
  // Until the worker stops reading (or 4 MiB): each piece is read before the next.
  while (link.output_bytes() <= config_.link.output_high_water && seq < 4000) {
    std::vector<pb::Envelope> piece;
    for (int k = 0; k < 50; ++k, ++seq) piece.push_back(text(1 + seq % 10, std::to_string(seq) + kib, seq + 1));
    const auto read_before = link.stats().bytes_read;
    gw.write(piece);
    ASSERT_TRUE(run_until([&] { return link.stats().bytes_read > read_before; }));
    io_.poll();
  }
  ASSERT_GT(link.output_bytes(), config_.link.output_high_water);
  const auto last = seq;  // the seq of the last message written, plus one
  gw.eof = false;
  gw.read();
  ASSERT_TRUE(
      run_until([&] { return !gw.got.empty() && gw.got.back().has_ack() && gw.got.back().ack().seq() == last; }));
  std::map<std::uint64_t, std::uint64_t> last_of;
  std::uint64_t replies = 0;
  for (const auto& e : gw.got) {
    if (!e.has_send() || e.send().payload() == "warm-up") continue;
    ++replies;
    const std::uint64_t n = std::stoull(e.send().payload());
    EXPECT_GT(n, last_of[e.send().conn_ids(0)]);
    last_of[e.send().conn_ids(0)] = n;
  }
  EXPECT_EQ(replies, last - 1);
  EXPECT_EQ(link.output_bytes(), 0u);
}

TEST_F(WorkerRuntime, ABurstOfOneConnectionIsServedOverLaterTurnsWithAcksInOrder) {
  gateway_ = std::make_unique<fake_gateway>(io_, dir_, 1);
  start_worker();
  register_link(0, 1);
  auto& gw = gateway_->last(0);

  std::vector<pb::Envelope> batch{opened(1, "/echo")};
  for (std::uint64_t seq = 1; seq <= 100; ++seq) batch.push_back(text(1, "m" + std::to_string(seq), seq));
  gw.write(batch);
  ASSERT_TRUE(
      run_until([&] { return !gw.got.empty() && gw.got.back().has_ack() && gw.got.back().ack().seq() == 100; }));
  ASSERT_EQ(gw.count(pb::Envelope::kSend), 100u);
  // Sends in order, each before the Ack that covers it; several turns,
  // so several Acks.
  std::uint64_t next = 1, acked = 0;
  for (const auto& e : gw.got) {
    if (e.has_send()) {
      EXPECT_EQ(e.send().payload(), "m" + std::to_string(next));
      ++next;
    } else if (e.has_ack()) {
      EXPECT_EQ(e.ack().seq(), next - 1) << "the Ack covers exactly the replies before it";
      EXPECT_GT(e.ack().seq(), acked);
      acked = e.ack().seq();
    }
  }
  EXPECT_GT(gw.count(pb::Envelope::kAck), 1u);
}

TEST_F(WorkerRuntime, AnswersPings) {
  gateway_ = std::make_unique<fake_gateway>(io_, dir_, 1);
  start_worker();
  register_link(0, 1);
  pb::Envelope ping;
  ping.mutable_ping()->set_nonce(31337);
  gateway_->last(0).write({ping});
  ASSERT_TRUE(run_until([&] { return gateway_->last(0).count(pb::Envelope::kPong) == 1; }));
  EXPECT_EQ(gateway_->last(0).got.back().pong().nonce(), 31337u);
}

TEST_F(WorkerRuntime, RoomsGoThroughTheHubOnLinkZero) {
  gateway_ = std::make_unique<fake_gateway>(io_, dir_, 2);
  start_worker();
  register_link(0, 2);
  register_link(1, 2);
  auto& l0 = gateway_->last(0);
  auto& l1 = gateway_->last(1);

  l1.write({opened(7, "/rooms"), text(7, R"({"op":"join","room":"r"})", 1),
            text(7, R"({"op":"publish","room":"r","data": [1, 2.50] })", 2)});
  ASSERT_TRUE(
      run_until([&] { return l0.count(pb::Envelope::kBrokerPublish) == 2 && l1.count(pb::Envelope::kAck) >= 1; }));
  // Subscribe before publish, both on link 0; the state update on the connection's link.
  // The join's presence event goes to its own room (nobody listens).
  std::vector<pb::Envelope::BodyCase> on0;
  for (const auto& e : l0.got) on0.push_back(e.body_case());
  EXPECT_EQ(on0, (std::vector<pb::Envelope::BodyCase>{pb::Envelope::kRegister, pb::Envelope::kBrokerSubscribe,
                                                      pb::Envelope::kBrokerPublish, pb::Envelope::kBrokerPublish}));
  EXPECT_EQ(l0.got[1].broker_subscribe().subscribe(0), "r");
  EXPECT_EQ(l0.got[2].broker_publish().room(), "\x1fpresence:r");
  EXPECT_EQ(l0.got[2].broker_publish().payload(), R"({"room":"r","presence_event":"join","user":""})");
  l0.got.erase(l0.got.begin() + 2);
  EXPECT_EQ(l1.count(pb::Envelope::kState), 1u);
  EXPECT_EQ(l1.count(pb::Envelope::kBrokerSubscribe), 0u);

  // The hub relays it back: one Send to the member, on the member's link.
  pb::Envelope deliver;
  deliver.mutable_broker_deliver()->set_room("r");
  deliver.mutable_broker_deliver()->set_payload(l0.got[2].broker_publish().payload());
  l0.write({deliver});
  ASSERT_TRUE(run_until([&] { return l1.count(pb::Envelope::kSend) == 1; }));
  EXPECT_EQ(l1.got.back().send().payload(), R"({"room":"r","data":[1, 2.50]})");
  EXPECT_EQ(l1.got.back().send().conn_ids(0), 7u);
}

TEST_F(WorkerRuntime, ReconnectsAfterTheGatewayDropsTheLinkAndResubscribes) {
  gateway_ = std::make_unique<fake_gateway>(io_, dir_, 1);
  start_worker();
  register_link(0, 1);
  gateway_->last(0).write({opened(1, "/rooms"), text(1, R"({"op":"join","room":"x"})", 1)});
  ASSERT_TRUE(run_until([&] { return gateway_->last(0).count(pb::Envelope::kBrokerSubscribe) == 1; }));
  EXPECT_EQ(rooms_->local_members("x"), 1u);

  gateway_->last(0).socket.close();
  ASSERT_TRUE(run_until([&] { return gateway_->accepted(0).size() == 2 && !gateway_->last(0).got.empty(); }));
  EXPECT_TRUE(gateway_->last(0).got.front().has_register_());
  // The connections of the lost link are gone, and with them the room.
  EXPECT_EQ(rooms_->local_members("x"), 0u);
  EXPECT_EQ(runtime_->core().connection_count(), 0u);

  // A member on the new link: its room is subscribed on the new link 0.
  gateway_->last(0).write({welcome(0, 1), opened(2, "/rooms"), text(2, R"({"op":"join","room":"y"})", 1)});
  ASSERT_TRUE(run_until([&] { return gateway_->last(0).count(pb::Envelope::kBrokerSubscribe) == 1; }));
}

TEST_F(WorkerRuntime, ResubscribesWantedRoomsWhenLinkZeroComesBack) {
  gateway_ = std::make_unique<fake_gateway>(io_, dir_, 2);
  start_worker();
  register_link(0, 2);
  register_link(1, 2);
  // A member on link 1 keeps room "z" wanted while link 0 flaps.
  gateway_->last(1).write({opened(3, "/rooms"), text(3, R"({"op":"join","room":"z"})", 1)});
  ASSERT_TRUE(run_until([&] { return gateway_->last(0).count(pb::Envelope::kBrokerSubscribe) == 1; }));
  gateway_->last(0).socket.close();
  ASSERT_TRUE(run_until([&] { return gateway_->accepted(0).size() == 2 && !gateway_->last(0).got.empty(); }));
  gateway_->last(0).write({welcome(0, 2)});
  ASSERT_TRUE(run_until([&] { return gateway_->last(0).count(pb::Envelope::kBrokerSubscribe) == 1; }));
  const auto& sub = *std::find_if(gateway_->last(0).got.begin(), gateway_->last(0).got.end(),
                                  [](const pb::Envelope& e) { return e.has_broker_subscribe(); });
  ASSERT_EQ(sub.broker_subscribe().subscribe_size(), 1);
  EXPECT_EQ(sub.broker_subscribe().subscribe(0), "z");
}

TEST_F(WorkerRuntime, ADecodeErrorClosesTheLinkAndReconnects) {
  gateway_ = std::make_unique<fake_gateway>(io_, dir_, 1);
  start_worker();
  register_link(0, 1);
  gateway_->last(0).write_raw("HTTP/1.1 200 OK\r\n\r\n");  // not a framegate link
  ASSERT_TRUE(run_until([&] { return gateway_->accepted(0).front()->eof; }));
  ASSERT_TRUE(run_until([&] { return gateway_->accepted(0).size() == 2 && !gateway_->last(0).got.empty(); }));
  EXPECT_TRUE(gateway_->last(0).got.front().has_register_());
}

TEST_F(WorkerRuntime, NoWelcomeMeansReconnect) {
  gateway_ = std::make_unique<fake_gateway>(io_, dir_, 1);
  start_worker();
  // Never answer: after the welcome timeout the worker tries again.
  ASSERT_TRUE(run_until([&] { return gateway_->accepted(0).size() >= 2 && !gateway_->last(0).got.empty(); }));
  EXPECT_TRUE(gateway_->accepted(0).front()->eof);
  EXPECT_FALSE(runtime_->link_at(0)->ready());
}

TEST_F(WorkerRuntime, SomethingOtherThanWelcomeFirstIsAProtocolError) {
  gateway_ = std::make_unique<fake_gateway>(io_, dir_, 1);
  start_worker();
  ASSERT_TRUE(run_until([&] { return !gateway_->accepted(0).empty() && !gateway_->last(0).got.empty(); }));
  gateway_->last(0).write({opened(1, "/echo")});
  ASSERT_TRUE(run_until([&] { return gateway_->accepted(0).size() == 2; }));
  EXPECT_EQ(runtime_->core().connection_count(), 0u);
}

TEST_F(WorkerRuntime, WaitsForAGatewayThatIsNotThereYet) {
  start_worker();
  io_.run_for(100ms);
  EXPECT_EQ(runtime_->link_count(), 0u);
  gateway_ = std::make_unique<fake_gateway>(io_, dir_, 2);
  ASSERT_TRUE(run_until([&] { return runtime_->link_count() == 2; }));
  register_link(0, 2);
  register_link(1, 2);
}

}  // namespace
