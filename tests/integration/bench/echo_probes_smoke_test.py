"""The echo probes end to end, briefly, against real servers: bench/sched_waits.sh
(scheduler accounting per process) and bench/count_syscalls.sh (system calls per
message), both on the gateway alone and on the gateway with one worker, which
they start through bench_lib's start_echo_kind. Each must exit 0 and print a
row per process with figures a live run has (CPU time, wake-ups, reads).
FRAMEGATE_GATEWAY_BIN and FRAMEGATE_LOADGEN_BIN name the binaries."""
import os
import subprocess
import unittest

BENCH = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench"))


def run(script, **extra_env):
    env = dict(os.environ, PEERS="framegate workers", QUIET_WAIT="0")
    env.update(extra_env)
    proc = subprocess.run(["bash", os.path.join(BENCH, script), "--quick"], env=env, capture_output=True, text=True,
                          timeout=120)
    return proc


def cpu_list(cpus):
    """A set of CPUs as the kernel writes it (Cpus_allowed_list): "0-3,6"."""
    runs, out = [], sorted(cpus)
    for c in out:
        if runs and c == runs[-1][1] + 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


def table_rows(stdout):
    """The markdown table's body rows as lists of cells."""
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in stdout.splitlines()
            if line.startswith("| ") and not line.startswith("| server") and not line.startswith("| process")]
    return rows


class sched_waits_test(unittest.TestCase):
    def test_every_process_of_both_kinds_has_a_row_with_cpu_and_wake_ups(self):
        proc = run("sched_waits.sh")
        self.assertEqual(proc.returncode, 0, proc.stdout[-3000:] + proc.stderr[-3000:])
        rows = {(r[0], r[3]): r for r in table_rows(proc.stdout)}
        self.assertEqual(sorted(rows), [("framegate", "framegate"), ("framegate", "loadgen"),
                                        ("workers", "loadgen"), ("workers", "worker"), ("workers", "workers")])
        ours = cpu_list(os.sched_getaffinity(0))
        for key, (_, rnd, latency, _, cpu, run_queue, wake_ups, _, on_cpus) in rows.items():
            self.assertEqual(on_cpus, ours, key)  # the scheduler's placement: wherever this test may run
            self.assertEqual(rnd, "1", key)
            self.assertRegex(latency, r"^\d+\.\d{3} / \d+\.\d{2} ms$", key)
            # 10k echoes a second: every process is on a CPU and sleeps between its turns.
            self.assertGreater(float(cpu.rstrip("%")), 0.5, key)
            self.assertGreaterEqual(float(run_queue.rstrip("%")), 0.0, key)
            self.assertGreater(int(wake_ups.replace(",", "")), 100, key)


    @unittest.skipIf(os.cpu_count() < 2, "placing the load generator apart needs two CPUs")
    def test_the_load_generator_runs_on_its_cpus_and_the_servers_on_theirs(self):
        proc = run("sched_waits.sh", PEERS="workers", SERVER_CPUS="0", LOADGEN_CPUS="1")
        self.assertEqual(proc.returncode, 0, proc.stdout[-3000:] + proc.stderr[-3000:])
        self.assertIn("CPU placement: servers on CPUs 0, load generator on CPUs 1.", proc.stdout)
        on_cpus = {r[3]: r[8] for r in table_rows(proc.stdout)}
        self.assertEqual(on_cpus, {"workers": "0", "worker": "0", "loadgen": "1"})

    def test_a_cpu_list_this_machine_does_not_have_is_refused(self):
        proc = run("sched_waits.sh", LOADGEN_CPUS="4095")
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("LOADGEN_CPUS=4095: not a CPU list of this machine", proc.stderr)


class count_syscalls_test(unittest.TestCase):
    def test_the_gateway_and_the_worker_each_read_once_per_handful_of_messages(self):
        proc = run("count_syscalls.sh", TRACE_SECONDS="1", COUNT_WITH="strace")
        self.assertEqual(proc.returncode, 0, proc.stdout[-3000:] + proc.stderr[-3000:])
        rows = {r[0]: r for r in table_rows(proc.stdout)}
        self.assertEqual(sorted(rows), ["framegate", "workers:gateway", "workers:worker"])
        for kind, row in rows.items():
            self.assertGreater(int(row[1]), 0, kind)  # reads traced
            self.assertGreater(float(row[-1]), 1.0, kind)  # every call per read: at least the read itself


if __name__ == "__main__":
    unittest.main()
