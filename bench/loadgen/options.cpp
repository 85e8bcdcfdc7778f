#include "options.hpp"

#include <arpa/inet.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>
#include <type_traits>
#include <utility>

#include <CLI/CLI.hpp>

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

// Only loopback sources: this tool must never load anything else.
bool parse_loopback_ip(const std::string& s, in_addr& out) {
  if (inet_pton(AF_INET, s.c_str(), &out) != 1) return false;
  return (ntohl(out.s_addr) >> 24) == 127;
}

// Targets: loopback, or 198.18.0.0/15 (RFC 2544, reserved for benchmarks),
// the addresses of deploy/multihost's simulated hosts on this machine.
bool parse_target_ip(const std::string& s, in_addr& out) {
  if (inet_pton(AF_INET, s.c_str(), &out) != 1) return false;
  const std::uint32_t a = ntohl(out.s_addr);
  return (a >> 24) == 127 || (a >> 17) == (0xC6120000u >> 17);
}

bool parse_one_url(const std::string& url, options& o, std::string& error) {
  constexpr std::string_view scheme = "ws://";
  if (url.rfind(scheme, 0) != 0) {
    error = "--url must start with ws:// (TLS is not supported)";
    return false;
  }
  std::string_view rest = std::string_view(url).substr(scheme.size());
  const auto slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  const std::string path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (!o.endpoints.empty() && path != o.path) {
    error = "--url: every URL must have the same path";
    return false;
  }
  o.path = path;
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
  if (!parse_target_ip(numeric, addr)) {
    error = "--url host must be a 127.x.x.x (loopback) or 198.18.0.0/15 (benchmark network) address";
    return false;
  }
  options::endpoint e;
  e.addr.sin_family = AF_INET;
  e.addr.sin_port = htons(port);
  e.addr.sin_addr = addr;
  e.host_header = std::string(authority);
  o.endpoints.push_back(std::move(e));
  return true;
}

// One URL or several separated by commas (a URL of this tool has no comma).
bool parse_url(const std::string& urls, options& o, std::string& error) {
  o.endpoints.clear();
  std::size_t start = 0;
  for (;;) {
    const auto comma = urls.find(',', start);
    if (!parse_one_url(urls.substr(start, comma == std::string::npos ? std::string::npos : comma - start), o, error))
      return false;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  o.target = o.endpoints.front().addr;
  o.host_header = o.endpoints.front().host_header;
  return true;
}

// A decimal whole number in [lo, hi], rewritten in canonical form before
// CLI11 converts it: CLI11 2.1 reads with strtoull base 0, so "010" would be
// octal and "-1" a huge unsigned.
template <typename T>
CLI::Validator whole(T lo, T hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        T v{};
        if (!parse_uint(s, v) || v < lo || v > hi)
          return "expected a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + s;
        s = std::to_string(v);
        return {};
      },
      "");
}

// A finite decimal number in [lo, hi], or in (lo, hi] when above_lo.
CLI::Validator real(double lo, double hi, bool above_lo = false) {
  return CLI::Validator(
      [lo, hi, above_lo](std::string& s) -> std::string {
        double v = 0;
        if (!parse_double(s, v) || v < lo || (above_lo && v == lo) || v > hi) {
          std::string range = (above_lo ? "(" : "[") + std::to_string(lo) + ", ";
          range += hi == std::numeric_limits<double>::max() ? "inf)" : std::to_string(hi) + "]";
          return "expected a number in " + range + ", got " + s;
        }
        return {};
      },
      "");
}

// An option taking one of `choices`, shown as "a|b|c" in the help.
template <typename T, std::size_t N>
CLI::Option* add_choice(CLI::App& app, const std::string& name, T& out,
                        const std::pair<std::string_view, T> (&choices)[N], const std::string& help) {
  std::string names;
  for (const auto& choice : choices) names += (names.empty() ? "" : "|") + std::string(choice.first);
  return app
      .add_option_function<std::string>(
          name,
          [&out, &choices, name, names](const std::string& value) {
            if (!parse_choice(value, choices, out))
              throw CLI::ValidationError(name, "expected " + names + ", got " + value);
          },
          help)
      ->type_name(names);
}

constexpr std::pair<std::string_view, mode> mode_choices[] = {{"rate", mode::rate},
                                                              {"window", mode::window},
                                                              {"idle", mode::idle},
                                                              {"rooms", mode::rooms},
                                                              {"storm", mode::storm}};
constexpr std::pair<std::string_view, opcode> opcode_choices[] = {{"binary", opcode::binary}, {"text", opcode::text}};
constexpr std::pair<std::string_view, bool> payload_choices[] = {{"pattern", false}, {"json", true}};
constexpr std::pair<std::string_view, bool> yes_no[] = {{"yes", true}, {"no", false}};

constexpr const char* footer_text =
    R"(In rooms mode exit code 1 also on duplicates, reorders, misrouted or malformed
