// The answers a publish API request waits for: each message of a batch
// goes to a worker as ApiPublish with a request id, and the worker answers
// ApiPublished once its broker took it (with the offset Redis gave it).
// The batch's callback runs once every message is answered, failed
// because its worker went away, or failed because nobody answered within
// the bound. Socket-free; route_table drives it on thread 0.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fg::gateway {

struct api_receipt {
  bool ok = false;
  std::uint64_t offset = 0;  // 0: not numbered
  std::string error;         // !ok: why
};
using api_receipts_fn = std::function<void(std::vector<api_receipt>)>;

class api_receipt_book {
 public:
  using clock = std::chrono::steady_clock;

  // A batch of `size` messages; returns the request id of each, in order.
  // `workers[i]` identifies who was sent message i (for worker_lost).
  std::vector<std::uint64_t> open(std::span<const void* const> workers, clock::time_point now, api_receipts_fn done);
  // A worker's answer; unknown (late, or forged) requests are ignored.
  void answer(std::uint64_t request, api_receipt r);
  // Every message sent to `worker` is failed with `why`.
  void worker_lost(const void* worker, std::string_view why);
  // Every message older than `max_age` is failed.
  void expire(clock::time_point now, clock::duration max_age);
  [[nodiscard]] std::size_t pending() const noexcept { return pending_.size(); }

 private:
  struct batch {
    std::vector<api_receipt> receipts;
    std::size_t missing = 0;
    api_receipts_fn done;
  };
  struct waiting {
    std::shared_ptr<batch> of;
    std::size_t index = 0;
    const void* worker = nullptr;
    clock::time_point sent;
  };
  void settle(std::unordered_map<std::uint64_t, waiting>::iterator it, api_receipt r);
  void fail_where(const std::function<bool(const waiting&)>& match, std::string_view why);

  std::uint64_t next_ = 1;
  std::unordered_map<std::uint64_t, waiting> pending_;
};

}  // namespace fg::gateway
