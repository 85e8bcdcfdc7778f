#include "worker/runtime/worker_runtime.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <unistd.h>

#include <boost/asio/post.hpp>

#include "common/config_error.hpp"
#include "common/link/link_dir_trust.hpp"
#include "common/version.hpp"
#include "worker/broker/inbound_check.hpp"
#include "worker/runtime/link_dir.hpp"

namespace fg::worker {

namespace asio = boost::asio;
namespace pb = framegate::link;

worker_runtime::worker_runtime(asio::io_context& io, const worker_config& config, app_registry& apps,
                               std::shared_ptr<spdlog::logger> log)
    : io_(io),
      config_(config),
      log_(std::move(log)),
      dispatcher_(config.id, apps, *this, log_),
      discovery_timer_(io),
      housekeeping_timer_(io),
      discovery_backoff_(config.link.backoff_min, config.link.backoff_max, 0x5eed) {
  hello_.set_worker_id(config.id);
  hello_.set_pid(static_cast<std::uint32_t>(::getpid()));
  hello_.set_version(std::string(fg::version));
  hello_.set_max_envelope(config.link.max_envelope);
  for (const auto& path : apps.paths()) hello_.add_paths(path);
}

worker_runtime::~worker_runtime() = default;

void worker_runtime::start() {
  if (const auto why = link::untrusted_link_dir(config_.link_dir))
    throw config_error("link directory " + config_.link_dir + " cannot be trusted: " + *why +
                       " (another local user could stand in for the gateway); use a private directory "
                       "(--link-dir)");
  log_->info("worker {} (pid {}) serving {} apps; linking to the gateway in {}", config_.id, hello_.pid(),
             hello_.paths_size(), config_.link_dir);
  discover();
  schedule_housekeeping();
}

void worker_runtime::schedule_housekeeping() {
  if (config_.pool_shed_period.count() <= 0) return;
  housekeeping_timer_.expires_after(config_.pool_shed_period);
  housekeeping_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopped_) return;
    dispatcher_.shed_unused_memory();
    schedule_housekeeping();
  });
}

void worker_runtime::stop() {
  if (stopped_) return;
  stopped_ = true;
  discovery_timer_.cancel();
  housekeeping_timer_.cancel();
  for (auto& l : links_)
    if (l) l->stop();
  log_->info("stopped: links closed");
}

std::uint64_t worker_runtime::gateway_max_payload() const noexcept {
  std::uint64_t smallest = 0;
  for (const std::uint64_t limit : welcome_limits_)
    if (limit != 0 && (smallest == 0 || limit < smallest)) smallest = limit;
  return smallest;
}

std::size_t worker_runtime::link_count() const noexcept {
  std::size_t n = 0;
  for (const auto& l : links_) n += l ? 1 : 0;
  return n;
}

std::size_t worker_runtime::ready_links() const noexcept {
  std::size_t n = 0;
  for (const auto& l : links_) n += (l && l->ready()) ? 1 : 0;
  return n;
}

std::uint64_t worker_runtime::link_write_waits() const noexcept {
  std::uint64_t n = 0;
  for (const auto& l : links_) n += l ? l->stats().write_waits : 0;
  return n;
}

// ------------------------------------------------------------------ discovery

void worker_runtime::discover() {
  if (stopped_) return;
  // Checked again on every scan: the directory may appear (or change) after start.
  if (const auto why = link::untrusted_link_dir(config_.link_dir)) {
    if (!logged_untrusted_) log_->error("not linking through {}: {}", config_.link_dir, *why);
    logged_untrusted_ = true;
    return schedule_discovery();
  }
  logged_untrusted_ = false;
  std::vector<gateway_link*> added;
  for (const auto& found : scan_link_dir(config_.link_dir)) {
    if (found.index >= links_.size()) links_.resize(found.index + 1);
    if (links_[found.index]) continue;
    links_[found.index] =
        std::make_unique<gateway_link>(io_, found.index, found.path, config_.link, hello_, *this, log_);
    added.push_back(links_[found.index].get());
  }
  // Started after the scan: start() re-enters discover() via on_link_connecting.
  for (gateway_link* l : added) l->start();
  if (link_count() == 0) schedule_discovery();
}

