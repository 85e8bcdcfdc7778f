#pragma once
// The end-of-run summary: a human-readable block on stdout and a JSON file
// that bench/run_echo.sh reads.
#include <cstdio>
#include <string>

#include "json_file.hpp"
#include "options.hpp"
#include "process.hpp"
#include "server_probe.hpp"
#include "stats.hpp"

namespace loadgen {

struct run_summary {
  const options* opts = nullptr;
  worker_result totals;
  double measured_s = 0;  // length of the measured window actually run
  cpu_usage cpu_window;   // this process, during the measured window
  cpu_usage cpu_run;      // this process, whole run
  double wall_s = 0;      // whole run
  bool interrupted = false;
  // --server-pid: samples before connecting, at the window's start and end, and after the run.
  bool have_machine = false;
  machine_sample machine_measure_start, machine_measure_end;
  double machine_busy_s() const { return machine_measure_end.busy_s - machine_measure_start.busy_s; }
  double others_s() const { return machine_measure_end.others_s - machine_measure_start.others_s; }
  bool have_server = false;
  server_sample server_before, server_measure_start, server_measure_end, server_after;

  double server_cpu_s() const {
    return (server_measure_end.user_s + server_measure_end.sys_s) -
           (server_measure_start.user_s + server_measure_start.sys_s);
  }
  // Server memory that the open connections cost, per connection.
  double server_rss_per_conn_kib() const;

  std::uint64_t mismatches() const {
    return totals.mismatched_length + totals.mismatched_opcode + totals.mismatched_payload + totals.unexpected_echoes;
  }
  // Non-zero exit: a correctness problem, or nothing to measure.
  bool failed() const;
};

void print_summary(std::FILE* out, const run_summary& s);
// Sets the error_counts fields in `object`, in their declaration order.
void put_error_counts(json& object, const error_counts& errors);

// The summary as the JSON object of --json (bench/*_report.py read its keys).
json summary_json(const run_summary& s);
bool write_json(const std::string& path, const run_summary& s, std::string& error);

}  // namespace loadgen
