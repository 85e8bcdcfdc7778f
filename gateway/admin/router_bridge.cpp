#include "gateway/admin/router_bridge.hpp"

#include <limits>

#include <boost/asio/post.hpp>

#include "gateway/net/io_thread.hpp"

namespace fg::gateway::admin {

namespace asio = boost::asio;

router_bridge::router_bridge(asio::io_context& admin_io, std::vector<io_thread*> threads, route_table* router)
    : admin_io_(admin_io), threads_(std::move(threads)), router_(router), mailbox_(std::make_shared<mailbox>()) {
  mailbox_->bridge = this;
  mailbox_->io = &admin_io;
}

router_bridge::~router_bridge() {
  const std::lock_guard lock(mailbox_->mutex);
  mailbox_->bridge = nullptr;
  mailbox_->io = nullptr;
}

void router_bridge::count_workers(std::function<void(std::size_t)> done) {
  if (router_ == nullptr) {
    asio::post(admin_io_, [done = std::move(done)] { done(std::numeric_limits<std::size_t>::max()); });
    return;
  }
  ask([](route_table& r) { return r.live_workers(); }, std::move(done));
}

void router_bridge::publish(std::vector<room_message> messages, std::function<void(publish_outcome)> done) {
  using result = route_table::publish_result;
  if (router_ == nullptr) {
    asio::post(admin_io_, [done = std::move(done)] { done({result::no_worker, {}}); });
    return;
  }
  // Unlike ask(), the answer comes later than the work: when the workers'
  // receipts are in (route_table keeps the callback meanwhile).
  const std::uint64_t id = next_id_++;
  publishes_.emplace(id, std::move(done));
  threads_.front()->post([router = router_, messages = std::move(messages), box = mailbox_, id] {
    const auto reply = [box, id](publish_outcome o) {
      const std::lock_guard lock(box->mutex);
      if (box->io == nullptr) return;  // the admin listener is gone
      asio::post(*box->io,
                 [bridge = box->bridge, id, o = std::move(o)]() mutable { bridge->answer_publish(id, std::move(o)); });
    };
    const result r = router->publish_to_rooms(messages, [reply](std::vector<api_receipt> receipts) {
      reply({result::sent, std::move(receipts)});
    });
    if (r != result::sent) reply({r, {}});
  });
}

void router_bridge::answer_publish(std::uint64_t id, publish_outcome outcome) {
  const auto it = publishes_.find(id);
  if (it == publishes_.end()) return;
  auto done = std::move(it->second);
  publishes_.erase(it);
  done(std::move(outcome));
}

void router_bridge::ask(std::function<std::size_t(route_table&)> work, std::function<void(std::size_t)> done) {
  const std::uint64_t id = next_id_++;
  pending_.emplace(id, std::move(done));
  threads_.front()->post([router = router_, work = std::move(work), box = mailbox_, id] {
    const std::size_t result = work(*router);
    const std::lock_guard lock(box->mutex);
    if (box->io == nullptr) return;  // the admin listener is gone
    asio::post(*box->io, [bridge = box->bridge, id, result] { bridge->answer(id, result); });
  });
}

void router_bridge::answer(std::uint64_t id, std::size_t result) {
  const auto it = pending_.find(id);
  if (it == pending_.end()) return;
  auto done = std::move(it->second);
  pending_.erase(it);
  done(result);
}

void router_bridge::collect(std::function<void(std::vector<thread_snapshot>)> done) {
  const std::uint64_t id = next_id_++;
  auto& s = scrapes_[id];
  s.snapshots.resize(threads_.size());
  s.missing = threads_.size();
  s.done = std::move(done);
  for (std::size_t i = 0; i < threads_.size(); ++i) {
    io_thread* t = threads_[i];
    t->post([t, box = mailbox_, id, i] {
      thread_snapshot snap = t->snapshot();
      const std::lock_guard lock(box->mutex);
      if (box->io == nullptr) return;
      asio::post(*box->io, [bridge = box->bridge, id, i, snap = std::move(snap)]() mutable {
        bridge->take_snapshot(id, i, std::move(snap));
      });
    });
  }
}

void router_bridge::take_snapshot(std::uint64_t id, std::size_t thread, thread_snapshot snap) {
  const auto it = scrapes_.find(id);
  if (it == scrapes_.end()) return;
  it->second.snapshots[thread] = std::move(snap);
  if (--it->second.missing != 0) return;
  auto finished = std::move(it->second);
  scrapes_.erase(it);
  finished.done(std::move(finished.snapshots));
}

}  // namespace fg::gateway::admin
