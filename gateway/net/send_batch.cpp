#include "gateway/net/send_batch.hpp"

#include <liburing.h>

#include <algorithm>
#include <string>
#include <system_error>

namespace fg::gateway {

struct send_batch::ring {
  io_uring uring{};
  bool set_up = false;
  ring() = default;
  ring(const ring&) = delete;
  ring& operator=(const ring&) = delete;
  ~ring() {
    if (set_up) io_uring_queue_exit(&uring);
  }
};

namespace {

// Sets up `r`; 0 or minus the errno. SUBMIT_ALL (Linux 5.18) keeps a
// batch whole even if one of its sends is refused at submission; older
// kernels answer EINVAL to the flag and get a ring without it.
int setup(io_uring& r) {
  int rc = io_uring_queue_init(send_batch::kCapacity, &r, IORING_SETUP_SUBMIT_ALL);
  if (rc == -EINVAL) rc = io_uring_queue_init(send_batch::kCapacity, &r, 0);
  return rc;
}

// system_category's message, not strerror: this may run on any I/O thread
// at once (a ring dropped mid-batch), and strerror's buffer is shared.
std::string ring_error(int error) { return "io_uring unavailable: " + std::system_category().message(error); }

}  // namespace

send_batch::send_batch(bool use_ring) {
  if (!use_ring) return;
  auto r = std::make_unique<ring>();
  if (const int rc = setup(r->uring); rc < 0) {
    problem_ = ring_error(-rc);
    return;
  }
  r->set_up = true;
  ring_ = std::move(r);
}

send_batch::~send_batch() = default;

std::string send_batch::probe() {
  io_uring r{};
  if (const int rc = setup(r); rc < 0) return ring_error(-rc);
  io_uring_queue_exit(&r);
  return {};
}

std::size_t send_batch::add(int fd, std::span<const std::uint8_t> bytes) noexcept {
  entries_[count_] = {fd, bytes};
  return count_++;
}

std::size_t send_batch::send_each() noexcept {
  for (std::size_t i = 0; i < count_; ++i) results_[i] = send_now(entries_[i].fd, entries_[i].bytes);
  return count_;
}

void send_batch::drop_ring(int error) noexcept {
  ring_.reset();
  problem_ = ring_error(error);
}

std::size_t send_batch::submit() noexcept {
  // One write gains nothing from a ring (it costs a little more there).
  if (count_ <= 1 || !ring_) return send_each();
  io_uring& r = ring_->uring;
  const std::size_t offered = std::min(count_, offer_limit_);
  for (std::size_t i = 0; i < offered; ++i) {
    io_uring_sqe* sqe = io_uring_get_sqe(&r);  // never null: the ring has kCapacity entries, all reaped below
    io_uring_prep_send(sqe, entries_[i].fd, entries_[i].bytes.data(), entries_[i].bytes.size(),
                       MSG_NOSIGNAL | MSG_DONTWAIT);
    io_uring_sqe_set_data64(sqe, i);
  }
  const int submitted = io_uring_submit(&r);
  // The kernel takes a batch's entries in order: the first `taken` went.
  const std::size_t taken = submitted > 0 ? static_cast<std::size_t>(submitted) : 0;
  std::uint32_t answered = 0;  // a bit per slot
  int error = 0;
  // MSG_DONTWAIT sends complete during the submission; the wait is only
  // for a kernel that would ever post one later.
  for (std::size_t reaped = 0; reaped < taken;) {
    io_uring_cqe* cqe = nullptr;
    if (const int rc = reaped < answer_limit_ ? io_uring_wait_cqe(&r, &cqe) : -EIO; rc < 0) {
      if (rc == -EINTR) continue;
      error = -rc;
      break;
    }
    const auto slot = static_cast<std::size_t>(io_uring_cqe_get_data64(cqe));
    results_[slot] = to_write_result(cqe->res);
    answered |= 1U << slot;
    io_uring_cqe_seen(&r, cqe);
    ++reaped;
  }
  if (taken == count_ && error == 0) return 1;

  // Out of kernel memory, or a kernel that stopped the batch at a refused
  // send: the ring goes, and so do the entries it did not take (they would
  // go out later, from bytes gone by then). Those are sent now. One it
  // took but did not answer may have gone out: it is failed (the
  // connection closes) rather than sent twice.
  drop_ring(submitted < 0 ? -submitted : error != 0 ? error : EIO);
  std::size_t calls = 1;
  for (std::size_t i = 0; i < count_; ++i) {
    if ((answered & (1U << i)) != 0) continue;
    if (i < taken) {
      results_[i] = {write_result::status::failed, 0};
    } else {
      results_[i] = send_now(entries_[i].fd, entries_[i].bytes);
      ++calls;
    }
  }
  return calls;
}

}  // namespace fg::gateway
