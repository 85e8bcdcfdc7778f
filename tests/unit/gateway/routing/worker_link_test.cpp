// worker_link over a real Unix socket pair in a real event_loop: what one
// readiness delivers, how a turn's messages are written, and how a link ends.
#include "gateway/routing/worker_link.hpp"

#include <gtest/gtest.h>

#include <sys/socket.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/connect_pair.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/write.hpp>

#include "common/byte_buffer.hpp"
#include "common/link/codec.hpp"
#include "common/link/send_encoder.hpp"

namespace fg::gateway {
namespace {

namespace asio = boost::asio;

// What the route table would see, in order: "send:<conn>", "batch", "lost:<why>".
class recording_events final : public link_events {
 public:
  std::vector<std::string> seen;
  std::size_t sends = 0;
  std::size_t batches = 0;

  void on_link_opened(link_port&) override {}
  void on_link_envelope(link_port&, const framegate::link::Envelope&) override { seen.emplace_back("envelope"); }
  void on_link_send(link_port&, const fg::link::send_view& send) override {
    ++sends;
    send.for_each_recipient([&](std::uint64_t id) { last_conn = id; });
  }
  void on_link_batch_end() override {
    ++batches;
    seen.push_back("batch after " + std::to_string(sends));
  }
  void on_link_lost(link_port&, std::string_view why) override { seen.push_back("lost: " + std::string(why)); }

  std::uint64_t last_conn = 0;
};

class WorkerLink : public ::testing::Test {
 protected:
  void SetUp() override {
    asio::local::connect_pair(worker_side_, gateway_side_);
    // Room for a whole reply batch in the socket before the link reads.
    const int big = 1 << 20;
    ASSERT_EQ(::setsockopt(worker_side_.native_handle(), SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof big), 0);
    link_ = std::make_shared<worker_link>(gateway_side_.release(), loop_, events_, read_buffer_, 1 << 20, counters_);
  }

  // An open link is held by its loop until closed (as the route table's
  // stop() closes them): close it, and let the turn's end release it.
  void TearDown() override {
    link_->close("test over");
    loop_.run_one_turn(0);
  }

  // Turns of the loop until `done` (bounded: 5 s).
  template <typename Done>
  void run_until(Done done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!done() && std::chrono::steady_clock::now() < deadline) loop_.run_one_turn(50);
  }

  // Writes `n` Sends of `size` bytes each to conns 1..n, as one worker write.
  void worker_writes(std::size_t n, std::size_t size) {
    byte_buffer out;
    const std::string payload(size, 'x');
    for (std::uint64_t id = 1; id <= n; ++id) {
      const std::array<std::uint64_t, 1> to{id};
      link::encode_send(out, to, false, {reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size()});
    }
    asio::write(worker_side_, asio::buffer(out.data(), out.size()));
  }

