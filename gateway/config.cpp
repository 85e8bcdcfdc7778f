#include "gateway/config.hpp"

#include <algorithm>
#include <cctype>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <CLI/CLI.hpp>

#include "common/cli_parse.hpp"

#include "common/deflate/deflater.hpp"
#include "common/option_values.hpp"
#include "common/secret_file.hpp"
#include "gateway/net/send_batch.hpp"
#include "gateway/routing/sticky_key.hpp"
#include "gateway/ws/inflater.hpp"

namespace fg::gateway {

std::string describe_deflate(const ws::deflate_options& d) {
  if (!d.enabled) return "permessage-deflate off";
  std::string s = "permessage-deflate on: messages of " + std::to_string(d.threshold) +
                  " bytes or more compressed at level " + std::to_string(d.tuning.level) + " (memLevel " +
                  std::to_string(d.tuning.mem_level) + ", window 2^" + std::to_string(d.max_window_bits) + "); ";
  if (!d.server_takeover && !d.client_takeover) return s + "no context takeover: no zlib state per connection";
  std::size_t bound = 0;
  if (d.server_takeover) bound += deflater::memory_bound(d.max_window_bits, d.tuning.mem_level);
  if (d.client_takeover) bound += ws::inflater::memory_bound(d.max_window_bits);
  const char* which = d.server_takeover && d.client_takeover ? "both" : d.server_takeover ? "server" : "client";
  return s + "context takeover " + which + ": up to " + std::to_string((bound + 1023) / 1024) +
         " KiB of zlib state per connection that uses it";
}

std::string duration_problem(double seconds) {
  // Written so that NaN fails too.
  if (!(seconds > 0)) return "must be a number of seconds above 0";
  if (!(seconds <= max_duration_seconds)) return "must be at most 86400 seconds (1 day)";
  return {};
}

namespace {
// CLI11 check of a duration option, with the line duration_problem() gives;
// `allow_zero` for a tolerance (--jwt-leeway) where none is meaningful.
CLI::Validator duration_seconds(bool allow_zero = false) {
  return CLI::Validator(
      [allow_zero](std::string& text) -> std::string {
        double seconds = 0;
        try {
          std::size_t used = 0;
          seconds = std::stod(text, &used);
          if (used != text.size()) return "'" + text + "' is not a number of seconds";
        } catch (const std::exception&) {
          return "'" + text + "' is not a number of seconds";
        }
        if (allow_zero && seconds == 0) return {};
        const std::string problem = duration_problem(seconds);
        return problem.empty() ? problem : text + " " + problem;
      },
      allow_zero ? "SECONDS (0 allowed)" : "SECONDS");
}

void to_lower(std::string& s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
}

// A token (RFC 9110 §5.6.2), as a field name must be.
bool is_header_name(std::string_view name) {
  const auto tchar = [](unsigned char c) {
    return std::isalnum(c) != 0 ||
           std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
  };
  return !name.empty() && std::all_of(name.begin(), name.end(), tchar);
}

}  // namespace

gateway_config parse_gateway_config(int argc, char** argv) {
  gateway_config cfg;
  CLI::App app{
      "framegate-gateway: terminates WebSocket connections (RFC 6455) and hands messages on.\n"
      "Every option can also be set by the environment variable shown beside it."};
  app.get_formatter()->column_width(44);

  std::string listen = "0.0.0.0:8080";
  std::string admin = "127.0.0.1:9090";
  std::string origins, subprotocols, forward_headers, policy = "close", proxy_protocol_from, forwarded_for_from;
  double handshake_timeout = 5, close_timeout = 5, idle_ping = 30, pong_timeout = 10, pool_shed_period = 10;
  std::uint64_t max_message_size = cfg.reader.limits.max_message_size;
  std::uint32_t max_fragments = cfg.reader.limits.max_fragments;
  bool skip_utf8 = false;
  auto& deflate = cfg.handshake.deflate;
  std::string takeover = "none";

  app.add_option("--listen", listen, "Address to accept WebSocket clients on, HOST:PORT (port 0: any free port)")
      ->envname("FRAMEGATE_LISTEN")
      ->capture_default_str();
  std::string threads = "0";
  app.add_option("--threads", threads,
                 "I/O threads, each with its own event loop (0: one per core; half: half the cores, at least one, "
                 "for a host shared with the workers)")
      ->envname("FRAMEGATE_THREADS")
      ->capture_default_str()
      ->check([](const std::string& v) {
        return thread_count(v, 1) ? std::string() : std::string("a number of threads up to 1024, 0 or half");
      });
  app.add_flag("--echo", cfg.echo, "Diagnostic mode: answer every message with itself, no worker")
      ->envname("FRAMEGATE_ECHO");
  app.add_option("--max-message-size", max_message_size, "Largest message in bytes; larger ones close with 1009")
      ->envname("FRAMEGATE_MAX_MESSAGE_SIZE")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  app.add_option("--max-fragments", max_fragments, "Most frames in one message; more close with 1009")
      ->envname("FRAMEGATE_MAX_FRAGMENTS")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--max-header-bytes", cfg.max_header_bytes, "Largest handshake header block; larger gets 431")
      ->envname("FRAMEGATE_MAX_HEADER_BYTES")
      ->capture_default_str()
      ->check(CLI::Range(256, 1 << 20));
  app.add_option("--handshake-timeout", handshake_timeout, "Seconds a client has to complete the handshake")
      ->envname("FRAMEGATE_HANDSHAKE_TIMEOUT")
      ->capture_default_str()
      ->check(duration_seconds());
  app.add_option("--close-timeout", close_timeout, "Seconds to wait for the peer's close frame before dropping TCP")
      ->envname("FRAMEGATE_CLOSE_TIMEOUT")
      ->capture_default_str()
      ->check(duration_seconds());
  app.add_option("--idle-ping", idle_ping, "Seconds of client silence before the gateway pings")
      ->envname("FRAMEGATE_IDLE_PING")
      ->capture_default_str()
      ->check(duration_seconds());
  app.add_option("--pong-timeout", pong_timeout, "Seconds to wait for any frame after a ping before closing (1011)")
      ->envname("FRAMEGATE_PONG_TIMEOUT")
      ->capture_default_str()
      ->check(duration_seconds());
  app.add_option("--pool-shed-period", pool_shed_period,
                 "Seconds after which pooled buffers that sat unused all along are freed (after a burst, memory goes "
                 "back within two periods; 0: pools keep their largest size)")
      ->envname("FRAMEGATE_POOL_SHED_PERIOD")
      ->capture_default_str()
      ->check(duration_seconds(true));
  app.add_option("--origin", origins, "Comma-separated allowed Origin values (default: any); others get 403")
      ->envname("FRAMEGATE_ORIGIN");
  app.add_option("--subprotocol", subprotocols,
                 "Comma-separated supported subprotocols; the client's first supported offer is selected")
      ->envname("FRAMEGATE_SUBPROTOCOL");
  app.add_option("--max-connections", cfg.max_connections,
                 "Most client sockets, those still in their handshake included; beyond it new ones get 503")
      ->envname("FRAMEGATE_MAX_CONNECTIONS")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--max-send-queue", cfg.max_send_queue, "Bytes queued for one slow client before the policy applies")
      ->envname("FRAMEGATE_MAX_SEND_QUEUE")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 34));
  app.add_option("--send-queue-policy", policy, "At the send-queue limit: close (1008) or drop new messages")
      ->envname("FRAMEGATE_SEND_QUEUE_POLICY")
      ->capture_default_str()
      ->check(CLI::IsMember({"close", "drop"}));
  std::string rate_policy = "close";
  app.add_option("--max-connections-per-ip", cfg.max_connections_per_ip,
                 "Most sockets from one client address (IPv6: one /64); beyond it 429 (0: no cap)")
      ->envname("FRAMEGATE_MAX_CONNECTIONS_PER_IP")
      ->capture_default_str();
  app.add_option("--proxy-protocol-from", proxy_protocol_from,
                 "Comma-separated networks (CIDR) or addresses of load balancers that send a PROXY protocol header "
                 "(v1 or v2); their connections count as the client it names (per-IP limits, --sticky-key ip)")
      ->envname("FRAMEGATE_PROXY_PROTOCOL_FROM");
  app.add_option("--forwarded-for-from", forwarded_for_from,
                 "Comma-separated networks (CIDR) or addresses of HTTP load balancers and proxies that name the client "
                 "in --forwarded-for-header; their requests count as that client (per-IP limits, --sticky-key ip)")
      ->envname("FRAMEGATE_FORWARDED_FOR_FROM");
  auto* forwarded_for_header_opt =
      app.add_option("--forwarded-for-header", cfg.forwarded_for_header,
                     "The header --forwarded-for-from balancers name the client in: x-forwarded-for, x-real-ip, "
                     "forwarded (RFC 7239) or another list of addresses")
          ->envname("FRAMEGATE_FORWARDED_FOR_HEADER")
          ->capture_default_str();
  app.add_option("--handshake-rate", cfg.handshake_rate,
                 "New sockets per second from one client address; faster ones get 429 with Retry-After (0: no limit)")
      ->envname("FRAMEGATE_HANDSHAKE_RATE")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e9));
  app.add_option("--handshake-burst", cfg.handshake_burst,
                 "New sockets one client address may open at once under --handshake-rate (0: the rate, at least 1)")
      ->envname("FRAMEGATE_HANDSHAKE_BURST")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e9));
  app.add_option("--message-rate", cfg.message_rate,
                 "Messages per second one connection may send, bursts of one second's worth (0: no limit)")
      ->envname("FRAMEGATE_MESSAGE_RATE")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e9));
  app.add_option("--byte-rate", cfg.byte_rate,
                 "Payload bytes per second one connection may send, bursts of one second's worth (0: no limit)")
      ->envname("FRAMEGATE_BYTE_RATE")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e12));
  app.add_option("--rate-limit-policy", rate_policy,
                 "Past --message-rate or --byte-rate: close (1008) or drop the message (counted)")
      ->envname("FRAMEGATE_RATE_LIMIT_POLICY")
      ->capture_default_str()
      ->check(CLI::IsMember({"close", "drop"}));
  std::string io_uring = "auto";
  app.add_option("--io-uring", io_uring,
                 "Write a loop turn's clients in one system call through io_uring: auto (when the kernel allows it), "
                 "on (or refuse to start), off (one send each)")
      ->envname("FRAMEGATE_IO_URING")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "on", "off"}));
  bool no_receive_timestamps = false;
  app.add_flag("--no-receive-timestamps", no_receive_timestamps,
               "Do not ask the kernel when client data arrived (framegate_gateway_receive_wait_seconds stays empty)")
      ->envname("FRAMEGATE_NO_RECEIVE_TIMESTAMPS");
  app.add_flag("--skip-utf8-validation", skip_utf8, "Do not validate text messages (trusted clients only)")
      ->envname("FRAMEGATE_SKIP_UTF8_VALIDATION");
  auto* deflate_flag =
      app.add_flag("--deflate", deflate.enabled, "Accept permessage-deflate (RFC 7692) from clients that offer it")
          ->envname("FRAMEGATE_DEFLATE");
  app.add_option("--deflate-threshold", deflate.threshold,
                 "Messages of fewer bytes are sent uncompressed (RSV1 clear); compressing small ones costs more "
                 "CPU than it saves")
      ->envname("FRAMEGATE_DEFLATE_THRESHOLD")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{0}, std::size_t{1} << 40))
      ->needs(deflate_flag);
  app.add_option("--deflate-takeover", takeover,
                 "Context takeover: none (no zlib state held by any connection), client, server or both "
                 "(zlib state per connection, bounded by the two options below)")
      ->envname("FRAMEGATE_DEFLATE_TAKEOVER")
      ->capture_default_str()
      ->check(CLI::IsMember({"none", "client", "server", "both"}))
      ->needs(deflate_flag);
  app.add_option("--deflate-window-bits", deflate.max_window_bits,
                 "Largest LZ77 window, in bits (9..15), used to compress, and allowed to clients with client "
                 "takeover")
      ->envname("FRAMEGATE_DEFLATE_WINDOW_BITS")
      ->capture_default_str()
      ->check(CLI::Range(9, 15))
      ->needs(deflate_flag);
  app.add_option("--deflate-level", deflate.tuning.level, "zlib compression level, 1 (fastest) to 9 (smallest)")
      ->envname("FRAMEGATE_DEFLATE_LEVEL")
      ->capture_default_str()
      ->check(CLI::Range(1, 9))
      ->needs(deflate_flag);
  app.add_option("--deflate-mem-level", deflate.tuning.mem_level,
                 "zlib memLevel, 1 to 9: compression memory and speed (per connection with server takeover)")
      ->envname("FRAMEGATE_DEFLATE_MEM_LEVEL")
      ->capture_default_str()
      ->check(CLI::Range(1, 9))
      ->needs(deflate_flag);
  app.add_option("--link-dir", cfg.link_dir,
                 "Directory of the worker link sockets (link-<thread>.sock); workers connect there")
      ->envname("FRAMEGATE_LINK_DIR")
      ->capture_default_str();
  app.add_option("--sticky-key", cfg.sticky_key,
                 "What a connection's worker is chosen by: conn, ip, user (the token's sub), header:NAME, "
                 "query:NAME or cookie:NAME")
      ->envname("FRAMEGATE_STICKY_KEY")
      ->capture_default_str();
  app.add_option("--forward-headers", forward_headers,
                 "Comma-separated request headers passed to workers (Origin and Cookie always are)")
      ->envname("FRAMEGATE_FORWARD_HEADERS");
  app.add_option("--credit-window", cfg.credit_window,
                 "Messages a worker may have unacknowledged before its clients' reads pause")
      ->envname("FRAMEGATE_CREDIT_WINDOW")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1u << 20));
  app.add_option("--credit-bytes", cfg.credit_bytes,
                 "Bytes a worker may have unacknowledged before its clients' reads pause")
      ->envname("FRAMEGATE_CREDIT_BYTES")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{4096}, std::size_t{1} << 34));
  app.add_option("--link-sndbuf", cfg.link_sndbuf,
                 "SO_SNDBUF of each worker link socket in bytes; workers take the same option (0: kernel default)")
      ->envname("FRAMEGATE_LINK_SNDBUF")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 30));
  double link_ping = 1;
  app.add_option("--link-ping", link_ping,
                 "Seconds between health pings of every worker link (their round trip is a metric; 0: none)")
      ->envname("FRAMEGATE_LINK_PING")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  double link_timeout = 3;
  app.add_option("--link-timeout", link_timeout,
                 "Seconds a worker link may stay silent (no pong, no envelope) before the worker is treated as "
                 "dead: its connections move to the other workers (0: never; must exceed --link-ping)")
      ->envname("FRAMEGATE_LINK_TIMEOUT")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  auto* admin_opt =
      app.add_option("--admin", admin,
                     "Admin HTTP listener (/healthz, /readyz, /metrics, POST /api/publish), HOST:PORT (port 0: any "
                     "free port; off: none)")
          ->envname("FRAMEGATE_ADMIN")
          ->capture_default_str();
  auto* api_token_opt = app.add_option("--api-token", cfg.api_token,
                                       "Bearer token that POST /api/publish requires (unset: the publish API is "
                                       "disabled); visible in ps: prefer --api-token-file")
                            ->envname("FRAMEGATE_API_TOKEN");
  std::string api_token_file;
  auto* api_token_file_opt =
      app.add_option("--api-token-file", api_token_file,
                     "File holding the bearer token of POST /api/publish (one trailing newline ignored)")
          ->envname("FRAMEGATE_API_TOKEN_FILE");
  auto& jwt = cfg.jwt_sources;
  app.add_option("--jwt-secret-file", jwt.secret_file,
                 "File holding the HMAC secret (32 bytes or more) that HS256/HS384/HS512 tokens are verified with; "
                 "reloaded on SIGHUP")
      ->envname("FRAMEGATE_JWT_SECRET_FILE");
  app.add_option("--jwt-public-key-file", jwt.public_key_file,
                 "PEM public key (RSA 2048+ for RS256, EC P-256 for ES256, Ed25519 for EdDSA) tokens are verified "
                 "with; reloaded on SIGHUP")
      ->envname("FRAMEGATE_JWT_PUBLIC_KEY_FILE");
  app.add_option("--jwt-jwks-file", jwt.jwks_file,
                 "JWKS file (RSA, EC P-256, OKP Ed25519 keys, chosen by the token's kid) tokens are verified with; "
                 "reloaded on SIGHUP")
      ->envname("FRAMEGATE_JWT_JWKS_FILE");
  app.add_option("--jwt-issuer", cfg.jwt.issuer, "Tokens must carry this iss (unset: not checked)")
      ->envname("FRAMEGATE_JWT_ISSUER");
  app.add_option("--jwt-audience", cfg.jwt.audience,
                 "Tokens must carry this aud, alone or in a list (unset: not checked)")
      ->envname("FRAMEGATE_JWT_AUDIENCE");
  double jwt_leeway = static_cast<double>(cfg.jwt.leeway_s);
  app.add_option("--jwt-leeway", jwt_leeway,
                 "Seconds of clock skew allowed on a token's exp and nbf (whole seconds; also delays the 4001 close)")
      ->envname("FRAMEGATE_JWT_LEEWAY")
      ->capture_default_str()
      ->check(duration_seconds(true));
  app.add_flag("--allow-anonymous", cfg.allow_anonymous,
               "With a --jwt-* key: let requests without a token in, with no user (a bad token is still refused)")
      ->envname("FRAMEGATE_ALLOW_ANONYMOUS");
  app.add_option("--static-dir", cfg.static_dir,
                 "Answer plain HTTP GET/HEAD (no Upgrade) on the client listener with files of this directory "
                 "(unset: 426)")
      ->envname("FRAMEGATE_STATIC_DIR")
      ->check(CLI::ExistingDirectory);
  app.add_option("--rcvbuf", cfg.rcvbuf, "SO_RCVBUF of client sockets in bytes (0: kernel default)")
      ->envname("FRAMEGATE_RCVBUF")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--sndbuf", cfg.sndbuf, "SO_SNDBUF of client sockets in bytes (0: kernel default)")
      ->envname("FRAMEGATE_SNDBUF")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  add_logging_options(app, cfg.logging);

  parse_or_exit(app, "framegate-gateway", [&] {
    app.parse(argc, argv);
    cfg.listen = parse_host_port(listen);
    cfg.admin = parse_optional_host_port(admin, "--admin");
    cfg.admin_explicit = admin_opt->count() > 0;
    const auto sticky = parse_sticky_key_spec(cfg.sticky_key);
    if (sticky.from == sticky_key_spec::source::user && !cfg.jwt_sources.any())
      throw std::invalid_argument(
          "--sticky-key user needs a token key: --jwt-secret-file, --jwt-public-key-file or "
          "--jwt-jwks-file");
    if (cfg.allow_anonymous && !cfg.jwt_sources.any())
      throw std::invalid_argument(
          "--allow-anonymous needs a token key: --jwt-secret-file, --jwt-public-key-file or "
          "--jwt-jwks-file");
    if (cfg.jwt_sources.any()) cfg.jwt_keys = auth::load_keys(cfg.jwt_sources);
    cfg.jwt.leeway_s = static_cast<std::int64_t>(jwt_leeway);
    // A silence is only a sign of a hang if pings ask for an answer more often.
    if (link_timeout > 0 && (link_ping <= 0 || link_ping >= link_timeout))
      throw std::invalid_argument("--link-timeout (" + std::to_string(link_timeout) +
                                  " s) needs --link-ping above 0 and below it (" + std::to_string(link_ping) + " s)");
    try {
      cfg.proxy_protocol_from = trusted_networks::parse(proxy_protocol_from);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("--proxy-protocol-from: ") + e.what());
    }
    try {
      cfg.forwarded_for_from = trusted_networks::parse(forwarded_for_from);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("--forwarded-for-from: ") + e.what());
    }
    to_lower(cfg.forwarded_for_header);
    if (!is_header_name(cfg.forwarded_for_header))
      throw std::invalid_argument("--forwarded-for-header: '" + cfg.forwarded_for_header + "' is not a header name");
    // Read only from the listed balancers: named alone, the header would be
    // ignored without a word, and the operator believe per-IP limits see
    // the clients behind the balancer.
    if (forwarded_for_header_opt->count() > 0 && cfg.forwarded_for_from.empty())
      throw std::invalid_argument("--forwarded-for-header (" + cfg.forwarded_for_header +
                                  ") is read only from --forwarded-for-from's balancers, and none is listed: "
                                  "list them, or drop the header option");
    if (api_token_file_opt->count() > 0) {
      if (api_token_opt->count() > 0)
        throw std::invalid_argument("--api-token and --api-token-file (or their variables) both given: keep one");
      cfg.api_token = read_secret_file(api_token_file, "--api-token-file");
    }
  });

  cfg.threads = *thread_count(threads, std::thread::hardware_concurrency());
  cfg.reader.limits.max_message_size = max_message_size;
  cfg.reader.limits.max_fragments = max_fragments;
  cfg.reader.validate_utf8 = !skip_utf8;
  cfg.receive_timestamps = !no_receive_timestamps;
  cfg.io_uring = io_uring == "on"    ? io_uring_mode::on
                 : io_uring == "off" ? io_uring_mode::off
                                     : io_uring_mode::automatic;
  if (cfg.io_uring == io_uring_mode::on) {
    if (const std::string problem = send_batch::probe(); !problem.empty())
      throw std::invalid_argument("--io-uring on: " + problem);
  }
  cfg.handshake.allowed_origins = split_list(origins);
  cfg.handshake.subprotocols = split_list(subprotocols);
  cfg.forward_headers = split_list(forward_headers);
  std::for_each(cfg.forward_headers.begin(), cfg.forward_headers.end(), to_lower);
  // A header the sticky key is read from must be kept with the connection.
  if (const auto spec = parse_sticky_key_spec(cfg.sticky_key);
      spec.from == sticky_key_spec::source::header &&
      std::find(cfg.forward_headers.begin(), cfg.forward_headers.end(), spec.name) == cfg.forward_headers.end())
    cfg.forward_headers.push_back(spec.name);
  cfg.handshake_timeout = seconds_to_ms(handshake_timeout);
  cfg.close_timeout = seconds_to_ms(close_timeout);
  cfg.idle_ping = seconds_to_ms(idle_ping);
  cfg.pong_timeout = seconds_to_ms(pong_timeout);
  cfg.pool_shed_period = seconds_to_ms(pool_shed_period);
  cfg.link_ping = seconds_to_ms(link_ping);
  cfg.link_timeout = seconds_to_ms(link_timeout);
  cfg.send_queue_policy = policy == "drop" ? overflow_policy::drop : overflow_policy::close;
  cfg.rate_limit_policy = rate_policy == "drop" ? overflow_policy::drop : overflow_policy::close;
  if (cfg.handshake_burst == 0) cfg.handshake_burst = std::max(1.0, cfg.handshake_rate);
  deflate.server_takeover = takeover == "server" || takeover == "both";
  deflate.client_takeover = takeover == "client" || takeover == "both";
  return cfg;
}

}  // namespace fg::gateway
