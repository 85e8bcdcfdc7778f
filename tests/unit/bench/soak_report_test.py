"""bench/soak_report.py on canned soaks: the fitted growth and its verdict per
process, the per-connection figure, and the exit code when a load failed, a
process died or connections stayed counted open. Standard library only:
python3 -m unittest soak_report_test (in this directory)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

BENCH = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench"))
REPORT = os.path.join(BENCH, "soak_report.py")

LOAD_START = 1_000_000.0
DURATION = 100.0
SETTLE = 20.0


def soak_samples(gateway_kib_at, worker_kib_at=lambda t: 20_000, connections_after=0, worker_dies_at=None):
    """Samples every 5 s from 10 s before the load to 15 s after it: RSS of a
    gateway and a worker as functions of the time into the load."""
    out = []
    for i in range(-2, int(DURATION / 5) + 4):
        t = i * 5.0
        loaded = 0 <= t <= DURATION
        worker = None if worker_dies_at is not None and t >= worker_dies_at else worker_kib_at(t)
        out.append({"t": LOAD_START + t, "rss_kib": {"gateway": gateway_kib_at(t), "worker0": worker},
                    "connections": 1000 if loaded else (connections_after if t > DURATION else 0)})
    return out


def loads(idle_error=""):
    idle = {"mode": "idle", "established": 900, "duration_s": DURATION, "failed": bool(idle_error),
            "errors": {"total": 1 if idle_error else 0, "first_error": idle_error}}
    rooms = {"mode": "rooms", "delivery": {"publishes": 1000, "delivered": 100_000, "delivered_pct": 100.0},
             "errors": {"total": 0}}
    echo = {"received_total": 5000, "size": 4096, "latency_us": {"p99": 1500.0}, "errors": {"total": 0}}
    churn = {"mode": "storm", "run": {"handshakes": 10_000}, "errors": {"total": 0}, "failed": False}
    return {"idle": idle, "rooms": rooms, "echo": echo, "churn-0": churn, "churn-1": churn}


class soak_report_test(unittest.TestCase):
    def report(self, samples, load_files):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "samples.jsonl"), "w") as f:
                f.writelines(json.dumps(s) + "\n" for s in samples)
            for name, body in load_files.items():
                with open(os.path.join(d, f"{name}.json"), "w") as f:
                    json.dump(body, f)
            out = os.path.join(d, "soak.json")
            proc = subprocess.run([sys.executable, REPORT, "--work", d, "--settle", str(SETTLE), "--load-start",
                                   str(LOAD_START), "--duration", str(DURATION), "--idle", "900", "--churns", "2",
                                   "--workers", "1", "--gateway-threads", "1", "--json", out],
                                  capture_output=True, text=True)
            with open(out) as f:
                result = json.load(f)
        return proc, result

    @staticmethod
    def ramp_then(level_kib, slope_kib_per_s):
        """10 MiB before the load, a ramp to level_kib in the first 10 s, then a line."""
        return lambda t: 10_240 if t < 0 else (level_kib if t < 10 else level_kib + slope_kib_per_s * (t - 10))

    def test_a_flat_soak_passes_and_reports_per_connection_memory(self):
        proc, result = self.report(soak_samples(self.ramp_then(11_240, 0)), loads())
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual(result["processes"]["gateway"]["verdict"], "flat")
        self.assertEqual(result["processes"]["gateway"]["growth_kib"], 0)
        # (11,240 - 10,240) KiB over 1,000 connections; the ramp is not growth.
        self.assertAlmostEqual(result["gateway_kib_per_connection"], 1.0)
        self.assertEqual(result["churned_connections"], 20_000)
        self.assertRegex(proc.stdout, r"\| gateway \| 10\.0 \| 11\.0 \| 11\.0 \| 11\.0 \| \+0 KiB \| \+0\.0 KiB/min \| flat \|")

    def test_a_steady_rise_after_settling_grows(self):
        # 20 KiB/s for the 80 measured seconds: 1,600 KiB, above 1 MiB and 1% of 11 MiB.
        proc, result = self.report(soak_samples(self.ramp_then(11_240, 20)), loads())
        gateway = result["processes"]["gateway"]
        self.assertEqual(gateway["verdict"], "grows")
        self.assertAlmostEqual(gateway["growth_kib"], 1600, delta=1)
        self.assertAlmostEqual(gateway["slope_kib_per_min"], 1200, delta=0.1)
        self.assertEqual(result["processes"]["worker0"]["verdict"], "flat")
        # Growth alone is a finding, not a failure.
        self.assertEqual(proc.returncode, 0)

    def test_a_rise_within_the_tolerance_is_flat(self):
        # 10 KiB/s: 800 KiB over the measured seconds, under 1 MiB.
        _, result = self.report(soak_samples(self.ramp_then(11_240, 10)), loads())
        self.assertEqual(result["processes"]["gateway"]["verdict"], "flat")

    def test_a_process_that_died_fails(self):
        proc, result = self.report(soak_samples(self.ramp_then(11_240, 0), worker_dies_at=50), loads())
        self.assertEqual(proc.returncode, 1)
        self.assertEqual(result["processes"]["worker0"]["verdict"], "died")
        self.assertIn("worker0 died during the soak", proc.stdout)

    def test_connections_left_open_fail(self):
        proc, result = self.report(soak_samples(self.ramp_then(11_240, 0), connections_after=3), loads())
        self.assertEqual(proc.returncode, 1)
        self.assertIn("3 connections still counted open after the load", result["problems"])

    def test_a_failed_load_fails_with_its_first_error(self):
        proc, result = self.report(soak_samples(self.ramp_then(11_240, 0)), loads(idle_error="closed by server: 1011"))
        self.assertEqual(proc.returncode, 1)
        self.assertIn("| idle | 900 connections held 100 s | failed: closed by server: 1011 |", proc.stdout)
        self.assertEqual(result["problems"], ["the idle load failed: closed by server: 1011"])


if __name__ == "__main__":
    unittest.main()
