#include "supervisor/cluster.hpp"

#include <csignal>

#include <unistd.h>

#include "common/config_error.hpp"
#include "common/logging.hpp"
#include "common/redact.hpp"
#include "supervisor/exit_status.hpp"

namespace fg::supervisor {

namespace {

// What the gateway prints once it accepts clients (and, we rely on it, once its
// link socket exists, so workers started after it can connect at once).
const std::regex gateway_ready_line{R"(listening on (\S+):(\d+))"};

// What redis-server logs once it accepts connections: "Ready to accept
// connections" (TCP) or "The server is now ready to accept connections at
// PATH" (Unix socket only, as here).
const std::regex redis_ready_line{R"([Rr]eady to accept connections)"};

// Output still in the pipes of stopped children is worth waiting for, briefly.
constexpr std::chrono::seconds drain_bound{2};

std::shared_ptr<spdlog::logger> logger() { return component_logger("supervisor"); }

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "signal";
  }
}

}  // namespace

cluster::cluster(boost::asio::io_context& io, const supervisor_options& opts, std::string link_dir)
    : io_(io),
      opts_(opts),
      link_dir_(std::move(link_dir)),
      stop_signals_(io, SIGINT, SIGTERM, SIGHUP),
      child_signals_(io, SIGCHLD),
      start_timer_(io),
      drain_timer_(io) {
  if (opts.private_redis()) {
    redis_socket_ = link_dir_ + "/redis.sock";
    redis_url_ = "unix://" + redis_socket_;
  } else if (!opts.no_redis) {
    redis_url_ = opts.redis;  // empty with --redis-cluster
  }
}

std::vector<std::pair<std::string, std::string>> cluster::child_env() const {
  std::vector<std::pair<std::string, std::string>> env;
  for (const auto& [name, value] : opts_.passthrough) env.emplace_back(env_name_for(name), value);
  env.emplace_back("FRAMEGATE_LOG_LEVEL", opts_.logging.level);
  env.emplace_back("FRAMEGATE_LOG_FORMAT", opts_.logging.format);
  // Secrets go by environment (readable by our user only) or by file name,
  // never on a command line, which every local user sees in ps.
  if (!redis_url_.empty()) env.emplace_back("FRAMEGATE_REDIS", redis_url_);
  if (!opts_.redis_cluster.empty()) env.emplace_back("FRAMEGATE_REDIS_CLUSTER", opts_.redis_cluster);
  if (!opts_.redis_password_file.empty()) env.emplace_back("FRAMEGATE_REDIS_PASSWORD_FILE", opts_.redis_password_file);
  return env;
}

// Private to this cluster: no TCP port, a socket only our user can open, and
// nothing written to disk (the run directory is removed at exit anyway).
child_spec cluster::redis_spec() const {
  return {"redis",
          opts_.redis_server_bin,
          {"--port", "0", "--unixsocket", redis_socket_, "--unixsocketperm", "700", "--save", "", "--appendonly", "no",
           "--dir", link_dir_},
          {},
          json_output()};
}

child_spec cluster::gateway_spec() const {
  auto env = child_env();
  if (!opts_.static_dir.empty()) env.emplace_back("FRAMEGATE_STATIC_DIR", opts_.static_dir);
  env.emplace_back("FRAMEGATE_THREADS", std::to_string(opts_.gateway_threads));
  return {
      "gateway", opts_.gateway_bin, {"--listen", opts_.listen, "--link-dir", link_dir_}, std::move(env), json_output()};
}

child_spec cluster::worker_spec(unsigned index) const {
  const auto id = "w" + std::to_string(index);
  return {id,
          opts_.worker_bin,
          {"--id", id, "--link-dir", link_dir_, "--admin", opts_.worker_admin_for(index)},
          child_env(),
          json_output()};
}

supervised_child::events cluster::child_events() {
  return {
      [this](supervised_child& c, const std::smatch& m) { on_ready(c, m); },
      [this](supervised_child& c, int status) { on_exit(c, status); },
      [this] {
        if (phase_ == phase::draining) drain_output();
      },
  };
}

