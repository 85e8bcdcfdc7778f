"""bench/run_soak.sh end to end, briefly: a real `framegate up` cluster with
its own redis-server under the soak's four loads for a few seconds. The run
must pass its own checks (no connection lost, no duplicate, nothing left
counted open, no process died) and its results must hold a sampled RSS for
every process and the loads' counts. Needs redis-server;
FRAMEGATE_BIN and FRAMEGATE_LOADGEN_BIN name the binaries."""
import glob
import json
import os
import subprocess
import tempfile
import unittest

SCRIPT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench",
                                       "run_soak.sh"))
IDLE_N = 300


class soak_smoke_test(unittest.TestCase):
    def soak(self, **extra_env):
        """One 12-second soak; its stdout and its results file."""
        with tempfile.TemporaryDirectory() as results:
            env = dict(os.environ, RESULTS_DIR=results, DURATION="12", IDLE_N=str(IDLE_N), SETTLE="4",
                       SAMPLE_S="1", CHURN_EVERY="5", CHURN_S="1", WORKERS="2", **extra_env)
            proc = subprocess.run(["bash", SCRIPT, "--quick"], env=env, capture_output=True, text=True, timeout=240)
            self.assertEqual(proc.returncode, 0, proc.stdout[-3000:] + proc.stderr[-3000:])
            [path] = glob.glob(os.path.join(results, "soak-*-quick.json"))
            with open(path) as f:
                return proc, json.load(f)

    def test_with_compression_and_context_takeover_the_loads_compress_and_pass(self):
        proc, result = self.soak(DEFLATE="1", FRAMEGATE_ARGS="--deflate-takeover both")
        self.assertEqual(result["problems"], [])
        self.assertEqual(result["meta"]["framegate_args"], "--deflate-takeover both --deflate")
        # Room messages padded past the threshold reach members compressed, and the echoes go both ways so.
        self.assertGreater(result["loads"]["rooms"]["wire"]["compressed_in"], 0)
        self.assertGreater(result["loads"]["echo"]["compressed_in"], 0)
        self.assertGreater(result["loads"]["echo"]["compressed_out"], 0)

    def test_a_short_soak_passes_its_checks_and_records_every_process(self):
        proc, result = self.soak()
        self.assertEqual(result["problems"], [])
        self.assertEqual(result["loads"]["rooms"]["wire"]["compressed_in"], 0)
        self.assertEqual(sorted(result["processes"]), ["gateway", "redis", "supervisor", "worker0", "worker1"])
        for name, p in result["processes"].items():
            self.assertGreater(p["settled_kib"], 1000, name)
            self.assertIn(p["verdict"], ("flat", "grows"), name)
        # idle + 1,000 room members + 100 echo connections, all closed at the end.
        self.assertGreaterEqual(result["peak_connections"], IDLE_N + 1100)
        self.assertEqual(result["connections_after"], 0)
        self.assertEqual(result["loads"]["idle"]["established"], IDLE_N)
        self.assertGreater(result["loads"]["rooms"]["delivery"]["delivered"], 0)
        self.assertGreater(result["churned_connections"], 0)
        self.assertIn("| gateway |", proc.stdout)


if __name__ == "__main__":
    unittest.main()
