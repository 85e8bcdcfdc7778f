"""bench/echo_report.py on canned load-generator summaries: the columns and
ratios it prints for each set of PEERS, the uWS columns among them.
Standard library only: python3 -m unittest echo_report_test (in this directory)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

BENCH = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench"))
REPORT = os.path.join(BENCH, "echo_report.py")


def loadgen_run(workload, msg_per_s, p99_us=2000.0, cpu=80.0):
    """The fields of a framegate-loadgen --json summary that the report reads."""
    run = {
        "connections": 20, "size": 64, "window": 16, "rate_per_conn_ms": 10, "duration_s": 2,
        "offered_msg_per_s": 0.0, "msg_per_s": msg_per_s,
        "latency_us": {"p50": p99_us / 4, "p90": p99_us / 2, "p99": p99_us, "p99_9": p99_us * 2},
        "server": {"cpu_pct_of_core": cpu, "hwm_kib": 20480, "rss_per_conn_kib": 0.5, "rss_end_kib": 10240},
        "loadgen_cpu": {"pct_of_core": 50.0},
        "machine_cpu": {"other_pct_of_core": 0.0},
        "mismatches": {"total": 0}, "unanswered": 0, "errors": {"total": 0}, "backlog_at_end": 0,
        "open_at_end": 20,
    }
    if workload.startswith("rate"):
        run.update(connections=200, size=256, offered_msg_per_s=20000.0, send_lag_us={"p99": 100.0})
    return run


def run_report(raw, peers, extra_args=()):
    """Runs the report over the runs already in `raw`; returns (stdout, results JSON)."""
    out = os.path.join(raw, "echo.json")
    proc = subprocess.run([sys.executable, REPORT, "--raw", raw, "--out", out, "--peers", peers, *extra_args],
                          capture_output=True, text=True, check=True)
    with open(out) as f:
        return proc.stdout, json.load(f)


class echo_report_test(unittest.TestCase):
    def report(self, rates, extra_args=(), workload="window64", p99_us=None):
        """Runs the report over `workload` runs with these msg/s (and p99s) per peer; returns (stdout, results JSON)."""
        with tempfile.TemporaryDirectory() as raw:
            for peer, rate in rates.items():
                latency = {"p99_us": p99_us[peer]} if p99_us else {}
                with open(os.path.join(raw, f"{workload}.{peer}.json"), "w") as f:
                    json.dump(loadgen_run(workload, rate, **latency), f)
                with open(os.path.join(raw, f"{workload}.{peer}.status.json"), "w") as f:
                    json.dump({"exit_code": 0, "server_alive": True, "workers": 0}, f)
            return run_report(raw, " ".join(rates), extra_args)

    @staticmethod
    def header(stdout):
        return next(line for line in stdout.splitlines() if line.startswith("| workload | metric |"))

    @staticmethod
    def table_row(stdout, metric):
        return next(line for line in stdout.splitlines() if f"| {metric} |" in line)

    def test_without_uws_the_columns_stay_as_they_were(self):
        stdout, result = self.report({"framegate": 1_000_000, "workers": 500_000, "ws": 100_000})
        self.assertEqual(self.header(stdout), "| workload | metric | framegate | workers | ws (Node) | "
                                              "framegate/ws | workers/framegate | workers/ws |")
        self.assertIn("| 10.00x | 0.50x | 5.00x |", self.table_row(stdout, "msg/s (echoes received)"))
        self.assertNotIn("Note:", stdout)
        self.assertNotIn("uWS.js", stdout)
        self.assertEqual(result["peers"], ["framegate", "workers", "ws"])

    def test_uws_gets_a_framegate_over_uws_column_next_to_framegate_over_ws(self):
        stdout, result = self.report({"framegate": 1_000_000, "ws": 100_000, "uws": 400_000})
        self.assertEqual(self.header(stdout), "| workload | metric | framegate | ws (Node) | uWS.js (Node) | "
                                              "framegate/ws | framegate/uWS |")
        self.assertIn("| 1,000,000 | 100,000 | 400,000 | 10.00x | 2.50x |",
                      self.table_row(stdout, "msg/s (echoes received)"))
        row = next(r for r in result["rows"] if r["metric"] == "msg/s (echoes received)")
        self.assertAlmostEqual(row["ratios"]["framegate/uWS"], 2.5)
        self.assertAlmostEqual(row["ratio"], 10.0)  # the two-peer field keeps meaning framegate/ws

    def test_uws_is_one_process_without_a_gateway_cpu(self):
        stdout, _ = self.report({"framegate": 1_000_000, "uws": 400_000})
        # framegate's gateway is its whole server; uWS has no gateway to compare it with
        self.assertIn("| 80% | n/a | n/a |", self.table_row(stdout, "  gateway CPU"))
        self.assertIn("| 80% | 80% | 1.00x |", self.table_row(stdout, "server CPU"))

    def test_the_table_says_that_uws_echo_is_a_floor_and_its_fan_out_the_anchor(self):
        stdout, _ = self.report({"framegate": 1_000_000, "uws": 400_000})
        note = next(line for line in stdout.splitlines() if line.startswith("Note:"))
        self.assertIn("JavaScript once per echoed message", note)
        self.assertIn("about 0.4x native uWS", note)
        self.assertIn("a floor, not the anchor", note)
        self.assertIn("fan-out runs in C++", note)
        self.assertLess(stdout.index("Note:"), stdout.index("| workload |"))

    def test_uws_native_has_its_own_column_and_names_the_checkout_it_was_built_from(self):
        with tempfile.TemporaryDirectory() as d:
            binary = os.path.join(d, "uws-peer")
            with open(binary, "w") as f:
                f.write("not really a binary")
            with open(binary + ".version", "w") as f:
                f.write("uWebSockets v20.79.0\nuSockets v0.8.8\n")
            stdout, result = self.report({"framegate": 1_200_000, "uws": 400_000, "uws-native": 1_000_000},
                                         ("--uws-native", binary))
        self.assertTrue(self.header(stdout).endswith("| uWS (C++) | framegate/uWS | framegate/uWS native |"))
        self.assertIn("| 3.00x | 1.20x |", self.table_row(stdout, "msg/s (echoes received)"))
        self.assertIn("uWS (C++) v20.79.0;", stdout)
        self.assertEqual(result["uws_native"]["built_from"], ["uWebSockets v20.79.0", "uSockets v0.8.8"])

    def test_the_50k_open_loop_is_checked_against_native_uws_and_the_gateway_of_the_same_run(self):
        rates = {"framegate": 50_000, "workers": 50_000, "uws-native": 50_000}
        _, result = self.report(rates, workload="rate50k",
                                p99_us={"framegate": 2000.0, "workers": 5000.0, "uws-native": 2500.0})
        checks = {c["target"]: c for c in result["targets"]}
        vs_uws = checks["open loop 50k/s: gateway p99 <= native uWS p99 (same run)"]
        self.assertTrue(vs_uws["met"])
        self.assertAlmostEqual(vs_uws["value"], 0.8)
        hop = checks["open loop 50k/s: through workers p99 <= 2x the gateway's own (same run)"]
        self.assertFalse(hop["met"])
        self.assertAlmostEqual(hop["value"], 2.5)
        row = next(r for r in result["rows"] if r["workload"] == "rate50k" and r["metric"] == "latency p99")
        self.assertIn("every 10 ms", row["title"])

    def test_the_worker_path_needs_0_6x_the_gateway_at_64_bytes_and_0_5x_at_1_kib(self):
        for workload, need in (("window64", 0.6), ("window1k", 0.5)):
            label = "closed loop 64 B" if workload == "window64" else "closed loop 1 KiB"
            target = f"{label}: through workers >= {need:.1f}x the gateway-only echo msg/s"
            for workers, met in ((need * 1_000_000, True), (need * 1_000_000 - 1_000, False)):
                _, result = self.report({"framegate": 1_000_000, "workers": workers}, workload=workload)
                check = next(c for c in result["targets"] if c["target"] == target)
                self.assertEqual(check["met"], met, (workload, workers))
                self.assertAlmostEqual(check["value"], workers / 1_000_000)

    def test_the_worker_path_is_held_against_native_uws_of_the_same_run_when_it_ran(self):
        _, result = self.report({"framegate": 1_000_000, "workers": 450_000, "uws-native": 1_000_000})
        checks = {c["target"]: c for c in result["targets"]}
        check = checks["closed loop 64 B: through workers >= 0.5x native uWS msg/s (same run)"]
        self.assertFalse(check["met"])
        self.assertAlmostEqual(check["value"], 0.45)
        self.assertFalse(any("TARGETS.md" in t for t in checks))
        # 450k is over half of TARGETS.md's 2.44M on another machine: only the same run decides.
        _, result = self.report({"framegate": 1_000_000, "workers": 1_300_000})
        fallback = next(c for c in result["targets"] if "shared/TARGETS.md" in c["target"])
        self.assertIn("context only", fallback["target"])
        self.assertTrue(fallback["met"])

    def test_the_100k_open_loop_through_workers_is_held_against_native_uws_of_the_same_run(self):
        _, result = self.report({"framegate": 100_000, "workers": 100_000, "uws-native": 100_000}, workload="rate",
                                p99_us={"framegate": 2000.0, "workers": 9000.0, "uws-native": 4000.0})
        check = next(c for c in result["targets"] if c["target"] == "open loop: through workers p99 <= 2x native uWS (same run)")
        self.assertAlmostEqual(check["value"], 2.25)
        self.assertFalse(check["met"])

    def test_with_several_rounds_the_tail_checks_take_each_peers_median_p99(self):
        # One round each where a peer had a bad run: the median is not moved by it.
        p99s = {"framegate": (2.0, 9.0, 2.4), "workers": (4.0, 4.4, 30.0), "uws-native": (20.0, 1.8, 2.0)}
        with tempfile.TemporaryDirectory() as raw:
            for k, wid in enumerate(("rate50k", "rate50k-r2", "rate50k-r3")):
                for peer, values in p99s.items():
                    with open(os.path.join(raw, f"{wid}.{peer}.json"), "w") as f:
                        json.dump(loadgen_run(wid, 50_000, p99_us=values[k] * 1000), f)
                    with open(os.path.join(raw, f"{wid}.{peer}.status.json"), "w") as f:
                        json.dump({"exit_code": 0, "server_alive": wid != "rate50k-r3" or peer != "workers"}, f)
            stdout, result = run_report(raw, "framegate workers uws-native")
        checks = {c["target"]: c for c in result["targets"]}
        vs_uws = checks["open loop 50k/s: gateway p99 <= native uWS p99 (same run, median of 3 rounds)"]
        self.assertAlmostEqual(vs_uws["value"], 2.4 / 2.0)
        self.assertFalse(vs_uws["met"])
        self.assertIn("2.40 ms (median of 2.00, 9.00, 2.40) vs 2.00 ms (median of 20.00, 1.80, 2.00)",
                      vs_uws["detail"])
        hop = checks["open loop 50k/s: through workers p99 <= 2x the gateway's own (same run, median of 3 rounds)"]
        self.assertAlmostEqual(hop["value"], 4.4 / 2.4)
        self.assertTrue(hop["met"])
        self.assertEqual(result["tail_rounds"]["p99_ms"]["framegate"], [2.0, 9.0, 2.4])
        self.assertEqual(result["tail_rounds"]["median_p99_ms"]["uws-native"], 2.0)
        self.assertIn("- framegate: 2.00, 9.00, 2.40 ms; median 2.40 ms", stdout)
        # An extra round is checked like any run.
        self.assertIn("rate50k-r3 / workers: the server process died (gateway or a worker)", result["problems"])
        # The table itself stays the first round's.
        row = next(r for r in result["rows"] if r["workload"] == "rate50k" and r["metric"] == "latency p99")
        self.assertAlmostEqual(row["values"]["framegate"], 2.0)

    def test_with_several_closed_loop_rounds_the_worker_check_takes_the_median_ratio(self):
        # Each round's ratio comes from its own two runs; a round where the
        # machine slowed both alike does not move it, a round missing a peer is left out.
        rates = {"framegate": (1_000_000, 600_000, 1_200_000, 900_000),
                 "workers": (400_000, 330_000, 660_000, None),
                 "uws-native": (1_000_000, 1_000_000, 1_000_000, 1_000_000)}
        with tempfile.TemporaryDirectory() as raw:
            for k, wid in enumerate(("window1k", "window1k-r2", "window1k-r3", "window1k-r4")):
                for peer, values in rates.items():
                    if values[k] is None:
                        continue
                    with open(os.path.join(raw, f"{wid}.{peer}.json"), "w") as f:
                        json.dump(loadgen_run(wid, values[k]), f)
                    with open(os.path.join(raw, f"{wid}.{peer}.status.json"), "w") as f:
                        json.dump({"exit_code": 0, "server_alive": True}, f)
            stdout, result = run_report(raw, "framegate workers uws-native")
        checks = {c["target"]: c for c in result["targets"]}
        check = checks["closed loop 1 KiB: through workers >= 0.5x the gateway-only echo msg/s "
                       "(same run, median of 3 rounds)"]
        self.assertAlmostEqual(check["value"], 0.55)  # of 0.40, 0.55, 0.55
        self.assertTrue(check["met"])
        self.assertNotIn("closed loop 1 KiB: through workers >= 0.5x the gateway-only echo msg/s", checks)
        rounds = result["window_rounds"]["window1k"]
        self.assertEqual(rounds["msg_per_s"]["workers"], [400_000, 330_000, 660_000, None])
        self.assertEqual([round(x, 2) for x in rounds["framegate_over_uws_native"]], [1.0, 0.6, 1.2, 0.9])
        self.assertIn("- through workers / gateway: 0.400, 0.550, 0.550; median 0.550", stdout)
        vs_uws = checks["closed loop 1 KiB: through workers >= 0.5x native uWS msg/s (same run, median of 3 rounds)"]
        self.assertAlmostEqual(vs_uws["value"], 0.40)  # of 0.40, 0.33, 0.66
        self.assertFalse(vs_uws["met"])
        self.assertIn("- through workers / native uWS: 0.400, 0.330, 0.660; median 0.400", stdout)
        # The missing run is a problem of its round; the table stays the first round's.
        self.assertIn("window1k-r4 / workers: no result", result["problems"])
        row = next(r for r in result["rows"] if r["workload"] == "window1k" and r["metric"].startswith("msg/s"))
        self.assertEqual(row["values"]["workers"], 400_000)

    def test_a_run_the_hypervisor_took_the_cores_from_is_marked_disturbed(self):
        with tempfile.TemporaryDirectory() as raw:
            for peer, steal in (("framegate", 0.4), ("workers", 18.3)):
                run = loadgen_run("window1k", 500_000)
                run["machine_cpu"]["steal_pct_of_core"] = steal
                with open(os.path.join(raw, f"window1k.{peer}.json"), "w") as f:
                    json.dump(run, f)
            stdout, _ = run_report(raw, "framegate workers")
        self.assertIn("window1k / workers: DISTURBED: the hypervisor took 18.3% of a core (steal)", stdout)
        self.assertNotIn("window1k / framegate: DISTURBED", stdout)

    def test_a_missing_uws_run_is_a_problem_not_a_crash(self):
        with tempfile.TemporaryDirectory() as raw:
            with open(os.path.join(raw, "window64.framegate.json"), "w") as f:
                json.dump(loadgen_run("window64", 1_000_000), f)
            stdout, _ = run_report(raw, "framegate uws")
        self.assertIn("window64 / uws: no result", stdout)
        self.assertIn("| 1,000,000 | n/a | n/a |", self.table_row(stdout, "msg/s (echoes received)"))


if __name__ == "__main__":
    unittest.main()