void cluster::start() {
  // Both handlers are installed before the first spawn, so no exit goes unseen.
  wait_for_signals();
  wait_for_child_exits();
  start_timer_.expires_after(opts_.start_timeout());
  start_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || phase_ != phase::starting) return;
    if (!gateway_)
      logger()->error("redis-server was not ready to accept connections within {} s", opts_.start_timeout_s);
    else
      logger()->error("the gateway did not print 'listening on HOST:PORT' within {} s", opts_.start_timeout_s);
    begin_stop(1);
  });
  if (redis_socket_.empty()) {
    start_gateway();
    return;
  }
  logger()->info("starting a private redis-server ({}) on {}", opts_.redis_server_bin, redis_socket_);
  redis_ = std::make_unique<supervised_child>(io_, redis_spec(), redis_ready_line, child_events());
  redis_->start();
}

void cluster::start_gateway() {
  logger()->info("starting gateway ({}) on {}, link directory {}{}{}", opts_.gateway_bin, opts_.listen, link_dir_,
                 !opts_.redis_cluster.empty() ? ", Redis Cluster " + opts_.redis_cluster
                 : redis_url_.empty()         ? std::string(", no Redis")
                                              : ", Redis " + redact_url(redis_url_),
                 opts_.gateway_threads_default
                     ? fmt::format(", {} I/O thread(s): half the cores (--threads to choose)", opts_.gateway_threads)
                     : std::string());
  if (!opts_.static_dir.empty())
    logger()->info("the gateway serves {} to plain HTTP GETs{}", opts_.static_dir,
                   opts_.static_dir_given ? "" : " (the browser demo: open http://HOST:PORT/)");
  else if (!opts_.no_demo && !opts_.static_dir_given)
    logger()->warn("the bundled browser demo (deploy/demo) was not found; plain HTTP GETs get 426");
  if (opts_.publish_deflate_implied())
    logger()->info(
        "--deflate with the private Redis or the hub: workers compress room messages once, at their publisher "
        "(--publish-deflate; --publish-deflate=false to compress them at the gateway)");
  gateway_ = std::make_unique<supervised_child>(io_, gateway_spec(), gateway_ready_line, child_events());
  gateway_->start();
}

void cluster::wait_for_signals() {
  stop_signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    if (phase_ == phase::stopping) {
      logger()->warn("{} again: killing every child now", signal_name(sig));
      if (gateway_) gateway_->kill_now();
      for (auto& w : workers_) w->kill_now();
      if (redis_) redis_->kill_now();
    } else if (phase_ == phase::starting || phase_ == phase::running) {
      logger()->info("{}: stopping the gateway, then the workers{}", signal_name(sig),
                     redis_ ? ", then redis-server" : "");
      begin_stop(0);
    }
    wait_for_signals();
  });
}

void cluster::wait_for_child_exits() {
  child_signals_.async_wait([this](const boost::system::error_code& ec, int) {
    if (ec) return;
    // Signals coalesce: one SIGCHLD may stand for several exits, so ask every child.
    if (redis_) redis_->check_exit();
    if (gateway_) gateway_->check_exit();
    for (std::size_t i = 0; i < workers_.size(); ++i) workers_[i]->check_exit();
    wait_for_child_exits();
  });
}

void cluster::on_ready(supervised_child& child, const std::smatch& match) {
  if (&child == redis_.get()) {
    // After a restart the children reconnect by themselves.
    if (gateway_) {
      logger()->info("redis-server ready again");
      return;
    }
    logger()->info("redis-server ready on {}", redis_socket_);
    try {
      start_gateway();
    } catch (const std::exception& e) {
      logger()->error("gateway: {}", e.what());
      begin_stop(1);
    }
    return;
  }
  if (&child != gateway_.get()) return;
  if (phase_ != phase::starting) {
    logger()->info("gateway listening again on {}:{}", match[1].str(), match[2].str());
    return;
  }
  phase_ = phase::running;
  start_timer_.cancel();
  logger()->info("gateway listening on ws://{}:{}/ - starting {} worker(s)", match[1].str(), match[2].str(),
                 opts_.workers);
  for (unsigned k = 1; k <= opts_.workers; ++k) {
    workers_.push_back(std::make_unique<supervised_child>(io_, worker_spec(k), std::nullopt, child_events()));
    try {
      workers_.back()->start();
    } catch (const std::exception& e) {
      logger()->error("{}: {}", workers_.back()->name(), e.what());
      begin_stop(1);
      return;
    }
  }
}

