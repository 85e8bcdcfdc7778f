#include "server_probe.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace loadgen {

std::optional<machine_sample> sample_machine() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) || cpu != "cpu") {
    return std::nullopt;
  }
  const auto ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  machine_sample m;
  m.busy_s = static_cast<double>(user + nice + system + irq + softirq + steal) / ticks;
  m.steal_s = static_cast<double>(steal) / ticks;
  return m;
}

std::optional<server_sample> sample_server(pid_t pid) {
  server_sample s;
  {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!stat || !std::getline(stat, line)) return std::nullopt;
    // The command name (field 2) may contain spaces: parse after its ')'.
    const auto close_paren = line.rfind(')');
    if (close_paren == std::string::npos) return std::nullopt;
    std::istringstream rest(line.substr(close_paren + 2));
    std::string field;
    unsigned long utime = 0, stime = 0;
    // After ')' come fields 3.. ; utime is field 14, stime field 15.
    for (int i = 3; i <= 15 && rest >> field; ++i) {
      if (i == 14) utime = std::stoul(field);
      if (i == 15) stime = std::stoul(field);
    }
    const auto ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    s.user_s = static_cast<double>(utime) / ticks;
    s.sys_s = static_cast<double>(stime) / ticks;
  }
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    unsigned long v = 0;
    if (std::sscanf(line.c_str(), "VmRSS: %lu kB", &v) == 1)
      s.rss_kib = v;
    else if (std::sscanf(line.c_str(), "VmHWM: %lu kB", &v) == 1)
      s.hwm_kib = v;
  }
  return s;
}

}  // namespace loadgen
