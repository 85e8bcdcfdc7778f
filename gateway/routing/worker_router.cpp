#include "gateway/routing/worker_router.hpp"

#include <algorithm>
#include <filesystem>

#include <unistd.h>
#include <system_error>

#include "common/hashing.hpp"
#include "common/link/link_socket.hpp"
#include "common/logging.hpp"
#include "gateway/net/session.hpp"

namespace fg::gateway {

namespace asio = boost::asio;
namespace pb = framegate::link;
using boost::system::error_code;

void worker_router::prepare_link_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::system_error(ec, "cannot create link directory " + dir);
  link::remove_link_sockets(dir);
}

namespace {
// Past this many worker ids, the tallies of workers with no live link are
// forgotten (ids like <hostname>-<pid> change on every restart).
constexpr std::size_t max_tallies = 256;

std::uint64_t steady_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}
}  // namespace

worker_router::worker_router(io_thread& home)
    : home_(home),
      sticky_(parse_sticky_key_spec(home.config().sticky_key)),
      frames_(home.compressor()),
      ping_timer_(home.context().get_executor()) {
  socket_path_ = link::link_socket_path(home.config().link_dir, home.index());
  ::unlink(socket_path_.c_str());
  acceptor_ = std::make_unique<decltype(acceptor_)::element_type>(home.context().get_executor());
  acceptor_->open();
  error_code ec;
  acceptor_->bind(asio::local::stream_protocol::endpoint(socket_path_), ec);
  if (ec) throw std::system_error(ec, "cannot listen for workers on " + socket_path_);
  acceptor_->listen();
  if (home.index() == 0) hub_ = std::make_unique<room_hub>();
  do_accept();
  schedule_link_ping();
}

worker_router::~worker_router() { stop(); }

void worker_router::stop() {
  if (stopped_) return;
  stopped_ = true;
  ping_timer_.cancel();
  error_code ec;
  if (acceptor_) acceptor_->close(ec);
  ::unlink(socket_path_.c_str());
  const auto links = links_;
  for (const auto& l : links) l->close("gateway stopping");
}

void worker_router::do_accept() {
  acceptor_->async_accept([this](error_code ec, worker_link::socket_type socket) {
    if (ec == asio::error::operation_aborted || stopped_) return;
    if (!ec) {
      auto link = std::make_shared<worker_link>(*this, std::move(socket));
      links_.push_back(link);
      link->start();
    }
    do_accept();
  });
}

void worker_router::schedule_link_ping() {
  if (home_.config().link_ping.count() == 0) return;
  ping_timer_.expires_after(home_.config().link_ping);
  ping_timer_.async_wait([this](error_code ec) {
    if (ec || stopped_) return;
    ping_links();
    schedule_link_ping();
  });
}

void worker_router::ping_links() {
  // The nonce is the send time: the Pong brings it back (link_rtt_ns).
  pb::Envelope e;
  e.mutable_ping()->set_nonce(steady_ns());
  for (const auto& l : links_)
    if (l->registered() && !l->closed()) l->send(e);
}

worker_router::worker_tally& worker_router::tally(const worker_link& link) {
  if (tallies_.size() >= max_tallies && !tallies_.contains(link.worker_id())) {
    std::erase_if(tallies_, [&](const auto& entry) {
      return std::none_of(links_.begin(), links_.end(), [&](const auto& l) { return l->worker_id() == entry.first; });
    });
  }
  return tallies_[link.worker_id()];
}

void worker_router::snapshot(thread_snapshot& snap) const {
  snap.routing = true;
  snap.routes = counters_;
  std::unordered_map<std::string, worker_row> rows;
  for (const auto& [id, t] : tallies_) {
    auto& row = rows[id];
    row.routed = t.routed;
    row.credit_pauses = t.credit_pauses;
  }
  for (const auto& l : links_) {
    if (!l->registered()) continue;
    auto& row = rows[l->worker_id()];
    if (!l->closed()) row.links = 1;
    row.unacked += l->unacked_count();
    row.unacked_bytes += l->unacked_bytes();
  }
  for (const auto& [id, r] : routes_)
    if (r->link != nullptr) ++rows[r->link->worker_id()].connections;
  snap.workers.reserve(rows.size());
  for (auto& [id, row] : rows) {
    row.worker = id;
    snap.workers.push_back(std::move(row));
  }
}