void worker_runtime::schedule_discovery() {
  if (!logged_no_sockets_) {
    logged_no_sockets_ = true;
    log_->info("no link-*.sock in {} yet; waiting for the gateway", config_.link_dir);
  }
  discovery_timer_.expires_after(discovery_backoff_.next());
  discovery_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) discover();
  });
}

void worker_runtime::on_link_connecting(gateway_link&) {
  // A restarted gateway may have more threads than before: every attempt
  // looks for sockets it has no link for yet.
  discover();
}

// ---------------------------------------------------------------- link events

void worker_runtime::on_link_ready(gateway_link& l, const pb::Welcome& w) {
  gateway_id_ = w.gateway_id();
  gateway_links_ = w.link_count();
  if (l.index() >= welcome_limits_.size()) welcome_limits_.resize(l.index() + 1, 0);
  std::uint64_t limit = w.max_message_size();
  if (w.max_envelope() != 0) {
    const std::uint64_t env = w.max_envelope() > send_envelope_overhead ? w.max_envelope() - send_envelope_overhead : 1;
    limit = limit == 0 ? env : std::min(limit, env);
  }
  welcome_limits_[l.index()] = limit;
  log_->info("registered with gateway {} as {}: link {} of {} (credit window {}), {} ready", w.gateway_id(), config_.id,
             l.index(), w.link_count(), w.credit_window(), ready_links());
  dispatcher_.on_link_up(l.index());
}

void worker_runtime::on_link_down(gateway_link& l, std::string_view) { dispatcher_.on_link_down(l.index()); }

void worker_runtime::on_link_envelope(gateway_link& l, const pb::Envelope& e) { dispatcher_.on_envelope(l.index(), e); }

void worker_runtime::on_link_message(gateway_link& l, const fg::link::message_view& m) {
  dispatcher_.on_message(l.index(), m);
}

void worker_runtime::on_link_batch_end(gateway_link& l) {
  if (dispatcher_.end_batch(l.index())) schedule_service();
}

void worker_runtime::schedule_service() {
  // Messages left after a turn's budgets: the next turn runs after what
  // the loop already has to do (other links' reads, timers, writes).
  if (service_scheduled_ || stopped_) return;
  service_scheduled_ = true;
  asio::post(io_, [this] {
    service_scheduled_ = false;
    if (!stopped_ && dispatcher_.serve_turn()) schedule_service();
  });
}

// ------------------------------------------------------------------ batching

bool worker_runtime::hub_ready() const { return !links_.empty() && links_[0] && links_[0]->ready(); }

gateway_link* worker_runtime::output_link(std::uint32_t index) {
  if (index >= links_.size() || !links_[index]) return nullptr;
  schedule_flush();
  return links_[index].get();
}

void worker_runtime::queue(std::uint32_t index, const pb::Envelope& e) {
  if (gateway_link* l = output_link(index)) l->queue(e);
}

void worker_runtime::queue_send(std::uint32_t index, std::span<const std::uint64_t> to, bool binary,
                                std::string_view payload, deflated_segment pre) {
  if (gateway_link* l = output_link(index)) l->queue_send(to, binary, payload, pre);
}

void worker_runtime::at_end_of_turn(std::function<void()> fn) {
  end_of_turn_.push_back(std::move(fn));
  schedule_flush();
}

void worker_runtime::on_link_read_begin(gateway_link&) { ++reads_open_; }

void worker_runtime::on_link_read_end(gateway_link&) {
  if (--reads_open_ == 0 && flush_due_) end_of_turn();
}

void worker_runtime::schedule_flush() {
  if (flush_due_) return;
  flush_due_ = true;
  // Inside a link read, the read's end writes: a handler of its own would
  // cost the loop one more turn (and epoll_wait) per batch.
  if (reads_open_ > 0 || flush_posted_) return;
  flush_posted_ = true;
  asio::post(io_, [this] {
    flush_posted_ = false;
    if (flush_due_) end_of_turn();
  });
}

void worker_runtime::end_of_turn() {
  // Hooks may queue envelopes (and add hooks): run until none are left,
  // then write, so all of it leaves in this turn's writes. flush_due_ stays
  // set meanwhile: what they queue needs no second post.
  while (!end_of_turn_.empty()) {
    auto hooks = std::move(end_of_turn_);
    end_of_turn_.clear();
    for (auto& fn : hooks) fn();
  }
  for (auto& l : links_)
    if (l) l->flush();
  flush_due_ = false;
}

}  // namespace fg::worker
