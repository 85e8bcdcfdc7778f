#include "gateway/routing/api_receipts.hpp"

#include <utility>

namespace fg::gateway {

std::vector<std::uint64_t> api_receipt_book::open(std::span<const void* const> workers, clock::time_point now,
                                                  api_receipts_fn done) {
  auto b = std::make_shared<batch>();
  b->receipts.resize(workers.size());
  b->missing = workers.size();
  b->done = std::move(done);
  std::vector<std::uint64_t> ids;
  ids.reserve(workers.size());
  for (std::size_t i = 0; i < workers.size(); ++i) {
    const std::uint64_t id = next_++;
    pending_.emplace(id, waiting{b, i, workers[i], now});
    ids.push_back(id);
  }
  return ids;
}

void api_receipt_book::answer(std::uint64_t request, api_receipt r) {
  if (const auto it = pending_.find(request); it != pending_.end()) settle(it, std::move(r));
}

void api_receipt_book::worker_lost(const void* worker, std::string_view why) {
  fail_where([&](const waiting& w) { return w.worker == worker; }, why);
}

void api_receipt_book::expire(clock::time_point now, clock::duration max_age) {
  fail_where([&](const waiting& w) { return now - w.sent > max_age; }, "the worker did not answer in time");
}

void api_receipt_book::fail_where(const std::function<bool(const waiting&)>& match, std::string_view why) {
  // Ids first: a batch's callback may run in between.
  std::vector<std::uint64_t> ids;
  for (const auto& [id, w] : pending_)
    if (match(w)) ids.push_back(id);
  for (const std::uint64_t id : ids)
    if (const auto it = pending_.find(id); it != pending_.end()) settle(it, {false, 0, std::string(why)});
}

void api_receipt_book::settle(std::unordered_map<std::uint64_t, waiting>::iterator it, api_receipt r) {
  const std::shared_ptr<batch> b = std::move(it->second.of);
  b->receipts[it->second.index] = std::move(r);
  pending_.erase(it);
  if (--b->missing == 0 && b->done) std::exchange(b->done, nullptr)(std::move(b->receipts));
}

}  // namespace fg::gateway
