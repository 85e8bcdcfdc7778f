#include "process.hpp"

#include <csignal>

namespace loadgen {

namespace {

volatile std::sig_atomic_t g_signalled = 0;
extern "C" void on_signal(int) { g_signalled = 1; }

}  // namespace

void install_signal_handlers() {
  std::signal(SIGPIPE, SIG_IGN);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool stop_signalled() noexcept { return g_signalled != 0; }

rlim_t raise_nofile_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
  }
  return rl.rlim_cur;
}

cpu_usage process_cpu() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto secs = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; };
  return {secs(ru.ru_utime), secs(ru.ru_stime)};
}

}  // namespace loadgen
