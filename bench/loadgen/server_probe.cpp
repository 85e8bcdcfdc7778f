#include "server_probe.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace loadgen {

namespace {

// utime+stime+cutime+cstime of one process, in clock ticks; false if gone.
bool process_ticks(long pid, unsigned long long& ticks) {
  char path[48];
  std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return false;
  char buf[1024];
  const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* p = std::strrchr(buf, ')');  // the command name may contain spaces and ')'
  if (p == nullptr) return false;
  // Fields after ')': 3 state ... 14 utime, 15 stime, 16 cutime, 17 cstime.
  unsigned long long v[4] = {};
  if (std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                  &v[3]) != 4) {
    return false;
  }
  ticks = v[0] + v[1] + v[2] + v[3];
  return true;
}

}  // namespace

std::optional<machine_sample> sample_machine(pid_t self, pid_t server) {
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
  unsigned long long others = 0;
  if (DIR* proc = opendir("/proc")) {
    while (const dirent* e = readdir(proc)) {
      if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
      const long pid = std::strtol(e->d_name, nullptr, 10);
      if (pid == self || pid == server) continue;
      unsigned long long t = 0;
      if (process_ticks(pid, t)) others += t;
    }
    closedir(proc);
  }
  m.others_s = static_cast<double>(others) / ticks;
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
