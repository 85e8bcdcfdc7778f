#include "options.hpp"

#include <arpa/inet.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <string_view>

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
  }
  return "?";
}

const char* usage_text() {
  return R"(framegate-loadgen: WebSocket load generator (epoll, one event loop per thread)

Usage: framegate-loadgen --url ws://127.0.0.1:PORT/path [options]

Workload
  --mode rate|window|idle   rate: open loop, one message per connection every
                            --rate-per-conn-ms (latency from the intended send
                            time, so a slow server cannot hide its tail);
                            window: closed loop, --window messages in flight
                            per connection; idle: connect, hold, report
  --connections N           connections to open (default 1)
  --size BYTES              payload size (default 256; >= 8 to measure latency)
  --opcode binary|text      message type (default binary; payload is ASCII)
  --rate-per-conn-ms MS     rate mode interval per connection (default 10)
  --window W                window mode messages in flight (default 16)
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
      if (value == "rate")
        o.run_mode = mode::rate;
      else if (value == "window")
        o.run_mode = mode::window;
      else if (value == "idle")
        o.run_mode = mode::idle;
      else
        ok = false;
    } else if (name == "--connections") {
      ok = parse_uint(value, o.connections) && o.connections > 0 && o.connections <= 1'000'000;
    } else if (name == "--size") {
      ok = parse_uint(value, o.size) && o.size <= (64u << 20);
    } else if (name == "--opcode") {
      if (value == "binary")
        o.message_opcode = opcode::binary;
      else if (value == "text")
        o.message_opcode = opcode::text;
      else
        ok = false;
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
  if (o.connect_timeout_s == 0) {
    o.connect_timeout_s = std::min(600.0, 10.0 + static_cast<double>(o.connections) / o.connect_rate);
  }
  return o;
}

}  // namespace loadgen
