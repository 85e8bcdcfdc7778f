// Every gateway option in one struct: limits, timeouts and policies.
// Filled from the command line and FRAMEGATE_* environment variables.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/endpoint.hpp"
#include "common/link/link_dir_trust.hpp"
#include "common/link/link_socket.hpp"
#include "common/logging.hpp"
#include "gateway/auth/key_set.hpp"
#include "gateway/auth/verifier.hpp"
#include "gateway/http/handshake.hpp"
#include "gateway/net/trusted_networks.hpp"
#include "gateway/ws/message_reader.hpp"

namespace fg::gateway {

enum class overflow_policy { close, drop };
// --io-uring: a loop turn's client writes in one system call (send_batch).
// auto: when the kernel allows it; on: or refuse to start; off: a send() each.
enum class io_uring_mode : std::uint8_t { automatic, on, off };

struct gateway_config {
  host_port listen{"0.0.0.0", 8080};
  unsigned threads = 0;  // 0: one per core
  bool echo = false;
  // SO_TIMESTAMPNS on client sockets: how long data waited for the loop
  // (framegate_gateway_receive_wait_seconds). Costs a clock read per packet.
  bool receive_timestamps = true;
  io_uring_mode io_uring = io_uring_mode::automatic;

  ws::reader_options reader{};  // max message size, max fragments, UTF-8
  std::size_t max_header_bytes = 8192;
  http::handshake_options handshake{};  // origins, subprotocols, permessage-deflate
  [[nodiscard]] const ws::deflate_options& deflate() const noexcept { return handshake.deflate; }

  std::chrono::milliseconds handshake_timeout{5000};
  std::chrono::milliseconds close_timeout{5000};
  std::chrono::milliseconds idle_ping{30000};
  std::chrono::milliseconds pong_timeout{10000};
  // Each thread's pools free what sat unused for a whole period (0: never).
  std::chrono::milliseconds pool_shed_period{10000};

  std::size_t max_connections = 100000;
  std::size_t max_send_queue = 1024 * 1024;
  overflow_policy send_queue_policy = overflow_policy::close;

  // Client rate limits, all off by default (0): what is sane depends on the
  // deployment (many clients share one address behind NAT or a proxy, and
  // message rates are an app's business). Bursts are one second's worth.
  std::uint32_t max_connections_per_ip = 0;  // sockets per address (IPv6: per /64)
  double handshake_rate = 0;                 // new sockets per second per address
  double handshake_burst = 0;                // 0: the rate (at least 1)
  double message_rate = 0;                   // data messages per second per connection
  double byte_rate = 0;                      // payload bytes per second per connection
  overflow_policy rate_limit_policy = overflow_policy::close;
  // Load balancers that put a PROXY protocol header (v1 or v2) before each
  // client's bytes: their connections count as the client the header
  // names (per-IP limits, --sticky-key ip, the workers' remote address).
  // A connection from them without one is refused; others send none.
  trusted_networks proxy_protocol_from;
  // HTTP balancers (and proxies in front of them) that name the client in
  // a request header: from them, the per-IP limits wait for the request,
  // and the client is the nearest hop the header names outside these
  // networks (gateway/net/forwarded_client.hpp).
  trusted_networks forwarded_for_from;
  std::string forwarded_for_header = "x-forwarded-for";  // lower-case; "forwarded" is RFC 7239's

  // Worker mode: where the per-thread link sockets live, how connections
  // are pinned to workers, and what the workers are told about them.
  std::string link_dir = link::default_link_dir();  // $XDG_RUNTIME_DIR/framegate, else /tmp/framegate-<uid>
  std::string sticky_key = "conn";                  // conn | ip | user | header:NAME | query:NAME | cookie:NAME
  std::vector<std::string> forward_headers;         // lower-case; origin and cookie always go
  std::uint32_t credit_window = 1024;               // unacknowledged messages per link
  std::size_t credit_bytes = 8 * 1024 * 1024;       // unacknowledged bytes per link
  int link_sndbuf = link::default_link_sndbuf;      // SO_SNDBUF of each link socket (0: kernel default)
  std::chrono::milliseconds link_ping{1000};        // health ping of every worker link (0: none)
  std::chrono::milliseconds link_timeout{3000};     // a link silent this long is cut off as dead (0: never)

  // Admin HTTP listener (health, readiness, publish API) on its own thread.
  // `admin_explicit`: set by flag or environment, so failing to bind it is
  // fatal; the default address only warns (another gateway may hold it).
  std::optional<host_port> admin = host_port{"127.0.0.1", 9090};  // nullopt: "off"
  bool admin_explicit = false;
  std::string api_token;  // empty: POST /api/publish answers 403

  // JWT at the handshake (docs/AUTH.md). Without a key source, tokens are
  // ignored and every handshake is anonymous, as before.
  auth::key_sources jwt_sources;
  auth::verifier_options jwt{};
  bool allow_anonymous = false;  // with a key: a request without a token is let in, with no user
  // Loaded from jwt_sources at start-up (then replaced on SIGHUP by the
  // server); null when no key source is configured.
  std::shared_ptr<const auth::key_set> jwt_keys;

  // Plain HTTP GET/HEAD (no Upgrade) on the client listener is answered from
  // this directory (the browser demo); empty: such requests get 426.
  std::string static_dir;

  int rcvbuf = 0;  // 0: kernel default
  int sndbuf = 0;

  logging_options logging;
};

// One line for the start-up log: what --deflate* amount to, and the zlib
// memory each connection may hold with context takeover.
std::string describe_deflate(const ws::deflate_options& d);

// Timeouts and intervals are given in seconds and held as 64-bit
// milliseconds. Above a day a value is far more likely a unit mistake (a
// value meant as milliseconds) than an intent, so it is refused at start-up.
inline constexpr double max_duration_seconds = 86400;
// Empty if `seconds` is a valid duration (above zero, at most a day);
// otherwise one line that says why not.
std::string duration_problem(double seconds);

// Parses argv (and the environment). On --help prints usage and exits 0;
// on a bad option prints one line to stderr and exits 2 (config_error_exit).
gateway_config parse_gateway_config(int argc, char** argv);

}  // namespace fg::gateway
