#include "gateway/net/send_queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>

#include "common/buffer_pool.hpp"

namespace {

using fg::buffer_pool;
using fg::byte_buffer;
using fg::gateway::send_queue;
using fg::gateway::write_result;
using next = send_queue::next;
using status = write_result::status;

std::span<const std::uint8_t> as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// A socket that takes what each step of its script allows: up to `bytes`,
// would_block or failed. With the script used up it takes everything.
struct scripted_socket {
  std::deque<write_result> script;
  std::string received;
  int calls = 0;

  write_result operator()(std::span<const std::uint8_t> bytes) {
    ++calls;
    write_result step{status::written, bytes.size()};
    if (!script.empty()) {
      step = script.front();
      script.pop_front();
    }
    if (step.what != status::written) return {step.what, 0};
    step.bytes = std::min(step.bytes, bytes.size());
    received.append(reinterpret_cast<const char*>(bytes.data()), step.bytes);
    return step;
  }

  void then_take(std::size_t n) { script.push_back({status::written, n}); }
  void then_block() { script.push_back({status::would_block, 0}); }
  void then_fail() { script.push_back({status::failed, 0}); }
};

// A pool holding `n` buffers, so borrowing shows as a drop in pooled().
buffer_pool pool_of(std::size_t n) {
  buffer_pool pool;
  for (std::size_t i = 0; i < n; ++i) pool.release(byte_buffer(64));
  return pool;
}

class send_queue_test : public ::testing::Test {
 protected:
  next flush(std::string_view bytes) { return q.flush(as_bytes(bytes), pool, sock); }
  // Defers `bytes` from a cork, as io_thread does when the cork moves on.
  bool defer(std::string_view bytes) {
    cork.clear();
    cork.append(as_bytes(bytes));
    return q.defer(cork, pool);
  }
  next flush_deferred() { return q.flush_deferred(pool, sock); }
  next writable() { return q.on_writable(pool, sock); }
  // Queues `bytes` behind a socket that takes none of them.
  void queue_blocked(std::string_view bytes) {
    sock.then_block();
    ASSERT_EQ(flush(bytes), next::wait_writable);
  }