  asio::io_context io_;
  event_loop loop_{io_};
  asio::local::stream_protocol::socket worker_side_{io_};
  asio::local::stream_protocol::socket gateway_side_{io_};
  recording_events events_;
  std::array<std::uint8_t, 64 * 1024> read_buffer_{};
  routing_counters counters_;
  std::shared_ptr<worker_link> link_;
};

TEST_F(WorkerLink, TakesAReplyLargerThanItsBufferInOneBatch) {
  // 150 KiB of replies: three reads of the 64 KiB buffer. The route table
  // flushes clients at each batch end; one batch means each client gets
  // its replies in one TCP write instead of one per piece.
  worker_writes(150, 1024);
  link_->start();
  loop_.run_one_turn(1000);  // the readiness
  EXPECT_EQ(events_.sends, 150u);
  EXPECT_EQ(events_.last_conn, 150u);
  EXPECT_EQ(events_.seen, std::vector<std::string>({"batch after 150"}));
}

TEST_F(WorkerLink, TakesWhatItsReadBudgetLeftOnTheNextTurnWithoutANewEdge) {
  // 600 KiB: more than a turn's eight reads of 64 KiB. The socket is
  // edge-triggered, so the rest raises no new edge: the link must come back
  // for it by itself, or it would wait for the worker's next write.
  worker_writes(600, 1024);
  link_->start();
  loop_.run_one_turn(1000);
  ASSERT_GT(events_.sends, 0u);
  ASSERT_LT(events_.sends, 600u) << "one turn took everything: the budget is not what this test assumes";
  loop_.run_one_turn(1000);
  EXPECT_EQ(events_.sends, 600u);
  EXPECT_EQ(events_.batches, 2u);
  EXPECT_FALSE(link_->closed());
}

TEST_F(WorkerLink, EndsTheBatchBeforeReportingAClosedWorker) {
  worker_writes(80, 1024);
  worker_side_.close();
  link_->start();
  run_until([&] { return link_->closed(); });
  EXPECT_EQ(events_.sends, 80u);
  EXPECT_EQ(events_.seen, std::vector<std::string>({"batch after 80", "lost: worker disconnected"}));
  EXPECT_TRUE(link_->closed());
}

TEST_F(WorkerLink, ClosesOnBytesThatAreNoEnvelope) {
  worker_writes(3, 16);
  const std::array<std::uint8_t, 8> garbage{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  asio::write(worker_side_, asio::buffer(garbage));
  link_->start();
  loop_.run_one_turn(1000);
  EXPECT_TRUE(link_->closed());
  ASSERT_EQ(events_.seen.size(), 2u);
  EXPECT_EQ(events_.seen[0], "batch after 3");
  EXPECT_EQ(events_.seen[1].rfind("lost: ", 0), 0u) << events_.seen[1];
}

// Turn-end work of the default order, as the thread's client writes are.
struct turn_end_probe final : turn_end_task {
  explicit turn_end_probe(std::function<void()> f) : fn(std::move(f)) {}
  void on_turn_end() override { fn(); }
  std::function<void()> fn;
};

// Reads what the worker side has, decoding Message envelopes' payloads.
std::vector<std::string> worker_reads(asio::local::stream_protocol::socket& s, std::size_t messages) {
  std::vector<std::string> got;
  link::decoder decoder(1 << 20);
  std::array<std::uint8_t, 64 * 1024> buf{};
  while (got.size() < messages) {
    const std::size_t n = s.read_some(asio::buffer(buf));
    decoder.feed(std::span<const std::uint8_t>(buf.data(), n),
                 [&](const framegate::link::Envelope& e) { got.push_back(e.message().payload()); });
  }
  return got;
}

TEST_F(WorkerLink, WritesATurnsMessagesWhenTheTurnEnds) {
  // One write for the turn, at its end: nothing leaves before, and nothing
  // (no completion, no second turn) follows a write the socket took whole.
  link_->start();
  const std::string payload = "hello";
  const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size());
  link_->send_message(7, false, bytes, 1);
  link_->send_message(8, false, bytes, 2);
  EXPECT_GT(link_->pending_bytes(), 0u);
  loop_.run_one_turn(0);
  EXPECT_EQ(link_->pending_bytes(), 0u);
  EXPECT_EQ(counters_.envelopes_per_write.count(), 1u) << "both messages in one write";
  EXPECT_EQ(counters_.link_write_waits, 0u);
  EXPECT_EQ(worker_reads(worker_side_, 2), std::vector<std::string>({"hello", "hello"}));
}

TEST_F(WorkerLink, WritesBeforeTheClientWritesQueuedEarlierInTheTurn) {
  // A turn that read worker replies queues its client writes for the turn's
  // end before a client's message reaches the link. The worker must get the
  // message first, to work while the thread writes to clients (a fan-out's
  // writes take milliseconds).
  link_->start();
  std::size_t readable_when_clients_written = 0;
  loop_.at_turn_end(std::make_shared<turn_end_probe>([&] {
    std::array<std::uint8_t, 256> buf{};
    const auto n = ::recv(worker_side_.native_handle(), buf.data(), buf.size(), MSG_PEEK | MSG_DONTWAIT);
    readable_when_clients_written = n > 0 ? static_cast<std::size_t>(n) : 0;
  }));
  const std::string payload = "publish";
  link_->send_message(7, false, {reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size()}, 1);
  loop_.run_one_turn(0);
  EXPECT_GT(readable_when_clients_written, 0u) << "the client writes ran before the link's";
  EXPECT_EQ(worker_reads(worker_side_, 1), std::vector<std::string>({"publish"}));
}

TEST_F(WorkerLink, WhatTheSocketDoesNotTakeFollowsInOrder) {
  const int small = 4096;
  ASSERT_EQ(::setsockopt(worker_side_.native_handle(), SOL_SOCKET, SO_RCVBUFFORCE, &small, sizeof small), 0);
  link_->start();
  std::vector<std::string> sent;
  for (std::uint64_t seq = 1; seq <= 400; ++seq) {
    sent.push_back(std::to_string(seq) + std::string(1000, 'm'));
    link_->send_message(seq, true, {reinterpret_cast<const std::uint8_t*>(sent.back().data()), sent.back().size()},
                        seq);
  }
  loop_.run_one_turn(0);  // the flush: the socket takes part, the rest waits for room
  ASSERT_GT(link_->pending_bytes(), 0u);
  EXPECT_EQ(counters_.link_write_waits, 1u);
  std::vector<std::string> got;
  std::thread reader([&] { got = worker_reads(worker_side_, sent.size()); });
  run_until([&] { return link_->pending_bytes() == 0; });  // the writable edges write the rest
  reader.join();
  EXPECT_EQ(got, sent);
  EXPECT_EQ(counters_.link_write_waits, 1u) << "one write waited, however many edges it took";
  EXPECT_EQ(link_->pending_bytes(), 0u);
  EXPECT_FALSE(link_->closed());
}

TEST_F(WorkerLink, AClosedLinkHoldsOnlyItsLastMessage) {
  // The route table keeps each message's block for replay, so a message
  // sent to a closed link still lands somewhere readable; but nothing is
  // ever written, and the link must not keep the bytes that piled up.
  link_->start();
  const std::string unsent(1000, 'u');
  link_->send_message(1, true, {reinterpret_cast<const std::uint8_t*>(unsent.data()), unsent.size()}, 1);
  link_->close("worker gone");
  EXPECT_EQ(link_->pending_bytes(), 0u) << "a closed link drops what it had queued";
  std::vector<std::string> sent;
  std::shared_ptr<byte_buffer> last_block;
  std::size_t last_offset = 0;
  for (std::uint64_t seq = 2; seq <= 200; ++seq) {
    sent.push_back(std::to_string(seq) + std::string(1000, 'c'));
    const stored_payload at = link_->send_message(
        seq, true, {reinterpret_cast<const std::uint8_t*>(sent.back().data()), sent.back().size()}, seq);
    last_block = at.block;
    last_offset = at.offset;
    EXPECT_LT(link_->pending_bytes(), 2 * sent.back().size()) << "after " << seq << " sends";
  }
  ASSERT_NE(last_block, nullptr);
  const std::string kept(reinterpret_cast<const char*>(last_block->data()) + last_offset, sent.back().size());
  EXPECT_EQ(kept, sent.back()) << "the last message's payload is where the link said";
}

}  // namespace
}  // namespace fg::gateway
