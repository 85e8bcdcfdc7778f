#include "supervisor/options.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/cli_parse.hpp"
#include "common/version.hpp"

#include "common/endpoint.hpp"
#include "common/option_values.hpp"
#include "common/redact.hpp"
#include "common/secret_file.hpp"
#include "supervisor/config_file.hpp"
#include "supervisor/implied_options.hpp"

namespace fg::supervisor {

namespace {

constexpr const char* passthrough_help =
    "Pass-through: every option not listed above (--name value, --name=value, or a bare --name\n"
    "meaning true) goes to the gateway AND every worker as the environment variable\n"
    "FRAMEGATE_<NAME> (upper-cased, dashes to underscores); each child reads the FRAMEGATE_*\n"
    "variables it knows and ignores the rest. Example:\n"
    "  framegate up --max-message-size 65536 --slow-ms 10\n"
    "A --config file takes the same names (without dashes), pass-through ones included.\n"
    "Precedence: flag, then environment, then config file, then default.";

// Pass-through options that hold a secret (--api-token): never printed.
bool is_secret_option(std::string_view name) {
  if (name.ends_with("-file")) return false;
  for (const std::string_view word : {"token", "password", "secret"})
    if (name.find(word) != std::string_view::npos) return true;
  return false;
}

// The directory holding this executable: the children are built next to it.
std::string own_directory() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

struct up_parser {
  supervisor_options opts;
  CLI::Option* static_dir = nullptr;
  CLI::Option* threads = nullptr;
  CLI::App app{
      "framegate up: starts a local framegate cluster (one gateway, N workers), restarts what\n"
      "crashes, and stops all of it cleanly on Ctrl-C / SIGTERM.\n"
      "Every option can also be set by the environment variable shown beside it.",
      "framegate up"};

  up_parser() {
    app.get_formatter()->column_width(44);
    app.footer(passthrough_help);
    // Known here so that `framegate up --version` is not passed through and run.
    app.set_version_flag("--version", "framegate " + std::string(fg::version));
    app.add_option("--listen", opts.listen, "Where the gateway accepts WebSocket clients, HOST:PORT")
        ->envname("FRAMEGATE_LISTEN")
        ->capture_default_str();
    app.add_option("--workers", opts.workers, "Worker processes (default: one per core)")
        ->envname("FRAMEGATE_WORKERS")
        ->check(CLI::Range(1u, 1024u));
    threads = app.add_option("--threads", opts.gateway_threads,
                             "The gateway's I/O threads (0: one per core; default: half the cores, at least one, "
                             "since the workers share the host)")
                  ->envname("FRAMEGATE_THREADS")
                  ->check(CLI::Range(0u, 1024u));
    app.add_option("--link-dir", opts.link_dir,
                   "Directory of the gateway<->worker Unix sockets (default: a fresh private one, removed at exit)")
        ->envname("FRAMEGATE_LINK_DIR");
    app.add_option("--config", opts.config_file, "File of 'name = value' lines; flags and environment override it")
        ->envname("FRAMEGATE_CONFIG")
        ->check(CLI::ExistingFile);
    app.add_flag("--print-config", opts.print_config, "Print the effective configuration and exit")
        ->envname("FRAMEGATE_PRINT_CONFIG");
    app.add_option("--stop-timeout", opts.stop_timeout_s, "Seconds each child has to exit after SIGTERM before SIGKILL")
        ->envname("FRAMEGATE_STOP_TIMEOUT")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app.add_option("--start-timeout", opts.start_timeout_s,
                   "Seconds the gateway has to print 'listening on HOST:PORT' before start-up fails")
        ->envname("FRAMEGATE_START_TIMEOUT")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app.add_option("--gateway-bin", opts.gateway_bin, "Gateway executable (default: framegate-gateway beside this one)")
        ->envname("FRAMEGATE_GATEWAY_BIN");
    app.add_option("--worker-bin", opts.worker_bin, "Worker executable (default: framegate-worker beside this one)")
        ->envname("FRAMEGATE_WORKER_BIN");
    auto* redis = app.add_option("--redis", opts.redis,
                                 "Redis URL for the workers' broker (default: a private redis-server in the run "
                                 "directory)")
                      ->envname("FRAMEGATE_REDIS");
    auto* redis_cluster =
        app.add_option("--redis-cluster", opts.redis_cluster,
                       "Redis Cluster seed nodes HOST:PORT[,HOST:PORT...] for the workers' broker (sharded pub/sub), "
                       "instead of --redis")
            ->envname("FRAMEGATE_REDIS_CLUSTER")
            ->excludes(redis);
    app.add_option("--redis-password-file", opts.redis_password_file,
                   "File holding the password of --redis or --redis-cluster, passed on to the workers (by name, not on "
                   "a command "
                   "line); the URL then holds none")
        ->envname("FRAMEGATE_REDIS_PASSWORD_FILE");
    app.add_flag("--no-redis", opts.no_redis, "No Redis: rooms span only the workers of this gateway (through its hub)")
        ->envname("FRAMEGATE_NO_REDIS")
        ->excludes(redis)
        ->excludes(redis_cluster);
    app.add_option("--redis-server-bin", opts.redis_server_bin,
                   "redis-server executable for the private Redis (a bare name is looked up in PATH)")
        ->envname("FRAMEGATE_REDIS_SERVER_BIN")
        ->capture_default_str();
    static_dir = app.add_option("--static-dir", opts.static_dir,
                                "Directory the gateway serves plain HTTP GETs from (default: the bundled demo)")
                     ->envname("FRAMEGATE_STATIC_DIR");
    app.add_flag("--no-demo", opts.no_demo, "Do not serve the bundled browser demo (plain HTTP GETs get 426)")
        ->envname("FRAMEGATE_NO_DEMO");
    add_logging_options(app, opts.logging, " (children get it too)");
    app.add_option("--worker-admin", opts.worker_admin,
                   "Admin listener (/healthz, /readyz, /metrics) of worker 1, HOST:PORT; worker i gets PORT+i-1 "
                   "(port 0: any free port; off: none)")
        ->envname("FRAMEGATE_WORKER_ADMIN")
        ->capture_default_str();
  }

