#pragma once
// What the rooms and storm modes report about their measured window besides
// their own figures: the latency percentiles in milliseconds, this process's
// CPU, and the CPU of the --probe-pid processes, in the text summary and in
// the --json document.
#include <sys/types.h>

#include <cstdio>
#include <string>
#include <vector>

#include "histogram.hpp"
#include "json_file.hpp"
#include "options.hpp"
#include "process.hpp"
#include "server_probe.hpp"

namespace loadgen {

// The --probe-pid processes, sampled at the window's edges. A process that
// is gone by a sample is reported as not sampled.
class probe_set {
 public:
  explicit probe_set(const options& opts);
  void sample(bool at_end);
  // One "cpu NAME ..." line per process; window_s turns seconds into % of a core.
  void print(std::FILE* out, double window_s) const;
  // {"loadgen": {...}, NAME: {...} or null, ...}: the object under "cpu".
  json cpu_json(const cpu_usage& loadgen_window, const cpu_usage& loadgen_run, double window_s) const;

 private:
  struct probe {
    std::string name;
    pid_t pid = 0;
    bool ok = true;
    server_sample start, end;
  };
  std::vector<probe> probes_;
};

// {"count", "min", "mean", "p50", "p90", "p99", "p99_9", "max"} of h (ns) in ms.
json latency_ms_json(const histogram& h);

// "  latency ms    p50=... (n=...)" and "  cpu loadgen   ..." lines.
void print_latency_ms(std::FILE* out, const histogram& h);
void print_loadgen_cpu(std::FILE* out, const cpu_usage& window, double window_s);

// Writes doc to --json when given; the exit code: 1 if failed or the file
// cannot be written, else 0.
int finish_run(const options& opts, const json& doc, bool failed);

}  // namespace loadgen
