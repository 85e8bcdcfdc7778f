#pragma once
// What a run needs from its own process, whatever the mode: signals that
// stop it cleanly, enough file descriptors, and its CPU time.
#include <sys/resource.h>

namespace loadgen {

// SIGPIPE ignored (a vanished server must be an error count, not a dead
// process); SIGINT and SIGTERM only set stop_signalled().
void install_signal_handlers();
bool stop_signalled() noexcept;

// Each connection needs a descriptor: raises the soft limit to the hard one.
// Returns the soft limit then, or 0 if it cannot be read.
rlim_t raise_nofile_limit();

struct cpu_usage {
  double user_s = 0;
  double sys_s = 0;
  double total() const { return user_s + sys_s; }
};

cpu_usage process_cpu();  // all threads of the process
inline cpu_usage operator-(const cpu_usage& a, const cpu_usage& b) { return {a.user_s - b.user_s, a.sys_s - b.sys_s}; }

}  // namespace loadgen