  option_kind kind_of(std::string_view name) {
    const CLI::Option* opt = app.get_option_no_throw("--" + std::string(name));
    if (opt == nullptr) return option_kind::unknown;
    // A flag expects no value (its type size is still 1 in CLI11 2.1).
    return opt->get_expected_max() == 0 ? option_kind::flag : option_kind::takes_value;
  }

  // File entries fill only what neither a flag nor the environment has set
  // (CLI11 counts both as results), so the precedence stays flag > env > file.
  void apply_config_file(const passthrough_map& from_flags) {
    for (const auto& entry : read_config_file(opts.config_file)) {
      if (entry.name == "config" || entry.name == "help" || entry.name == "version")
        throw std::runtime_error(opts.config_file + ":" + std::to_string(entry.line) + ": '" + entry.name +
                                 "' cannot be set in a config file");
      if (CLI::Option* opt = app.get_option_no_throw("--" + entry.name)) {
        if (opt->count() == 0) {
          opt->add_result(entry.value);
          opt->run_callback();
        }
      } else if (!from_flags.contains(entry.name)) {
        const char* env = std::getenv(env_name_for(entry.name).c_str());
        opts.passthrough[entry.name] = env != nullptr ? env : entry.value;
      }
    }
  }

  void resolve_defaults() {
    try {
      parse_host_port(opts.listen);
    } catch (const std::exception& e) {
      throw std::invalid_argument(std::string("--listen: ") + e.what());
    }
    if (opts.workers == 0) opts.workers = std::max(1u, std::thread::hardware_concurrency());
    // A gateway thread per core competes with the workers for the cores:
    // on 2 cores, 1 thread instead of 2 halved the fan-out's p99 and cut
    // the 50k/s echo's p99 through the workers from 9-50 ms to 2-4 ms
    // (docs/BENCHMARKS.md, twelfth step).
    opts.gateway_threads_default = threads->count() == 0;
    if (opts.gateway_threads_default) opts.gateway_threads = half_the_cores(std::thread::hardware_concurrency());
    if (const auto admin = parse_optional_host_port(opts.worker_admin, "--worker-admin");
        admin && admin->port != 0 && admin->port + opts.workers - 1 > 65535)
      throw std::invalid_argument("--worker-admin: ports " + std::to_string(admin->port) + "+" +
                                  std::to_string(opts.workers) + " workers run past 65535");
    if (!opts.redis_password_file.empty()) {
      if (opts.redis.empty() && opts.redis_cluster.empty())
        throw std::invalid_argument(
            "--redis-password-file: needs --redis or --redis-cluster (the private redis-server has no password)");
      // Read once here, so a missing file stops us before any child starts.
      (void)read_secret_file(opts.redis_password_file, "--redis-password-file");
    }
    const auto dir = own_directory();
    if (opts.gateway_bin.empty()) opts.gateway_bin = dir + "/framegate-gateway";
    if (opts.worker_bin.empty()) opts.worker_bin = dir + "/framegate-worker";
    opts.static_dir_given = static_dir->count() > 0;
    if (!opts.static_dir_given && !opts.no_demo) opts.static_dir = find_demo_dir(dir);
    (void)imply_publish_deflate(opts);
  }
};

}  // namespace

std::string supervisor_options::worker_admin_for(unsigned index) const {
  const auto admin = parse_optional_host_port(worker_admin, "--worker-admin");
  if (!admin) return "off";
  const unsigned port = admin->port == 0 ? 0 : admin->port + index - 1;
  const bool v6 = admin->host.find(':') != std::string::npos;
  return (v6 ? "[" + admin->host + "]" : admin->host) + ":" + std::to_string(port);
}

std::chrono::milliseconds supervisor_options::stop_timeout() const { return seconds_to_ms(stop_timeout_s); }
std::chrono::milliseconds supervisor_options::start_timeout() const { return seconds_to_ms(start_timeout_s); }

std::string find_demo_dir(const std::string& bin_dir) {
  const std::filesystem::path bin(bin_dir);
  std::vector<std::filesystem::path> candidates{bin / ".." / ".." / "deploy" / "demo",
                                                bin / ".." / "share" / "framegate" / "demo"};
#ifdef FRAMEGATE_SOURCE_DIR
  candidates.push_back(std::filesystem::path(FRAMEGATE_SOURCE_DIR) / "deploy" / "demo");
#endif
  for (const auto& dir : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(dir / "index.html", ec)) {
      const auto canonical = std::filesystem::canonical(dir, ec);
      return ec ? dir.lexically_normal().string() : canonical.string();
    }
  }
  return {};
}

