// send_batch against real sockets, with a ring and without one: every
// write's answer is what send() would give (all taken, part taken, a full
// socket, a closed peer), each to its own socket, in one system call with
// a ring; and a ring the kernel stops taking is dropped for send().
#include "gateway/net/send_batch.hpp"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/gateway/net/poll_fixtures.hpp"

namespace fg::gateway {
namespace {

using poll_fixtures::socket_pair;
using status = write_result::status;

std::span<const std::uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// Everything the far end has to read now.
std::string drain(int fd) {
  std::string got;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n <= 0) return got;
    got.append(buf, static_cast<std::size_t>(n));
  }
}

// Fills `fd`'s send buffer until the socket takes no more.
void fill(int fd) {
  const std::string chunk(65536, 'f');
  while (::send(fd, chunk.data(), chunk.size(), MSG_DONTWAIT | MSG_NOSIGNAL) > 0) {
  }
}

// `n` socket pairs and a message for each ("<what> i"), added to a batch
// in order, each far end to receive its message once and whole.
struct writes {
  std::vector<std::unique_ptr<socket_pair>> pairs;
  std::vector<std::string> messages;
  writes(int n, const std::string& what) {
    for (int i = 0; i < n; ++i) {
      pairs.push_back(std::make_unique<socket_pair>());
      messages.push_back(what + " " + std::to_string(i));
    }
  }
  [[nodiscard]] std::size_t size() const noexcept { return pairs.size(); }
  void add_to(send_batch& batch) const {
    for (std::size_t i = 0; i < size(); ++i) batch.add(pairs[i]->ours, bytes_of(messages[i]));
  }
  void expect_each_received_once() const {
    for (std::size_t i = 0; i < size(); ++i) EXPECT_EQ(drain(pairs[i]->theirs), messages[i]) << i;
  }
};

class SendBatch : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam() && !send_batch::probe().empty()) GTEST_SKIP() << send_batch::probe();
    batch = std::make_unique<send_batch>(GetParam());
    ASSERT_EQ(batch->uses_ring(), GetParam()) << batch->ring_problem();
  }
  std::unique_ptr<send_batch> batch;
};

TEST_P(SendBatch, EachSocketGetsItsOwnBytesAndEachWriteItsOwnAnswer) {
  std::vector<std::unique_ptr<socket_pair>> pairs;
  std::vector<std::string> messages;
  for (int i = 0; i < 5; ++i) {
    pairs.push_back(std::make_unique<socket_pair>());
    messages.push_back("message " + std::to_string(i) + std::string(static_cast<std::size_t>(i) * 100, 'x'));
  }
  for (std::size_t i = 0; i < pairs.size(); ++i) EXPECT_EQ(batch->add(pairs[i]->ours, bytes_of(messages[i])), i);
  const std::size_t calls = batch->submit();
  EXPECT_EQ(calls, GetParam() ? 1u : 5u) << "a ring's batch is one system call; without one, a send each";
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    EXPECT_EQ(batch->result(i).what, status::written) << i;
    EXPECT_EQ(batch->result(i).bytes, messages[i].size()) << i;
    EXPECT_EQ(drain(pairs[i]->theirs), messages[i]) << i;
  }
}

TEST_P(SendBatch, AFullSocketWouldBlockAndTheOthersAreStillWritten) {
  socket_pair first, full, last;
  fill(full.ours);
  const std::string a = "to the first", b = "to the full one", c = "to the last";
  batch->add(first.ours, bytes_of(a));
  batch->add(full.ours, bytes_of(b));
  batch->add(last.ours, bytes_of(c));
  batch->submit();
  EXPECT_EQ(batch->result(0).what, status::written);
  EXPECT_EQ(batch->result(1).what, status::would_block) << "a full socket must not block the thread, nor wait";
  EXPECT_EQ(batch->result(2).what, status::written);
  EXPECT_EQ(drain(first.theirs), a);
  EXPECT_EQ(drain(last.theirs), c);
}

