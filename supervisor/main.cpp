// framegate: the one command that runs a whole local cluster.
//   framegate up [options]   one gateway and N workers, supervised (see `framegate up --help`)
//   framegate --help | --version
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include <boost/asio/io_context.hpp>

#include "common/logging.hpp"
#include "common/version.hpp"
#include "supervisor/cluster.hpp"
#include "supervisor/link_dir.hpp"
#include "supervisor/options.hpp"

namespace {

void print_usage(std::FILE* out) {
  std::fprintf(out,
               "framegate %s\n\n"
               "Usage:\n"
               "  framegate up [options]   start a local cluster: one gateway and N workers, supervised\n"
               "  framegate --help         this text\n"
               "  framegate --version      print the version\n\n"
               "%s",
               std::string(fg::version).c_str(), fg::supervisor::up_help().c_str());
}

// A path we are told to run must exist now, not fail later in a restart loop.
bool check_executable(const std::string& what, const std::string& path) {
  if (path.find('/') == std::string::npos || ::access(path.c_str(), X_OK) == 0) return true;
  std::fprintf(stderr, "framegate up: %s executable not found: %s (build it, or pass --%s-bin)\n", what.c_str(),
               path.c_str(), what.c_str());
  return false;
}

// The private Redis is started by name: say how to do without it if it is missing.
bool check_redis_server(const fg::supervisor::supervisor_options& opts) {
  if (!opts.private_redis()) return true;
  const std::string& bin = opts.redis_server_bin;
  bool found = false;
  if (bin.find('/') != std::string::npos) {
    found = ::access(bin.c_str(), X_OK) == 0;
  } else if (const char* path = std::getenv("PATH")) {
    std::string_view dirs = path;
    while (!found && !dirs.empty()) {
      const auto colon = dirs.find(':');
      const std::string dir(dirs.substr(0, colon));
      found = !dir.empty() && ::access((dir + "/" + bin).c_str(), X_OK) == 0;
      dirs.remove_prefix(colon == std::string_view::npos ? dirs.size() : colon + 1);
    }
  }
  if (!found)
    std::fprintf(stderr,
                 "framegate up: %s not found (install redis-server, pass --redis-server-bin, --redis URL or "
                 "--no-redis)\n",
                 bin.c_str());
  return found;
}

int run_up(const std::vector<std::string>& args) {
  const auto opts = fg::supervisor::parse_up_options(args);
  if (opts.print_config) {
    std::printf("%s", fg::supervisor::format_effective_config(opts).c_str());
    return 0;
  }
  if (!check_executable("gateway", opts.gateway_bin) || !check_executable("worker", opts.worker_bin) ||
      !check_redis_server(opts))
    return 2;
  try {
    fg::init_logging(opts.logging);
    // A closed terminal must not kill the supervisor mid-shutdown via a write.
    std::signal(SIGPIPE, SIG_IGN);
    fg::supervisor::link_dir dir(opts.link_dir);
    int code = 1;
    {
      boost::asio::io_context io;
      fg::supervisor::cluster cluster(io, opts, dir.path());
      try {
        cluster.start();
        io.run();
        code = cluster.exit_code();
      } catch (const std::exception& e) {
        // Destroying the cluster kills and reaps whatever it had started.
        fg::component_logger("supervisor")->error("{}", e.what());
      }
    }
    dir.remove();  // only after every child is gone: they may still use it
    return code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "framegate up: %s\n", e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view command = argc > 1 ? argv[1] : "";
  if (command == "up") return run_up(std::vector<std::string>(argv + 2, argv + argc));
  if (command == "--help" || command == "-h" || command == "help") {
    print_usage(stdout);
    return 0;
  }
  if (command == "--version") {
    std::printf("framegate %s\n", std::string(fg::version).c_str());
    return 0;
  }
  if (command.empty())
    std::fprintf(stderr, "framegate: missing command (try 'framegate --help')\n");
  else
    std::fprintf(stderr, "framegate: unknown command '%s' (try 'framegate --help')\n", std::string(command).c_str());
  return 2;
}