// ---------------------------------------------------------------- clients

worker_link* worker_router::pick(const route& r) const {
  const int best = rendezvous_pick(
      r.key_hash, static_cast<int>(links_.size()), [&](int i) { return links_[i]->worker_hash(); },
      [&](int i) { return links_[i]->registered() && !links_[i]->closed() && links_[i]->serves(r.info.path); });
  return best < 0 ? nullptr : links_[static_cast<std::size_t>(best)].get();
}

unsigned worker_router::admit(const request_info& req, std::string_view& reason) {
  bool any = false;
  for (const auto& l : links_) {
    if (!l->registered() || l->closed()) continue;
    any = true;
    if (l->serves(req.path)) return 0;
  }
  if (!any) {
    ++counters_.refused_no_worker;
    reason = "no worker is available, try later";
    return 503;
  }
  ++counters_.refused_unknown_path;
  reason = "no app is mounted at this path";
  return 404;
}

void worker_router::on_open(session& s, request_info&& info) {
  auto r = std::make_unique<route>();
  r->s = &s;
  r->info = std::move(info);
  r->sticky_key = sticky_key_for(sticky_, r->info, s.id());
  r->key_hash = hash64(r->sticky_key);
  r->link = pick(*r);
  s.sink_data = r.get();
  auto& placed = *routes_.emplace(s.id(), std::move(r)).first->second;
  if (placed.link == nullptr) {
    // The worker left between admit() and now.
    s.close(1013, "no worker available");  // 1013: try again later
    return;
  }
  ++tally(*placed.link).routed;
  announce(placed, s.id(), false);
}

void worker_router::announce(route& r, std::uint64_t conn_id, bool resumed) {
  pb::Envelope e;
  auto* o = e.mutable_opened();
  o->set_conn_id(conn_id);
  o->set_gateway_id(home_.shared().gateway_id);
  o->set_path(r.info.path);
  o->set_query(r.info.query);
  for (const auto& [k, v] : r.info.headers) (*o->mutable_headers())[k] = v;
  o->set_subprotocol(r.info.subprotocol);
  o->set_remote_address(r.info.remote_address);
  o->set_sticky_key(r.sticky_key);
  o->set_resumed(resumed);
  if (resumed && !r.state.empty()) o->mutable_state()->ParseFromString(r.state);
  r.link->send(e);
}

void worker_router::on_message(session& s, ws::opcode op, std::span<const std::uint8_t> payload) {
  auto* r = static_cast<route*>(s.sink_data);
  if (r == nullptr || r->link == nullptr) return;
  if (!r->link->takes(payload.size())) return refuse_too_big(*r);
  r->last_seq = r->link->send_message(s.id(), op == ws::opcode::binary, payload);
}

void worker_router::refuse_too_big(route& r) {
  // Sending it would only get the link closed by the worker's decoder.
  ++counters_.too_big_for_worker;
  r.s->close(ws::close_code::message_too_big, "message too big for the worker");
}

bool worker_router::hold_failure(session& s) {
  auto* r = static_cast<route*>(s.sink_data);
  if (r == nullptr || r->link == nullptr || r->last_seq == 0 || r->link->acked(r->last_seq)) return false;
  r->link->held_failures().push_back({r->last_seq, s.id()});
  return true;
}