void cluster::on_exit(supervised_child& child, int wait_status) {
  if (phase_ != phase::starting && phase_ != phase::running) return;
  if (phase_ == phase::starting && &child == gateway_.get()) {
    logger()->error("the gateway exited during start-up: giving up");
    if (is_config_error(wait_status)) config_failure_ = &child;
    begin_stop(is_config_error(wait_status) ? config_error_exit : 1);
    return;
  }
  if (phase_ == phase::starting && &child == redis_.get() && !gateway_) {
    logger()->error(
        "redis-server exited during start-up: giving up (install redis-server, or use --redis URL or "
        "--no-redis)");
    begin_stop(1);
    return;
  }
  // A configuration error comes back on every restart: a crash loop, with
  // the gateway answering 503 meanwhile. Stop the cluster and say why
  // instead. The children exit with it only while starting, but not always
  // before their ready line: the gateway prints "listening on" before it
  // binds its admin listener, so readiness is no test of "still starting".
  if (is_config_error(wait_status)) {
    logger()->error("{} rejected its configuration (exit status {}): not restarting it; stopping the cluster",
                    child.name(), config_error_exit);
    config_failure_ = &child;
    begin_stop(config_error_exit);
    return;
  }
  child.restart_later();
}

void cluster::begin_stop(int exit_code) {
  if (phase_ == phase::stopping || phase_ == phase::draining || phase_ == phase::done) return;
  phase_ = phase::stopping;
  exit_code_ = exit_code;
  start_timer_.cancel();
  // The gateway goes first: it closes its clients with 1001 while the workers
  // can still answer whatever is in flight.
  if (gateway_)
    gateway_->stop(opts_.stop_timeout(), [this] { stop_workers(); });
  else
    stop_workers();
}

void cluster::stop_workers() {
  workers_stopping_ = workers_.size();
  if (workers_stopping_ == 0) {
    stop_redis();
    return;
  }
  for (auto& w : workers_)
    w->stop(opts_.stop_timeout(), [this] {
      if (--workers_stopping_ == 0) stop_redis();
    });
}

void cluster::stop_redis() {
  if (!redis_) {
    drain_output();
    return;
  }
  redis_->stop(opts_.stop_timeout(), [this] {
    // redis-server removes its socket on a clean exit, not after SIGKILL;
    // a --link-dir the user made outlives us, so leave nothing in it.
    ::unlink(redis_socket_.c_str());
    drain_output();
  });
}

void cluster::drain_output() {
  if (phase_ == phase::stopping) {
    phase_ = phase::draining;
    drain_timer_.expires_after(drain_bound);
    drain_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) finish();
    });
  }
  bool open = (gateway_ && gateway_->output_open()) || (redis_ && redis_->output_open());
  for (const auto& w : workers_) open = open || w->output_open();
  if (!open) finish();
}

void cluster::finish() {
  if (phase_ == phase::done) return;
  phase_ = phase::done;
  logger()->info("all children stopped");
  if (config_failure_) report_config_failure();
  io_.stop();
}

// Last, once the failed child's output is drained: its own error line is
// then known, and it is what the operator reads first.
void cluster::report_config_failure() const {
  const auto& child = *config_failure_;
  const auto& line = child.last_line();
  std::string hint;
  const bool worker = &child != gateway_.get() && &child != redis_.get();
  if (worker && line.find("--admin") != std::string::npos)
    hint = "; framegate up gives worker i the admin port PORT+i-1 of --worker-admin " + opts_.worker_admin +
           ": choose a free range (another cluster on this host may hold it), port 0 for any free port, or off";
  logger()->error("{} failed at start-up: {}{}", child.name(), line.empty() ? "(it printed nothing)" : line, hint);
}

}  // namespace fg::supervisor