TEST_P(SendBatch, ASocketTakesPartOfALargeWrite) {
  socket_pair small, other;
  const int sndbuf = 4096;
  ASSERT_EQ(::setsockopt(small.ours, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf), 0);
  const std::string big(4 << 20, 'b'), tiny = "tiny";
  batch->add(small.ours, bytes_of(big));
  batch->add(other.ours, bytes_of(tiny));
  batch->submit();
  ASSERT_EQ(batch->result(0).what, status::written);
  EXPECT_GT(batch->result(0).bytes, 0u);
  EXPECT_LT(batch->result(0).bytes, big.size()) << "the rest waits in the caller's queue";
  EXPECT_EQ(drain(small.theirs).size(), batch->result(0).bytes);
  EXPECT_EQ(batch->result(1).bytes, tiny.size());
}

TEST_P(SendBatch, AClosedPeerFailsItsWriteWithoutSignalAndAloneInTheBatch) {
  socket_pair gone, alive;
  ::close(gone.theirs);
  gone.theirs = -1;
  const std::string a = "to nobody", b = "to someone";
  batch->add(gone.ours, bytes_of(a));
  batch->add(alive.ours, bytes_of(b));
  batch->submit();  // SIGPIPE would end the test binary here
  EXPECT_EQ(batch->result(0).what, status::failed);
  EXPECT_EQ(batch->result(1).what, status::written);
  EXPECT_EQ(drain(alive.theirs), b);
}

TEST_P(SendBatch, ClearedItTakesAWholeNewBatch) {
  socket_pair pair;
  const std::string first = "first batch ", second = "second batch";
  for (std::size_t i = 0; i < send_batch::kCapacity; ++i) batch->add(pair.ours, bytes_of(first));
  EXPECT_TRUE(batch->full());
  batch->submit();
  batch->clear();
  EXPECT_EQ(batch->size(), 0u);
  batch->add(pair.ours, bytes_of(second));
  batch->add(pair.ours, bytes_of(second));
  EXPECT_EQ(batch->submit(), GetParam() ? 1u : 2u);
  std::string expected;
  for (std::size_t i = 0; i < send_batch::kCapacity; ++i) expected += first;
  expected += second + second;
  EXPECT_EQ(drain(pair.theirs), expected) << "one socket's writes in a batch go out in the order added";
}

TEST_P(SendBatch, OneWriteIsOneSend) {
  socket_pair pair;
  const std::string only = "only";
  batch->add(pair.ours, bytes_of(only));
  EXPECT_EQ(batch->submit(), 1u);
  EXPECT_EQ(batch->result(0).bytes, only.size());
  EXPECT_EQ(drain(pair.theirs), only);
}

INSTANTIATE_TEST_SUITE_P(RingAndSends, SendBatch, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? std::string("ring") : std::string("sends");
                         });

TEST(SendBatchProbe, ThisKernelGivesARing) {
  // Debian 12's kernel and Docker 20.10's default seccomp profile both
  // allow io_uring; a machine that does not says why here.
  const std::string problem = send_batch::probe();
  if (!problem.empty()) GTEST_SKIP() << problem;
  EXPECT_TRUE(send_batch(true).uses_ring());
  EXPECT_FALSE(send_batch(false).uses_ring()) << "--io-uring off sets no ring up";
  EXPECT_TRUE(send_batch(false).ring_problem().empty());
}

// Makes the kernel answer EPERM to io_uring_enter on the calling thread
// only (a seccomp filter without TSYNC): what a ring meets when a
// container's profile changes under it, or the kernel refuses a batch.
// Empty on success, else why the filter could not be set.
std::string refuse_io_uring_enter_on_this_thread() {
#if defined(__x86_64__)
  constexpr std::uint32_t arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
  constexpr std::uint32_t arch = AUDIT_ARCH_AARCH64;
#else
  return "no seccomp architecture constant for this build";
#endif
  sock_filter program[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_enter, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog filter{static_cast<unsigned short>(std::size(program)), program};
  // no_new_privs and a filter without TSYNC are this thread's alone.
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return std::string("no_new_privs: ") + std::strerror(errno);
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &filter) != 0)
    return std::string("seccomp: ") + std::strerror(errno);
  return {};
}