void worker_router::release_failures(worker_link& link, bool all) {
  auto& held = link.held_failures();
  std::vector<std::uint64_t> ready;
  std::erase_if(held, [&](const worker_link::failure_hold& h) {
    const bool done = all || link.acked(h.seq);
    if (done) ready.push_back(h.conn_id);
    return done;
  });
  for (const std::uint64_t id : ready)
    if (auto it = routes_.find(id); it != routes_.end()) it->second->s->complete_failure();
}

bool worker_router::can_read(session& s) {
  auto* r = static_cast<route*>(s.sink_data);
  if (r == nullptr || r->link == nullptr || r->link->has_credit()) return true;
  ++counters_.credit_pauses;
  ++tally(*r->link).credit_pauses;
  r->link->paused().push_back(s.id());
  return false;
}

void worker_router::on_close(session& s, std::uint16_t code, close_origin origin) {
  const auto it = routes_.find(s.id());
  if (it == routes_.end()) return;
  if (auto* link = it->second->link; link != nullptr && !link->closed()) {
    pb::Envelope e;
    auto* c = e.mutable_closed();
    c->set_conn_id(s.id());
    c->set_code(code);
    c->set_closer(origin == close_origin::client   ? pb::CLOSER_CLIENT
                  : origin == close_origin::server ? pb::CLOSER_SERVER
                                                   : pb::CLOSER_NETWORK);
    link->send(e);
  }
  s.sink_data = nullptr;
  routes_.erase(it);
}

// ---------------------------------------------------------------- workers

void worker_router::on_envelope(worker_link& link, const pb::Envelope& e) {
  if (!link.registered() && e.body_case() != pb::Envelope::kRegister)
    return link.close("the first envelope of a link must be Register");
  switch (e.body_case()) {
    case pb::Envelope::kRegister: {
      link.set_registration(e.register_());
      pb::Envelope w;
      auto* welcome = w.mutable_welcome();
      welcome->set_gateway_id(home_.shared().gateway_id);
      welcome->set_link_index(home_.index());
      welcome->set_link_count(home_.config().threads);
      welcome->set_credit_window(home_.config().credit_window);
      link.send(w);
      if (home_.index() == 0) {
        auto log = component_logger("gateway");
        log->info("worker '{}' (pid {}, {}) registered, serving {} path(s)", link.worker_id(), e.register_().pid(),
                  e.register_().version(), e.register_().paths_size());
        if (!link.takes(home_.config().reader.limits.max_message_size))
          log->warn(
              "worker '{}' takes messages up to {} bytes (its --max-envelope), below --max-message-size {}: "
              "larger ones will be closed with 1009",
              link.worker_id(), link.max_payload(), home_.config().reader.limits.max_message_size);
      }
      return;
    }
    case pb::Envelope::kSend: return deliver(e.send());
    case pb::Envelope::kClose:
      if (auto it = routes_.find(e.close().conn_id()); it != routes_.end())
        it->second->s->close(static_cast<std::uint16_t>(e.close().code()), e.close().reason());
      return;
    case pb::Envelope::kState:
      if (auto it = routes_.find(e.state().conn_id()); it != routes_.end())
        e.state().state().SerializeToString(&it->second->state);
      return;
    case pb::Envelope::kAck: {
      const bool had_credit = link.has_credit();
      link.on_ack(e.ack().seq());
      if (!had_credit && link.has_credit()) credit_returned_.push_back(&link);
      if (!link.held_failures().empty()) release_failures(link, false);
      return;
    }
    case pb::Envelope::kPing: {
      pb::Envelope pong;
      pong.mutable_pong()->set_nonce(e.ping().nonce());
      link.send(pong);
      return;
    }
    case pb::Envelope::kPong:
      if (const std::uint64_t now = steady_ns(); e.pong().nonce() <= now)
        counters_.link_rtt_ns.observe(now - e.pong().nonce());
      return;
    case pb::Envelope::kBrokerSubscribe:
      if (!hub_) return;
      for (const auto& room : e.broker_subscribe().subscribe()) hub_->subscribe(link, room);
      for (const auto& room : e.broker_subscribe().unsubscribe()) hub_->unsubscribe(link, room);
      return;
    case pb::Envelope::kBrokerPublish:
      if (hub_) hub_->publish(e.broker_publish());
      return;
    default: return;  // envelopes meant for workers are ignored
  }
}

