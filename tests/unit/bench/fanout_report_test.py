"""bench/fanout_report.py on canned rooms-mode runs: the ratio lines it
prints against the Node cluster and the uWS peers, and the CPU table.
Standard library only: python3 -m unittest fanout_report_test (in this directory)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

BENCH = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench"))
REPORT = os.path.join(BENCH, "fanout_report.py")


def rooms_run(server, delivered_per_s, p50, p99, cpu):
    """One run as run_fanout.sh leaves it: the loadgen's rooms JSON, annotated."""
    return {
        "workload": "1room-1m", "server": server, "variant": "", "failed": False, "server_alive": True,
        "disturbed": False, "load_before": 0.2,
        "window": {"deliveries_per_s": delivered_per_s}, "offered_deliveries_per_s": 1_000_000,
        "delivery": {"delivered_pct": 100.0, "undelivered": 0, "duplicates": 0, "holes": 0, "reorders": 0,
                     "misrouted": 0, "malformed": 0, "server_errors": 0, "unexpected": 0, "with_offset": 0},
        "latency_ms": {"p50": p50, "p99": p99, "p99_9": p99 * 1.5, "max": p99 * 2},
        "cpu": {name: {"pct": pct} for name, pct in cpu.items()},
    }


class fanout_report_test(unittest.TestCase):
    def report(self, *runs):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for i, run in enumerate(runs):
                paths.append(os.path.join(d, f"run{i}.json"))
                with open(paths[-1], "w") as f:
                    json.dump(run, f)
            proc = subprocess.run([sys.executable, REPORT, "--out", os.path.join(d, "fanout.json"), *paths],
                                  capture_output=True, text=True, check=True)
        return proc.stdout

    framegate = rooms_run("framegate", 990_000, 10.0, 60.0,
                          {"gateway": 60.0, "worker0": 30.0, "worker1": 30.0, "redis": 20.0, "loadgen": 50.0})
    node = rooms_run("node", 99_000, 6900.0, 9000.0, {"primary": 5.0, "worker0": 100.0, "worker1": 100.0})
    uws = rooms_run("uws", 1_000_000, 8.0, 30.0, {"server": 70.0, "loadgen": 90.0})
    uws_native = rooms_run("uws-native", 1_000_000, 5.0, 24.0, {"server": 65.0, "loadgen": 90.0})

    def line(self, stdout, server):
        return next(line for line in stdout.splitlines() if f"| {server} |" in line)

    def test_without_uws_only_the_node_ratio(self):
        stdout = self.report(self.framegate, self.node)
        self.assertIn("| 1room-1m | **framegate / node** | **10.00x** | | | **150.0x lower** |", stdout)
        self.assertNotIn("uWS", stdout)

    def test_uws_rows_and_the_framegate_over_uws_ratios(self):
        stdout = self.report(self.framegate, self.node, self.uws)
        self.assertIn("| 1room-1m | uws | 1.00M | 100.0% | 8.00 ms | 30 ms |", stdout)
        # delivered/s, then p50 and p99, framegate over uWS
        self.assertIn("| 1room-1m | **framegate / uWS** | **0.99x** | | **1.25x** | **2.00x** |", stdout)
        self.assertIn("**framegate / node**", stdout)

    def test_uws_native_gets_its_own_ratio_line(self):
        stdout = self.report(self.framegate, self.uws, self.uws_native)
        self.assertIn("| 1room-1m | **framegate / uWS native** | **0.99x** | | **2.00x** | **2.50x** |", stdout)

    def test_each_framegate_variant_gets_its_own_uws_ratio(self):
        # The first variant's ratio once stood for every variant: a slow
        # first run (history0 here) hid the default's figure.
        history0 = dict(self.framegate, variant="history0",
                        latency_ms={"p50": 20.0, "p99": 120.0, "p99_9": 180.0, "max": 240.0})
        history100 = dict(self.framegate, variant="history100")
        stdout = self.report(history0, history100, self.uws_native)
        self.assertIn("| 1room-1m | **framegate-history0 / uWS native** | **0.99x** | | **4.00x** | **5.00x** |",
                      stdout)
        self.assertIn("| 1room-1m | **framegate-history100 / uWS native** | **0.99x** | | **2.00x** | **2.50x** |",
                      stdout)

    def test_the_tables_say_that_uws_fan_out_runs_in_cpp(self):
        stdout = self.report(self.framegate, self.uws)
        note = next(line for line in stdout.splitlines() if line.startswith("Note:"))
        self.assertIn("C++ pub/sub", note)
        self.assertIn("a floor", note)

    def test_a_uws_peer_is_one_process_counted_as_the_server(self):
        stdout = self.report(self.framegate, self.uws)
        cpu_lines = stdout[stdout.index("CPU over the measured window"):]
        self.assertIn("| 1room-1m | uws | 70% | - | 0% | 90% | 160% |", cpu_lines)

    def test_the_gateway_write_counters_become_messages_per_send_and_slices_cut(self):
        counted = dict(self.framegate, gateway_writes={"messages_sent": 15_000_000, "socket_writes": 1_800_000,
                                                       "write_slices": 40_000, "write_slices_cut": 39_000})
        stdout = self.report(counted, self.uws_native)
        self.assertIn("| 1room-1m | framegate | 8.33 | 98% |", stdout)
        self.assertNotIn("| 1room-1m | uws-native | ", stdout[stdout.index("client writes"):],
                         "the peers have no such counters")

    def test_no_write_table_without_the_counters(self):
        stdout = self.report(self.framegate, dict(self.framegate, server="framegate", gateway_writes={}))
        self.assertNotIn("client writes", stdout)


if __name__ == "__main__":
    unittest.main()