TEST(SendBatchRingFailure, ARefusedSubmissionDropsTheRingAndEveryWriteStillGoesOut) {
  if (const std::string problem = send_batch::probe(); !problem.empty()) GTEST_SKIP() << problem;
  const writes w(4, "after the ring");
  std::string skipped;
  // A thread of its own: the filter stays on it, and goes with it.
  std::thread([&] {
    send_batch batch(true);
    ASSERT_TRUE(batch.uses_ring()) << batch.ring_problem();
    if (skipped = refuse_io_uring_enter_on_this_thread(); !skipped.empty()) return;
    w.add_to(batch);
    EXPECT_EQ(batch.submit(), 1u + w.size()) << "the refused submission, then a send each";
    EXPECT_FALSE(batch.uses_ring()) << "a ring that refused a batch is dropped";
    EXPECT_NE(batch.ring_problem().find("not permitted"), std::string::npos) << batch.ring_problem();
    for (std::size_t i = 0; i < w.size(); ++i) {
      EXPECT_EQ(batch.result(i).what, status::written) << i;
      EXPECT_EQ(batch.result(i).bytes, w.messages[i].size()) << i;
    }
    w.expect_each_received_once();
    // The next batch goes by send() from the start.
    batch.clear();
    w.add_to(batch);
    EXPECT_EQ(batch.submit(), w.size());
    w.expect_each_received_once();
  }).join();
  if (!skipped.empty()) GTEST_SKIP() << skipped;
}

TEST(WriteResult, ASendsAnswerBecomesTheQueuesStatus) {
  EXPECT_EQ(to_write_result(10).what, status::written);
  EXPECT_EQ(to_write_result(10).bytes, 10u);
  EXPECT_EQ(to_write_result(-EAGAIN).what, status::would_block);
  EXPECT_EQ(to_write_result(-EINTR).what, status::would_block);
  EXPECT_EQ(to_write_result(-EPIPE).what, status::failed);
  EXPECT_EQ(to_write_result(-ECONNRESET).what, status::failed);
}

TEST(SendBatchRingFailure, APartialSubmissionSendsTheRestOnceAndDropsTheRing) {
  if (const std::string problem = send_batch::probe(); !problem.empty()) GTEST_SKIP() << problem;
  const writes w(5, "a message of a batch the kernel took in part,");
  send_batch batch(true);
  ASSERT_TRUE(batch.uses_ring()) << batch.ring_problem();
  batch.offer_at_most_for_test(2);
  w.add_to(batch);
  EXPECT_EQ(batch.submit(), 1u + 3u) << "the ring's call for the first two, then a send each for the rest";
  EXPECT_FALSE(batch.uses_ring()) << "what a ring did not take it might send later: it is dropped";
  EXPECT_FALSE(batch.ring_problem().empty());
  for (std::size_t i = 0; i < w.size(); ++i) {
    EXPECT_EQ(batch.result(i).what, status::written) << i;
    EXPECT_EQ(batch.result(i).bytes, w.messages[i].size()) << i;
  }
  w.expect_each_received_once();  // by one path or the other
  batch.clear();
  w.add_to(batch);
  EXPECT_EQ(batch.submit(), w.size()) << "a send each from then on";
  w.expect_each_received_once();
}

TEST(SendBatchRingFailure, AWriteTheRingTookButNeverAnsweredFailsRatherThanGoingTwice) {
  if (const std::string problem = send_batch::probe(); !problem.empty()) GTEST_SKIP() << problem;
  const writes w(5, "a message of a batch whose answers stopped,");
  send_batch batch(true);
  ASSERT_TRUE(batch.uses_ring()) << batch.ring_problem();
  batch.answer_at_most_for_test(2);
  w.add_to(batch);
  EXPECT_EQ(batch.submit(), 1u) << "the ring's call only: nothing is sent again";
  EXPECT_FALSE(batch.uses_ring()) << "a ring whose answers stopped is dropped";
  EXPECT_NE(batch.ring_problem().find("Input/output error"), std::string::npos) << batch.ring_problem();
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(batch.result(i).what, status::written) << i;
    EXPECT_EQ(batch.result(i).bytes, w.messages[i].size()) << i;
  }
  for (std::size_t i = 2; i < w.size(); ++i)
    EXPECT_EQ(batch.result(i).what, status::failed) << i << ": taken, unanswered: its connection closes";
  // The kernel sent what it took (MSG_DONTWAIT sends complete at once):
  // each went once, never a second time by send().
  w.expect_each_received_once();
  batch.clear();
  w.add_to(batch);
  EXPECT_EQ(batch.submit(), w.size()) << "a send each from then on";
  w.expect_each_received_once();
}

}  // namespace
}  // namespace fg::gateway