std::string up_help() { return up_parser{}.app.help(); }

supervisor_options parse_up_options(const std::vector<std::string>& args) {
  up_parser parser;
  parse_or_exit(parser.app, "framegate up", [&] {
    auto split = split_passthrough(args, [&](std::string_view name) { return parser.kind_of(name); });
    // CLI11 wants the arguments reversed when given as a vector.
    std::vector<std::string> reversed(split.own.rbegin(), split.own.rend());
    parser.app.parse(reversed);
    parser.opts.passthrough = split.passthrough;
    if (!parser.opts.config_file.empty()) parser.apply_config_file(split.passthrough);
    parser.resolve_defaults();
  });
  return parser.opts;
}

std::string format_effective_config(const supervisor_options& opts) {
  std::ostringstream out;
  out << "# framegate up: effective configuration\n";
  if (!opts.config_file.empty()) out << "# from config file " << opts.config_file << "\n";
  out << "listen = " << opts.listen << "\n";
  out << "workers = " << opts.workers << "\n";
  if (opts.gateway_threads_default) out << "# threads: half the cores (the workers share the host)\n";
  out << "threads = " << opts.gateway_threads << "\n";
  if (opts.link_dir.empty())
    out << "# link-dir: a fresh private directory, created at start and removed at exit\n";
  else
    out << "link-dir = " << opts.link_dir << "\n";
  out << "stop-timeout = " << opts.stop_timeout_s << "\n";
  out << "start-timeout = " << opts.start_timeout_s << "\n";
  out << "gateway-bin = " << opts.gateway_bin << "\n";
  out << "worker-bin = " << opts.worker_bin << "\n";
  out << "log-level = " << opts.logging.level << "\n";
  out << "log-format = " << opts.logging.format << "\n";
  out << "worker-admin = " << opts.worker_admin << "\n";
  if (opts.static_dir_given)
    out << "static-dir = " << opts.static_dir << "\n";
  else if (opts.no_demo)
    out << "no-demo = true\n";
  else if (!opts.static_dir.empty())
    out << "# static-dir: the bundled demo\nstatic-dir = " << opts.static_dir << "\n";
  else
    out << "# static-dir: none (the bundled demo was not found)\n";
  if (opts.private_redis()) {
    out << "# redis: a private redis-server in the run directory\nredis-server-bin = " << opts.redis_server_bin << "\n";
  } else if (opts.no_redis) {
    out << "no-redis = true\n";
  } else if (!opts.redis_cluster.empty()) {
    out << "redis-cluster = " << opts.redis_cluster << "\n";
    if (!opts.redis_password_file.empty()) out << "redis-password-file = " << opts.redis_password_file << "\n";
  } else {
    const auto shown = redact_url(opts.redis);
    if (shown != opts.redis) out << "# the password is not printed: keep it in a file for --redis-password-file\n";
    out << "redis = " << shown << "\n";
    if (!opts.redis_password_file.empty()) out << "redis-password-file = " << opts.redis_password_file << "\n";
  }
  if (!opts.passthrough.empty()) out << "# passed through to the gateway and the workers as FRAMEGATE_*\n";
  if (opts.publish_deflate_implied())
    out << "# publish-deflate: implied by deflate with the private Redis or the hub (room messages compressed once, at "
           "their publisher); shown, not set, so that a file saved from this implies it again only where it "
           "applies\n";
  for (const auto& [name, value] : opts.passthrough) {
    if (opts.implied.contains(name))
      out << "# " << name << " = " << value << "\n";
    else if (is_secret_option(name))
      out << "# " << name << ": not printed (a secret; the children take it from a file too: " << name << "-file)\n";
    else
      out << name << " = " << value << "\n";
  }
  return out.str();
}

}  // namespace fg::supervisor
