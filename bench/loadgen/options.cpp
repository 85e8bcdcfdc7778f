#include "options.hpp"

#include <arpa/inet.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <string_view>
#include <utility>

namespace loadgen {

namespace {

bool parse_double(std::string_view s, double& out) {
  // std::from_chars for double is in libstdc++ 11+; it does not touch errno or locale.
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && ptr == s.data() + s.size() && std::isfinite(out);
}

template <typename T>
bool parse_uint(std::string_view s, T& out) {
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && ptr == s.data() + s.size();
}

// The value of one of a fixed set of names; false (out untouched) for any other.
template <typename T, std::size_t N>
bool parse_choice(std::string_view s, const std::pair<std::string_view, T> (&choices)[N], T& out) {
  for (const auto& [name, value] : choices) {
    if (s == name) {
      out = value;
      return true;
    }
  }
  return false;
}

// Only loopback targets and sources: this tool must never load anything else.
bool parse_loopback_ip(const std::string& s, in_addr& out) {
  if (inet_pton(AF_INET, s.c_str(), &out) != 1) return false;
  return (ntohl(out.s_addr) >> 24) == 127;
}

bool parse_url(const std::string& url, options& o, std::string& error) {
  constexpr std::string_view scheme = "ws://";
  if (url.rfind(scheme, 0) != 0) {
    error = "--url must start with ws:// (TLS is not supported)";
    return false;
  }
  std::string_view rest = std::string_view(url).substr(scheme.size());
  const auto slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  o.path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  const auto colon = authority.rfind(':');
  if (colon == std::string_view::npos) {
    error = "--url needs an explicit port: ws://127.0.0.1:PORT/path";
    return false;
  }
  const std::string host(authority.substr(0, colon));
  std::uint16_t port = 0;
  if (!parse_uint(authority.substr(colon + 1), port) || port == 0) {
    error = "--url has a bad port";
    return false;
  }
  in_addr addr{};
  const std::string numeric = host == "localhost" ? "127.0.0.1" : host;
  if (!parse_loopback_ip(numeric, addr)) {
    error = "--url host must be a 127.x.x.x address (loopback only)";
    return false;
  }
  o.target.sin_family = AF_INET;
  o.target.sin_port = htons(port);
  o.target.sin_addr = addr;
  o.host_header = std::string(authority);
  return true;
}

}  // namespace

const char* mode_name(mode m) {
  switch (m) {
    case mode::rate: return "rate";
    case mode::window: return "window";
    case mode::idle: return "idle";
    case mode::rooms: return "rooms";
  }
  return "?";
}

const char* usage_text() {
  return R"(framegate-loadgen: WebSocket load generator (epoll, one event loop per thread)

Usage: framegate-loadgen --url ws://127.0.0.1:PORT/path [options]

Workload
  --mode rate|window|idle|rooms
                            rate: open loop, one message per connection every
                            --rate-per-conn-ms (latency from the intended send
                            time, so a slow server cannot hide its tail);
                            window: closed loop, --window messages in flight
                            per connection; idle: connect, hold, report;
                            rooms: fan-out through the /rooms JSON protocol
  --connections N           connections to open (default 1)
  --size BYTES              payload size (default 256; >= 8 to measure latency)
  --opcode binary|text      message type (default binary; payload is ASCII)
  --payload pattern|json    after the 8-byte stamp: an 'a'..'z' cycle (default)
                            or JSON records, compressible as real traffic is
  --rate-per-conn-ms MS     rate mode interval per connection (default 10)
  --window W                window mode messages in flight (default 16)
Rooms mode (--mode rooms; --connections and --size are not used)
  --rooms R                 rooms "r0".."r<R-1>" (default 1)
  --members N               member connections, member i joins room i % R
                            (default 1000)
  --publishers P            publishers, publisher p publishes to room p % R
                            (default 1)
  --publishers-join yes|no  yes (default): publisher p is member p, so it
                            receives its own publishes; no: P extra
                            connections that join nothing
  --publish-rate N          publishes per second per publisher (default 10);
                            data {"t":<intended send ns>,"p":<p>,"s":<seq>}
  --publish-size BYTES      pad each publish's data with a JSON array of
                            records ("x":[...]) to about BYTES (default 0: none)
  --join-settle S           wait after the joins before publishing (default 1)
  --probe-pid NAME=PID      report that local process's CPU over the window
                            (repeatable)
  Exit code 1 also on duplicates, reorders, misrouted or malformed
  deliveries; losses are reported (delivered % of expected), not fatal.
Timing (each phase bounded; the run always ends)
  --duration S              measured seconds (default 10, max 3600)
  --warmup S                load before measuring (default 0)
  --drain S                 after the load, wait for the last echoes until
                            none has come for S seconds (default 5): a slow
                            server's backlog is still measured, a stalled
                            one is reported as unanswered echoes
  --drain-max S             ... and never longer than S seconds (default 60)
  --connect-rate N          new connections per second (default 5000)
  --connect-timeout S       connect phase limit (default 10 + N/connect-rate)
Compression
  --deflate                 offer permessage-deflate (RFC 7692) as browsers do
                            (client_max_window_bits), inflate what the server
                            compresses, compress sends (no context takeover)
  --deflate-threshold BYTES compress sends of at least BYTES (default 1024)
Network
  --threads N               event-loop threads (default 1)
  --source-ips A,B,...      127.x source addresses to spread connections over
Output
  --json FILE               write the summary as JSON
  --server-pid PID          also report that local server's CPU (user+sys,
                            from /proc/PID/stat) over the measured window and
                            its memory (VmRSS before/after, VmHWM)
  --no-progress             no per-second line on stderr
Exit code: 0 ok; 1 echo mismatches, unanswered echoes, a connection lost or
closed by the server mid-run, a protocol error, or no connection at all;
2 bad options. Failed connects are counted and reported, not fatal.
)";
}

