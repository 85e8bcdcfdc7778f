#include "worker/broker/redis_connection.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include "worker/broker/tcp_liveness.hpp"

namespace fg::worker {

namespace asio = boost::asio;

redis_connection::redis_connection(asio::io_context& io, redis_endpoint endpoint, std::string name,
                                   const redis_connection_options& options, listener& l,
                                   std::shared_ptr<spdlog::logger> log, std::uint64_t seed)
    : io_(io),
      endpoint_(std::move(endpoint)),
      name_(std::move(name)),
      options_(options),
      listener_(l),
      log_(std::move(log)),
      backoff_(options.backoff_min, options.backoff_max, seed),
      timer_(io),
      resolver_(io) {}

redis_connection::~redis_connection() { stop(); }

void redis_connection::start() {
  if (state_ != state::idle) return;
  connect();
}

void redis_connection::stop() {
  if (state_ == state::stopped) return;
  state_ = state::stopped;
  ++attempt_;
  timer_.cancel();
  if (ctx_ != nullptr) {
    // Pending callbacks run with null replies; on_disconnect_cb sees `stopped`.
    redisAsyncContext* c = std::exchange(ctx_, nullptr);
    redisAsyncFree(c);
  }
}

void redis_connection::connect() {
  state_ = state::connecting;
  const std::uint64_t attempt = ++attempt_;
  // One deadline for the whole attempt: resolving, connecting, AUTH/SELECT.
  timer_.expires_after(options_.connect_timeout);
  timer_.async_wait([this, attempt](const boost::system::error_code& ec) {
    if (ec || attempt != attempt_) return;
    if (state_ == state::resolving) {
      handle_down("timed out resolving " + endpoint_.host);  // a late answer is ignored (attempt)
    } else if (state_ == state::connecting || state_ == state::setting_up) {
      abort("timed out connecting");
    }
  });
  boost::system::error_code literal;
  if (endpoint_.is_unix() || (asio::ip::make_address(endpoint_.host, literal), !literal)) {
    open_context(endpoint_.host);
    return;
  }
  // hiredis would resolve a host name in redisAsyncConnect, with a blocking
  // getaddrinfo: a DNS that does not answer (a partition, again) would stop
  // the worker's loop, and every client of this worker with it, for
  // seconds at each attempt.
  state_ = state::resolving;
  resolver_.resolve(endpoint_.host, endpoint_.port,
                    [this, attempt](const std::vector<asio::ip::address>& resolved, const std::string& error) {
                      // Dropped by the resolver once this connection is gone.
                      if (attempt != attempt_ || state_ != state::resolving) return;
                      if (!error.empty()) return handle_down("cannot resolve " + endpoint_.host + ": " + error);
                      state_ = state::connecting;
                      open_context(address_for_attempt(resolved, failures_since_ready_));
                    });
}

void redis_connection::open_context(const std::string& host) {
  ctx_ = endpoint_.is_unix() ? redisAsyncConnectUnix(endpoint_.unix_path.c_str())
                             : redisAsyncConnect(host.c_str(), endpoint_.port);
  if (ctx_ == nullptr) {
    handle_down("out of memory");
    return;
  }
  if (ctx_->err != 0) {
    const std::string why = ctx_->errstr;
    redisAsyncFree(std::exchange(ctx_, nullptr));
    handle_down(why);
    return;
  }
  ctx_->data = this;
  if (!attach_redis_to_asio(io_, ctx_, io_stats_)) {
    redisAsyncFree(std::exchange(ctx_, nullptr));
    handle_down("no socket to watch");
    return;
  }
  redisAsyncSetDisconnectCallback(ctx_, on_disconnect_cb);
  // Arms the first write wait: that is how hiredis learns the connect result.
  redisAsyncSetConnectCallback(ctx_, on_connect_cb);
}

std::string address_for_attempt(const std::vector<asio::ip::address>& resolved, std::uint64_t failures) {
  std::vector<std::string> addresses;
  for (const bool v4 : {true, false})
    for (const asio::ip::address& a : resolved) {
      if (a.is_v4() != v4) continue;
      std::string text = a.to_string();
      if (std::find(addresses.begin(), addresses.end(), text) == addresses.end()) addresses.push_back(std::move(text));
    }
  return addresses.empty() ? std::string() : addresses[failures % addresses.size()];
}

void redis_connection::abort(std::string_view why) {
  if (ctx_ == nullptr) return;
  redisAsyncContext* c = std::exchange(ctx_, nullptr);
  const bool connected = (c->c.flags & REDIS_CONNECTED) != 0;
  abort_reason_ = std::string(why);
  // Connected: hiredis calls on_disconnect_cb (now, or after the callback
  // we may be in returns), which reports. Not connected: it never will.
  redisAsyncFree(c);
  if (!connected) handle_down(why);
}

void redis_connection::on_connect_cb(const redisAsyncContext* ac, int status) {
  auto* self = static_cast<redis_connection*>(ac->data);
  if (self == nullptr || self->ctx_ != ac) return;
  if (status != REDIS_OK) {
    // hiredis frees the context when we return.
    self->ctx_ = nullptr;
    self->handle_down(ac->errstr[0] != '\0' ? ac->errstr : "connect failed");
    return;
  }
  // A Redis behind a dead network sends no FIN: the kernel gives up on it.
  if (!self->endpoint_.is_unix()) {
    const std::string refused = apply_tcp_liveness(self->ctx_->c.fd, self->options_.liveness_timeout);
    if (!refused.empty())
      self->log_->warn("redis {}: a dead network may go unnoticed for minutes ({})", self->name_, refused);
  }
  self->state_ = state::setting_up;
  self->send_setup();
}

void redis_connection::on_disconnect_cb(const redisAsyncContext* ac, int) {
  auto* self = static_cast<redis_connection*>(ac->data);
  if (self == nullptr) return;
  if (self->ctx_ == ac) self->ctx_ = nullptr;
  std::string why = std::exchange(self->abort_reason_, std::string());
  if (why.empty()) why = ac->err != 0 ? std::string(ac->errstr) : std::string("closed by the server");
  self->handle_down(why, ac->err == REDIS_ERR_EOF);
}

void redis_connection::send_setup() {
  setup_pending_ = 0;
  if (!endpoint_.password.empty()) {
    const char* argv[3];
    std::size_t len[3];
    int argc = 0;
    argv[argc] = "AUTH";
    len[argc++] = 4;
    if (!endpoint_.user.empty()) {
      argv[argc] = endpoint_.user.data();
      len[argc++] = endpoint_.user.size();
    }
    argv[argc] = endpoint_.password.data();
    len[argc++] = endpoint_.password.size();
    if (redisAsyncCommandArgv(ctx_, on_setup_reply, this, argc, argv, len) == REDIS_OK) ++setup_pending_;
  }
  if (endpoint_.db != 0) {
    const std::string db = std::to_string(endpoint_.db);
    const char* argv[2] = {"SELECT", db.c_str()};
    const std::size_t len[2] = {6, db.size()};
    if (redisAsyncCommandArgv(ctx_, on_setup_reply, this, 2, argv, len) == REDIS_OK) ++setup_pending_;
  }
  if (!endpoint_.is_unix()) {
    send_kills(*this);
    const char* argv[2] = {"CLIENT", "INFO"};
    const std::size_t len[2] = {6, 4};
    if (redisAsyncCommandArgv(ctx_, on_info_reply, this, 2, argv, len) == REDIS_OK) ++setup_pending_;
  }
  if (setup_pending_ == 0) become_ready();
}

void redis_connection::on_info_reply(redisAsyncContext*, void* reply, void* privdata) {
  auto* self = static_cast<redis_connection*>(privdata);
  if (reply == nullptr || self->state_ != state::setting_up) return;  // the context is going away
  const auto* r = static_cast<const redisReply*>(reply);
  if (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS)
    self->identity_ = parse_client_info(std::string_view(r->str, r->len));
  if (!self->identity_ && !self->ever_ready_)
    self->log_->info(
        "redis {}: no CLIENT INFO ({}): a connection a partition leaves on the server stays there "
        "until Redis drops it",
        self->name_, r->type == REDIS_REPLY_ERROR ? std::string_view(r->str, r->len) : "no identity");
  if (--self->setup_pending_ == 0) self->become_ready();
}

namespace {

// What a CLIENT KILL was about; freed by its reply callback, which hiredis
// always calls (with a null reply when the context goes away first).
struct kill_cookie {
  redis_connection* owner;
  std::uint64_t id;
};

}  // namespace

void redis_connection::remove_stale_of(redis_connection& owner) {
  if (!ready() || &owner == this) return;
  send_kills(owner);
}

void redis_connection::send_kills(redis_connection& owner) {
  for (const redis_client_identity& stale : owner.stale_) {
    // ID and ADDR together (filters are ANDed): a restarted Redis numbers
    // its clients from 1 again, and the ID alone could name another one.
    const std::string id = std::to_string(stale.id);
    const char* argv[6] = {"CLIENT", "KILL", "ID", id.c_str(), "ADDR", stale.addr.c_str()};
    const std::size_t len[6] = {6, 4, 2, id.size(), 4, stale.addr.size()};
    auto* cookie = new kill_cookie{&owner, stale.id};
    if (redisAsyncCommandArgv(ctx_, on_kill_reply, cookie, 6, argv, len) != REDIS_OK) delete cookie;
  }
}

void redis_connection::on_kill_reply(redisAsyncContext*, void* reply, void* privdata) {
  const std::unique_ptr<kill_cookie> cookie(static_cast<kill_cookie*>(privdata));
  // Null: this context is going away, and the owner may be too (a broker
  // being destroyed); the stale connection is asked about next time.
  if (reply == nullptr) return;
  redis_connection& owner = *cookie->owner;
  const auto* r = static_cast<const redisReply*>(reply);
  owner.forget_stale(cookie->id);
  if (r->type == REDIS_REPLY_INTEGER) {
    if (r->integer > 0) {
      ++owner.stale_removed_;
      owner.log_->info(
          "redis {}: removed its earlier connection (client id {}), which Redis still held after the "
          "network failed",
          owner.name_, cookie->id);
    } else {
      // Redis closed it first: bytes it retransmitted after the network came
      // back met the closed port (a reset). Said, so that every earlier
      // connection's fate is in the log.
      owner.log_->info("redis {}: its earlier connection (client id {}) was already gone from Redis", owner.name_,
                       cookie->id);
    }
    return;
  }
  if (owner.kill_refused_logged_) return;
  owner.kill_refused_logged_ = true;
  owner.log_->warn(
      "redis {}: cannot remove its earlier connection (client id {}) from Redis: {}; after a network failure its "
      "subscriptions count until Redis's tcp-keepalive drops it (allow CLIENT KILL to this user)",
      owner.name_, cookie->id,
      r->type == REDIS_REPLY_ERROR ? std::string_view(r->str, r->len) : std::string_view("unexpected reply"));
}

void redis_connection::forget_stale(std::uint64_t id) {
  std::erase_if(stale_, [id](const redis_client_identity& s) { return s.id == id; });
}

void redis_connection::on_setup_reply(redisAsyncContext*, void* reply, void* privdata) {
  auto* self = static_cast<redis_connection*>(privdata);
  if (reply == nullptr || self->state_ != state::setting_up) return;  // the context is going away
  const auto* r = static_cast<const redisReply*>(reply);
  if (r->type == REDIS_REPLY_ERROR) {
    const std::string why = "AUTH/SELECT refused: " + std::string(r->str, r->len);
    // A wrong password or db will not fix itself: say so loudly, every time.
    self->log_->error("redis {}: {}", self->name_, why);
    self->abort(why);
    return;
  }
  if (--self->setup_pending_ == 0) self->become_ready();
}

void redis_connection::become_ready() {
  state_ = state::ready;
  ++attempt_;  // disarms the connect deadline
  timer_.cancel();
  last_wait_ = std::exchange(next_wait_, std::chrono::milliseconds{0});
  if (ever_ready_) ++reconnects_;
  log_->info("redis {}: {} {}", name_, ever_ready_ ? "reconnected to" : "connected to", endpoint_.describe());
  ever_ready_ = true;
  failing_logged_ = false;
  failures_since_ready_ = 0;
  backoff_.reset();
  listener_.on_ready(*this);
}

void redis_connection::handle_down(std::string_view why, bool server_closed) {
  if (state_ == state::stopped) return;
  const bool was_ready = state_ == state::ready;
  ctx_ = nullptr;
  // A connection that was ready may hold subscriptions on the server,
  // unless the server itself closed it.
  if (was_ready && identity_ && !server_closed) {
    if (stale_.size() >= max_stale) stale_.erase(stale_.begin());
    stale_.push_back(*identity_);
  }
  identity_.reset();
  ++attempt_;
  ++failures_since_ready_;
  state_ = state::waiting;
  if (was_ready) {
    log_->warn("redis {}: connection lost ({}); reconnecting", name_, why);
    failing_logged_ = true;
  } else if (!failing_logged_) {
    log_->warn("redis {}: cannot connect to {} ({}); retrying every {}..{} ms", name_, endpoint_.describe(), why,
               options_.backoff_min.count(), options_.backoff_max.count());
    failing_logged_ = true;
  } else {
    log_->debug("redis {}: attempt failed ({})", name_, why);
  }
  schedule_retry();
  if (was_ready) listener_.on_down(*this, why);
}

void redis_connection::schedule_retry() {
  next_wait_ = backoff_.next();
  const std::uint64_t attempt = attempt_;
  timer_.expires_after(next_wait_);
  timer_.async_wait([this, attempt](const boost::system::error_code& ec) {
    if (ec || attempt != attempt_ || state_ != state::waiting) return;
    connect();
  });
}

}  // namespace fg::worker