deliveries; losses are reported (delivered % of expected), not fatal.
Exit code: 0 ok; 1 echo mismatches, unanswered echoes, a connection lost or
closed by the server mid-run, a protocol error, or no connection at all;
2 bad options. Failed connects are counted and reported, not fatal.)";

// The CLI11 definition of every option, bound to `opts`; finish() turns the
// textual ones into addresses and fills the derived values.
struct option_parser {
  options opts;
  std::vector<std::string> source_ips;
  std::vector<std::string> probe_pids;
  std::string token, token_file;
  CLI::App app{"framegate-loadgen: WebSocket load generator (epoll, one event loop per thread)", "framegate-loadgen"};

  option_parser() {
    app.get_formatter()->column_width(34);
    app.footer(footer_text);
    // As before CLI11: a repeated option's last value wins (the lists below append).
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    auto& o = opts;
    app.add_option("--url", o.url,
                   "the target, loopback or 198.18.0.0/15 only; TLS is not supported. Several URLs "
                   "separated by commas (same path): connection i uses URL (i + i / rooms) mod URLs")
        ->required()
        ->type_name("ws://127.0.0.1:PORT/path");

    // Each group heading applies to the options added after it.
    app.option_defaults()->group("Workload");
    add_choice(app, "--mode", o.run_mode, mode_choices,
               "rate: open loop, one message per connection every\n"
               "--rate-per-conn-ms (latency from the intended send\n"
               "time, so a slow server cannot hide its tail);\n"
               "window: closed loop, --window messages in flight\n"
               "per connection; idle: connect, hold, report;\n"
               "rooms: fan-out through the /rooms JSON protocol;\n"
               "storm: --connections clients each connect, upgrade,\n"
               "close and connect again (handshakes per second)");
    add_whole(o.connections, "--connections", "N", 1, 1'000'000, "connections to open (default 1)");
    add_whole(o.size, "--size", "BYTES", 0, 64u << 20, "payload size (default 256; >= 8 to measure latency)");
    add_choice(app, "--opcode", o.message_opcode, opcode_choices, "message type (default binary; payload is ASCII)");
    add_choice(app, "--payload", o.json_payload, payload_choices,
               "after the 8-byte stamp: an 'a'..'z' cycle (default)\n"
               "or JSON records, compressible as real traffic is");
    add_real(o.rate_per_conn_ms, "--rate-per-conn-ms", "MS", real(0.001, 3'600'000),
             "rate mode interval per connection (default 10)");
    add_whole(o.window, "--window", "W", 1, 1'000'000, "window mode messages in flight (default 16)");

    app.option_defaults()->group("Rooms mode (--mode rooms; --connections and --size are not used)");
    add_whole(o.rooms, "--rooms", "R", 1, 1'000'000, "rooms \"r0\"..\"r<R-1>\" (default 1)");
    add_whole(o.members, "--members", "N", 0, 1'000'000,
              "member connections, member i joins room i % R\n(default 1000)");
    add_whole(o.publishers, "--publishers", "P", 0, 1'000'000,
              "publishers, publisher p publishes to room p % R\n(default 1)");
    add_choice(app, "--publishers-join", o.publishers_join, yes_no,
               "yes (default): publisher p is member p, so it\n"
               "receives its own publishes; no: P extra\n"
               "connections that join nothing");
    add_real(o.publish_rate, "--publish-rate", "N", real(0.001, 1'000'000),
             "publishes per second per publisher (default 10);\n"
             "data {\"t\":<intended send ns>,\"p\":<p>,\"s\":<seq>}");
    add_whole(o.publish_size, "--publish-size", "BYTES", 0, 16u << 20,
              "pad each publish's data with a JSON array of\n"
              "records (\"x\":[...]) to about BYTES (default 0: none)");
    add_real(o.join_settle_s, "--join-settle", "S", real(0, 600), "wait after the joins before publishing (default 1)");
    add_list(probe_pids, "--probe-pid", "NAME=PID", "report that local process's CPU over the window\n(repeatable)");

    app.option_defaults()->group("Tokens (any mode)");
    app.add_option("--token", token, "send ?token=T on every upgrade request")->type_name("T");
    app.add_option("--token-file", token_file,
                   "one token per line ('#' comments), used in turn by\n"
                   "the connects of all connections")
        ->type_name("FILE")
        ->excludes("--token");

    app.option_defaults()->group("Timing (each phase bounded; the run always ends)");
    add_real(o.duration_s, "--duration", "S", real(0, 3600, true), "measured seconds (default 10, max 3600)");
    add_real(o.warmup_s, "--warmup", "S", real(0, 600), "load before measuring (default 0)");
    add_real(o.drain_s, "--drain", "S", real(0, 600),
             "after the load, wait for the last echoes until\n"
             "none has come for S seconds (default 5): a slow\n"
             "server's backlog is still measured, a stalled\n"
             "one is reported as unanswered echoes");
    add_real(o.drain_max_s, "--drain-max", "S", real(0, 600), "... and never longer than S seconds (default 60)");
    add_real(o.connect_rate, "--connect-rate", "N", real(0, std::numeric_limits<double>::max(), true),
             "new connections per second (default 5000)");
    add_real(o.connect_timeout_s, "--connect-timeout", "S", real(0, 600, true),
             "connect phase limit (default 10 + N/connect-rate)");

    app.option_defaults()->group("Compression");
    app.add_flag("--deflate", o.deflate,
                 "offer permessage-deflate (RFC 7692) as browsers do\n"
                 "(client_max_window_bits), inflate what the server\n"
                 "compresses, compress sends (no context takeover)");
    add_whole(o.deflate_threshold, "--deflate-threshold", "BYTES", 0, std::numeric_limits<std::size_t>::max(),
              "compress sends of at least BYTES (default 1024)");

    app.option_defaults()->group("Network");
    add_whole(o.threads, "--threads", "N", 1, 256, "event-loop threads (default 1)");
    add_list(source_ips, "--source-ips", "A,B,...", "127.x source addresses to spread connections over")
        ->delimiter(',');

    app.option_defaults()->group("Output");
    app.add_option("--json", o.json_path, "write the summary as JSON")->type_name("FILE");
    add_whole(o.server_pid, "--server-pid", "PID", 1, std::numeric_limits<int>::max(),
              "also report that local server's CPU (user+sys,\n"
              "from /proc/PID/stat) over the measured window and\n"
              "its memory (VmRSS before/after, VmHWM)");
    app.add_flag_callback(
        "--no-progress", [this] { opts.progress = false; }, "no per-second line on stderr");
  }