void worker_router::deliver(const pb::Send& send) {
  // Framed once per parameter set among the recipients (plain, compressed
  // per window size), the same bytes queued for every recipient of a set.
  const auto& payload = send.payload();
  const auto op = send.binary() ? ws::opcode::binary : ws::opcode::text;
  frames_.reset(op, {reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size()});
  counters_.broadcast_recipients.observe(static_cast<std::uint64_t>(send.conn_ids_size()));
  for (const std::uint64_t id : send.conn_ids()) {
    if (auto it = routes_.find(id); it != routes_.end()) it->second->s->send_shared(frames_);
  }
}

std::size_t worker_router::live_workers() const noexcept {
  return static_cast<std::size_t>(
      std::count_if(links_.begin(), links_.end(), [](const auto& l) { return l->registered() && !l->closed(); }));
}

bool worker_router::publish_to_rooms(std::span<const room_message> messages) {
  if (live_workers() == 0) return false;
  pb::Envelope e;
  for (const auto& m : messages) {
    const int best = rendezvous_pick(
        hash64(m.room), static_cast<int>(links_.size()), [&](int i) { return links_[i]->worker_hash(); },
        [&](int i) { return links_[i]->registered() && !links_[i]->closed(); });
    auto* p = e.mutable_broker_publish();
    p->set_room(m.room);
    p->set_payload(m.delivery);
    links_[static_cast<std::size_t>(best)]->send(e);
  }
  return true;
}

void worker_router::after_link_batch() {
  home_.uncork();
  auto returned = std::move(credit_returned_);
  credit_returned_.clear();
  for (worker_link* l : returned) resume_paused(*l);
}

void worker_router::resume_paused(worker_link& link) {
  auto paused = std::move(link.paused());
  link.paused().clear();
  for (const std::uint64_t id : paused)
    if (auto it = routes_.find(id); it != routes_.end()) it->second->s->resume_reading();
}

void worker_router::on_link_lost(worker_link& lost) {
  const auto keep = lost.shared_from_this();
  std::erase_if(links_, [&](const auto& l) { return l.get() == &lost; });
  release_failures(lost, true);  // their replies died with the worker
  if (hub_) hub_->forget(lost);
  if (stopped_ || !lost.registered()) return;

  // Move every connection of the lost worker, announce it as resumed, then
  // replay what the dead worker never acknowledged, in order.
  std::vector<std::uint64_t> orphans;
  for (auto& [id, r] : routes_)
    if (r->link == &lost) orphans.push_back(id);
  for (const std::uint64_t id : orphans) {
    auto& r = *routes_.at(id);
    r.link = pick(r);
    if (r.link == nullptr) {
      ++counters_.closed_no_worker;
      r.s->close(1013, "no worker available");  // 1013: try again later
      continue;
    }
    ++counters_.connections_moved;
    ++tally(*r.link).routed;
    r.last_seq = 0;
    announce(r, id, true);
  }
  lost.for_each_unacked([&](std::uint64_t conn_id, bool binary, std::span<const std::uint8_t> payload) {
    const auto it = routes_.find(conn_id);
    if (it == routes_.end() || it->second->link == nullptr || !it->second->s->is_open()) return;
    if (!it->second->link->takes(payload.size())) return refuse_too_big(*it->second);
    ++counters_.messages_replayed;
    it->second->last_seq = it->second->link->send_message(conn_id, binary, payload);
  });
  resume_paused(lost);
  home_.uncork();
  if (!orphans.empty())
    component_logger("gateway")->warn("worker '{}' lost: moved {} connection(s), replayed {} message(s)",
                                      lost.worker_id(), orphans.size(), lost.unacked_count());
}

}  // namespace fg::gateway
