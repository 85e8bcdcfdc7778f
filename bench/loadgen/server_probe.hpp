#pragma once
// Reads a local server process's CPU time (/proc/PID/stat utime+stime) and
// memory (/proc/PID/status VmRSS, VmHWM), so that the load generator can
// sample them at the exact edges of its measured window (--server-pid).
#include <sys/types.h>

#include <optional>

namespace loadgen {

struct server_sample {
  double user_s = 0;
  double sys_s = 0;
  unsigned long rss_kib = 0;
  unsigned long hwm_kib = 0;  // peak RSS since the process started
};

std::optional<server_sample> sample_server(pid_t pid);

// Whole-machine CPU time from /proc/stat (all cores), to tell how much of the
// machine the server and the load generator left to others: on a shared
// 2-core box another process's burst shows up as a worse tail.
struct machine_sample {
  double busy_s = 0;   // user+nice+system+irq+softirq+steal, summed over cores
  double steal_s = 0;  // taken by the hypervisor
  // utime+stime+cutime+cstime summed over every process except this one and
  // the server. /proc/stat is tick-sampled and can disagree with per-process
  // figures by tens of percent on this VM, so "other processes" is computed
  // in the same per-process accounting as ours and the server's. Children's
  // times count too: a compiler that exits and is reaped moves its time into
  // its parent's cutime, so the difference of two samples still contains it.
  double others_s = 0;
};

std::optional<machine_sample> sample_machine(pid_t self, pid_t server);

}  // namespace loadgen