  template <typename T>
  void add_whole(T& out, const std::string& name, const std::string& type, std::type_identity_t<T> lo,
                 std::type_identity_t<T> hi, const std::string& help) {
    app.add_option(name, out, help)->type_name(type)->transform(whole<T>(lo, hi));
  }
  void add_real(double& out, const std::string& name, const std::string& type, const CLI::Validator& range,
                const std::string& help) {
    app.add_option(name, out, help)->type_name(type)->check(range);
  }
  // One value per occurrence; every occurrence appends.
  CLI::Option* add_list(std::vector<std::string>& out, const std::string& name, const std::string& type,
                        const std::string& help) {
    return app.add_option(name, out, help)
        ->type_name(type)
        ->expected(1)
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  }

  void finish() {
    auto& o = opts;
    std::string error;
    if (!parse_url(o.url, o, error)) throw CLI::ValidationError(error);
    for (const auto& ip : source_ips) {
      in_addr a{};
      if (!parse_loopback_ip(ip, a))
        throw CLI::ValidationError("--source-ips takes comma-separated 127.x.x.x addresses");
      o.source_ips.push_back(a);
    }
    for (const auto& value : probe_pids) {
      const auto eq = value.find('=');
      int pid = 0;
      if (eq == std::string::npos || eq == 0 || !parse_uint(std::string_view(value).substr(eq + 1), pid) || pid <= 0)
        throw CLI::ValidationError("--probe-pid", "expected NAME=PID, got " + value);
      o.probe_pids.emplace_back(value.substr(0, eq), pid);
    }
    std::vector<std::string> tokens;
    if (!token.empty()) tokens.push_back(token);
    if (!token_file.empty()) {
      std::ifstream in(token_file, std::ios::binary);
      std::stringstream text;
      if (!in || !(text << in.rdbuf())) throw CLI::ValidationError("--token-file", "cannot read " + token_file);
      tokens = parse_token_lines(text.str());
      if (tokens.empty()) throw CLI::ValidationError("--token-file", token_file + " holds no token");
    }
    o.targets = token_targets(o.path, tokens);
    o.token_count = tokens.size();
    o.drain_max_s = std::max(o.drain_max_s, o.drain_s);
    if (o.run_mode == mode::rooms) o.connections = o.members + (o.publishers_join ? 0 : o.publishers);
    if (o.connect_timeout_s == 0) {
      o.connect_timeout_s = std::min(600.0, 10.0 + static_cast<double>(o.connections) / o.connect_rate);
    }
  }
};

}  // namespace

const char* mode_name(mode m) {
  switch (m) {
    case mode::rate: return "rate";
    case mode::window: return "window";
    case mode::idle: return "idle";
    case mode::rooms: return "rooms";
    case mode::storm: return "storm";
  }
  return "?";
}

std::vector<std::string> parse_token_lines(std::string_view text) {
  std::vector<std::string> tokens;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (!line.empty() && line.front() != '#') tokens.emplace_back(line);
  }
  return tokens;
}

std::vector<std::string> token_targets(const std::string& path, const std::vector<std::string>& tokens) {
  if (tokens.empty()) return {path};
  const char* joint = path.find('?') == std::string::npos ? "?token=" : "&token=";
  std::vector<std::string> targets;
  targets.reserve(tokens.size());
  for (const auto& t : tokens) targets.push_back(path + joint + t);
  return targets;
}

std::string usage_text() { return option_parser{}.app.help(); }

options parse_options(int argc, const char* const* argv) {
  option_parser parser;
  parser.app.parse(argc, argv);
  parser.finish();
  return parser.opts;
}

}  // namespace loadgen