std::optional<options> parse_options(int argc, char** argv, std::string& error, bool& show_help) {
  options o;
  bool have_url = false;
  show_help = false;
  for (int i = 1; i < argc; ++i) {
    std::string name = argv[i];
    std::string value;
    bool has_inline_value = false;
    if (const auto eq = name.find('='); name.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_inline_value = true;
    }
    if (name == "--help" || name == "-h") {
      show_help = true;
      return std::nullopt;
    }
    if (name == "--no-progress") {
      o.progress = false;
      continue;
    }
    if (name == "--deflate") {
      o.deflate = true;
      continue;
    }
    if (!has_inline_value) {
      if (i + 1 >= argc) {
        error = name + " needs a value";
        return std::nullopt;
      }
      value = argv[++i];
    }
    bool ok = true;
    if (name == "--url") {
      o.url = value;
      ok = parse_url(value, o, error);
      have_url = ok;
      if (!ok) return std::nullopt;
    } else if (name == "--mode") {
      static constexpr std::pair<std::string_view, mode> modes[] = {
          {"rate", mode::rate}, {"window", mode::window}, {"idle", mode::idle}, {"rooms", mode::rooms}};
      ok = parse_choice(value, modes, o.run_mode);
    } else if (name == "--connections") {
      ok = parse_uint(value, o.connections) && o.connections > 0 && o.connections <= 1'000'000;
    } else if (name == "--size") {
      ok = parse_uint(value, o.size) && o.size <= (64u << 20);
    } else if (name == "--opcode") {
      static constexpr std::pair<std::string_view, opcode> opcodes[] = {{"binary", opcode::binary},
                                                                        {"text", opcode::text}};
      ok = parse_choice(value, opcodes, o.message_opcode);
    } else if (name == "--payload") {
      static constexpr std::pair<std::string_view, bool> payloads[] = {{"pattern", false}, {"json", true}};
      ok = parse_choice(value, payloads, o.json_payload);
    } else if (name == "--duration") {
      ok = parse_double(value, o.duration_s) && o.duration_s > 0 && o.duration_s <= 3600;
    } else if (name == "--warmup") {
      ok = parse_double(value, o.warmup_s) && o.warmup_s >= 0 && o.warmup_s <= 600;
    } else if (name == "--drain") {
      ok = parse_double(value, o.drain_s) && o.drain_s >= 0 && o.drain_s <= 600;
    } else if (name == "--drain-max") {
      ok = parse_double(value, o.drain_max_s) && o.drain_max_s >= 0 && o.drain_max_s <= 600;
    } else if (name == "--threads") {
      ok = parse_uint(value, o.threads) && o.threads >= 1 && o.threads <= 256;
    } else if (name == "--source-ips") {
      std::string_view list = value;
      while (ok && !list.empty()) {
        const auto comma = list.find(',');
        in_addr a{};
        ok = parse_loopback_ip(std::string(list.substr(0, comma)), a);
        if (ok) o.source_ips.push_back(a);
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
      }
      if (!ok) {
        error = "--source-ips takes comma-separated 127.x.x.x addresses";
        return std::nullopt;
      }
    } else if (name == "--connect-rate") {
      ok = parse_double(value, o.connect_rate) && o.connect_rate > 0;
    } else if (name == "--connect-timeout") {
      ok = parse_double(value, o.connect_timeout_s) && o.connect_timeout_s > 0 && o.connect_timeout_s <= 600;
    } else if (name == "--rate-per-conn-ms") {
      ok = parse_double(value, o.rate_per_conn_ms) && o.rate_per_conn_ms >= 0.001 && o.rate_per_conn_ms <= 3'600'000;
    } else if (name == "--window") {
      ok = parse_uint(value, o.window) && o.window >= 1 && o.window <= 1'000'000;
    } else if (name == "--server-pid") {
      ok = parse_uint(value, o.server_pid) && o.server_pid > 0;
    } else if (name == "--rooms") {
      ok = parse_uint(value, o.rooms) && o.rooms >= 1 && o.rooms <= 1'000'000;
    } else if (name == "--members") {
      ok = parse_uint(value, o.members) && o.members <= 1'000'000;
    } else if (name == "--publishers") {
      ok = parse_uint(value, o.publishers) && o.publishers <= 1'000'000;
    } else if (name == "--publishers-join") {
      static constexpr std::pair<std::string_view, bool> yes_no[] = {{"yes", true}, {"no", false}};
      ok = parse_choice(value, yes_no, o.publishers_join);
    } else if (name == "--publish-rate") {
      ok = parse_double(value, o.publish_rate) && o.publish_rate >= 0.001 && o.publish_rate <= 1'000'000;
    } else if (name == "--publish-size") {
      ok = parse_uint(value, o.publish_size) && o.publish_size <= (16u << 20);
    } else if (name == "--deflate-threshold") {
      ok = parse_uint(value, o.deflate_threshold);
    } else if (name == "--join-settle") {
      ok = parse_double(value, o.join_settle_s) && o.join_settle_s >= 0 && o.join_settle_s <= 600;
    } else if (name == "--probe-pid") {
      const auto eq = value.find('=');
      int pid = 0;
      ok = eq != std::string::npos && eq > 0 && parse_uint(std::string_view(value).substr(eq + 1), pid) && pid > 0;
      if (ok) o.probe_pids.emplace_back(value.substr(0, eq), pid);
    } else if (name == "--json") {
      o.json_path = value;
    } else {
      error = "unknown option " + name + " (see --help)";
      return std::nullopt;
    }
    if (!ok) {
      error = "bad value for " + name + ": " + value;
      return std::nullopt;
    }
  }
  if (!have_url) {
    error = "--url ws://127.0.0.1:PORT/path is required";
    return std::nullopt;
  }
  o.drain_max_s = std::max(o.drain_max_s, o.drain_s);
  if (o.run_mode == mode::rooms) o.connections = o.members + (o.publishers_join ? 0 : o.publishers);
  if (o.connect_timeout_s == 0) {
    o.connect_timeout_s = std::min(600.0, 10.0 + static_cast<double>(o.connections) / o.connect_rate);
  }
  return o;
}

}  // namespace loadgen