  send_queue q;
  buffer_pool pool;
  scripted_socket sock;
  byte_buffer cork;
};

TEST_F(send_queue_test, a_write_that_takes_everything_queues_nothing) {
  pool = pool_of(1);
  EXPECT_EQ(flush("hello"), next::drained);
  EXPECT_EQ(sock.received, "hello");
  EXPECT_EQ(q.queued_bytes(), 0u);
  EXPECT_FALSE(q.write_pending());
  EXPECT_EQ(pool.pooled(), 1u) << "no buffer borrowed";
}

TEST_F(send_queue_test, a_partial_write_queues_the_rest_and_arms_one_write) {
  sock.then_take(3);
  EXPECT_EQ(flush("abcdefgh"), next::wait_writable);
  EXPECT_EQ(sock.received, "abc");
  EXPECT_EQ(q.queued_bytes(), 5u);
  EXPECT_TRUE(q.write_armed());

  // While the write is armed, later bytes queue behind without a syscall.
  EXPECT_EQ(flush("ij"), next::nothing);
  EXPECT_EQ(sock.calls, 1);
  EXPECT_EQ(q.queued_bytes(), 7u);

  EXPECT_EQ(writable(), next::drained);
  EXPECT_EQ(sock.received, "abcdefghij");
  EXPECT_EQ(q.queued_bytes(), 0u);
  EXPECT_FALSE(q.write_armed());
}

TEST_F(send_queue_test, would_block_queues_everything) {
  queue_blocked("abc");
  EXPECT_EQ(q.queued_bytes(), 3u);

  sock.then_block();  // a spurious wake-up: wait again
  EXPECT_EQ(writable(), next::wait_writable);
  EXPECT_EQ(q.queued_bytes(), 3u);
  EXPECT_TRUE(q.write_armed());

  EXPECT_EQ(writable(), next::drained);
  EXPECT_EQ(sock.received, "abc");
}

TEST_F(send_queue_test, a_failed_write_is_reported) {
  sock.then_fail();
  EXPECT_EQ(flush("abc"), next::failed);
}

TEST_F(send_queue_test, a_failed_write_of_the_backlog_is_reported) {
  queue_blocked("abc");
  sock.then_fail();
  EXPECT_EQ(writable(), next::failed);
}

TEST_F(send_queue_test, partial_writes_of_the_backlog_keep_the_order) {
  // 40 of 100 bytes leaves the head before the middle (no compaction), 30
  // more passes it (compaction); the bytes must come out whole either way.
  std::string message;
  for (int i = 0; i < 100; ++i) message += static_cast<char>('A' + i % 26);
  queue_blocked(message);
  sock.then_take(40);
  ASSERT_EQ(writable(), next::wait_writable);
  EXPECT_EQ(q.queued_bytes(), 60u);
  sock.then_take(30);
  ASSERT_EQ(writable(), next::wait_writable);
  EXPECT_EQ(q.queued_bytes(), 30u);
  // More bytes after a compaction go behind the ones left.
  ASSERT_EQ(flush("tail"), next::nothing);
  sock.then_take(7);
  ASSERT_EQ(writable(), next::wait_writable);
  EXPECT_EQ(writable(), next::drained);
  EXPECT_EQ(sock.received, message + "tail");
}

TEST_F(send_queue_test, deferred_bytes_are_written_once_at_the_end_of_the_turn_in_order) {
  EXPECT_TRUE(defer("one,")) << "the first deferral schedules the flush";
  EXPECT_FALSE(defer("two,")) << "already scheduled";
  EXPECT_EQ(flush("three"), next::nothing) << "goes behind the deferred bytes";
  EXPECT_EQ(sock.calls, 0);
  EXPECT_TRUE(q.write_pending());
  EXPECT_EQ(q.queued_bytes(), 13u);

  EXPECT_EQ(flush_deferred(), next::drained);
  EXPECT_EQ(sock.calls, 1) << "one syscall for the whole turn";
  EXPECT_EQ(sock.received, "one,two,three");
  EXPECT_FALSE(q.write_pending());
  EXPECT_EQ(flush_deferred(), next::nothing) << "a second call has nothing to do";
  EXPECT_EQ(sock.calls, 1);
}

TEST_F(send_queue_test, a_deferred_flush_that_blocks_arms_a_write) {
  ASSERT_TRUE(defer("abcdef"));
  sock.then_take(2);
  EXPECT_EQ(flush_deferred(), next::wait_writable);
  EXPECT_TRUE(q.write_armed());
  EXPECT_EQ(writable(), next::drained);
  EXPECT_EQ(sock.received, "abcdef");
}

TEST_F(send_queue_test, deferring_behind_an_armed_write_leaves_it_to_that_write) {
  queue_blocked("ab");
  EXPECT_FALSE(defer("cd")) << "no end-of-turn flush while a write is armed";
  EXPECT_EQ(flush_deferred(), next::nothing);
  EXPECT_EQ(sock.calls, 1);
  EXPECT_EQ(writable(), next::drained);
  EXPECT_EQ(sock.received, "abcd");
}

TEST_F(send_queue_test, a_write_armed_during_a_deferred_turn_takes_the_bytes) {
  // Deferred first, then the flush at the end of the turn blocks: a later
  // deferral must not schedule another flush while the write is armed.
  ASSERT_TRUE(defer("ab"));
  sock.then_block();
  ASSERT_EQ(flush_deferred(), next::wait_writable);
  EXPECT_FALSE(defer("cd"));
  EXPECT_EQ(writable(), next::drained);
  EXPECT_EQ(sock.received, "abcd");
}

TEST_F(send_queue_test, a_large_cork_is_taken_whole_and_replaced_by_a_pooled_buffer) {
  const std::string big(send_queue::take_whole_bytes, 'b');
  pool = pool_of(1);
  ASSERT_TRUE(defer(big));
  const std::uint8_t* const taken = cork.data();
  ASSERT_TRUE(defer(big) == false);  // behind the first: copied
  EXPECT_NE(cork.data(), taken) << "the cork got another buffer";
  EXPECT_EQ(pool.pooled(), 0u) << "the pooled one";
  EXPECT_EQ(q.queued_bytes(), 2 * big.size());
  EXPECT_EQ(flush_deferred(), next::drained);
  EXPECT_EQ(sock.calls, 1);
  EXPECT_EQ(sock.received, big + big);
}

TEST_F(send_queue_test, a_small_cork_is_copied_and_stays_with_the_thread) {
  ASSERT_TRUE(defer("small"));
  const std::uint8_t* const kept = cork.data();
  ASSERT_FALSE(defer("er"));
  EXPECT_EQ(cork.data(), kept) << "a broadcast's recipients do not each take a cork-sized buffer";
  EXPECT_EQ(flush_deferred(), next::drained);
  EXPECT_EQ(sock.received, "smaller");
}

TEST_F(send_queue_test, an_empty_queue_always_takes_one_frame) {
  EXPECT_TRUE(q.has_room(1000, 0, 10)) << "a frame over the limit still goes out alone";
  EXPECT_FALSE(q.has_room(1000, 1, 10)) << "but not behind a corked byte";
}

TEST_F(send_queue_test, the_limit_counts_the_backlog_and_the_cork) {
  queue_blocked("0123456789");
  ASSERT_EQ(q.queued_bytes(), 10u);
  EXPECT_TRUE(q.has_room(5, 5, 20)) << "exactly at the limit";
  EXPECT_FALSE(q.has_room(6, 5, 20));
  EXPECT_FALSE(q.has_room(11, 0, 20));
  EXPECT_TRUE(q.has_room(10, 0, 20));
}

TEST_F(send_queue_test, the_backlog_borrows_a_pooled_buffer_and_gives_it_back_when_drained) {
  pool = pool_of(2);
  sock.then_take(1);
  ASSERT_EQ(flush("abc"), next::wait_writable);
  EXPECT_EQ(pool.pooled(), 1u) << "borrowed";
  sock.then_take(1);
  ASSERT_EQ(writable(), next::wait_writable);
  EXPECT_EQ(pool.pooled(), 1u) << "kept while bytes remain";
  ASSERT_EQ(writable(), next::drained);
  EXPECT_EQ(pool.pooled(), 2u) << "given back once drained";
}

TEST_F(send_queue_test, without_a_pooled_buffer_the_backlog_allocates_and_is_pooled_when_drained) {
  queue_blocked("abc");
  EXPECT_EQ(pool.pooled(), 0u);
  ASSERT_EQ(writable(), next::drained);
  EXPECT_EQ(pool.pooled(), 1u);
}

TEST_F(send_queue_test, release_gives_back_a_backlog_still_holding_bytes) {
  pool = pool_of(1);
  queue_blocked("abc");
  ASSERT_EQ(pool.pooled(), 0u);
  q.release(pool);
  EXPECT_EQ(pool.pooled(), 1u);
  EXPECT_EQ(q.queued_bytes(), 0u);
}

}  // namespace
