"""Process.wait_for, wait_for_up and run_checked, against small shell scripts.

Run by hand:
    PYTHONPATH=tests/integration/support /usr/bin/python3 -B -m unittest -v \
        tests/integration/support/test_framegate_harness.py
"""

import time
import unittest

from framegate_harness import Process, ProcessError, run_checked, wait_for_up


def shell(script):
    """A started `sh -c script`, stopped at cleanup."""
    process = Process(["sh", "-c", script], name="sh")
    process.start()
    return process


class WaitForTest(unittest.TestCase):
    def run_script(self, script):
        process = shell(script)
        self.addCleanup(process.stop, 5.0)
        return process

    def test_counts_matches_of_both_streams(self):
        process = self.run_script("echo 'got 1'; echo 'got 2' >&2; sleep 0.2; echo 'got 3'; exec sleep 30")
        matches = process.wait_for(r"got (\d)", 3, timeout=5.0)
        self.assertEqual(sorted(m.group(1) for m in matches), ["1", "2", "3"])

    def test_returns_only_the_first_count_matches(self):
        process = self.run_script("echo 'got 1'; echo 'got 2'; echo 'got 3'; exec sleep 30")
        process.wait_for(r"got 3", timeout=5.0)
        self.assertEqual([m.group(1) for m in process.wait_for(r"got (\d)", 2)], ["1", "2"])

    def test_exit_before_enough_matches_fails_at_once(self):
        process = self.run_script("echo 'got 1'; exit 3")
        began = time.monotonic()
        with self.assertRaisesRegex(ProcessError, r"printed 1 of 2 line\(s\) matching .* exited with code 3"):
            process.wait_for(r"got", 2, timeout=20.0)
        self.assertLess(time.monotonic() - began, 10.0)

    def test_timeout_leaves_the_process_running(self):
        process = self.run_script("echo 'got 1'; exec sleep 30")
        with self.assertRaisesRegex(ProcessError, r"printed 0 of 1 line\(s\) matching 'never' and timed out after 0.3s"):
            process.wait_for("never", timeout=0.3)
        self.assertTrue(process.is_running())


class WaitForUpTest(unittest.TestCase):
    def test_port_once_gateway_listens_and_workers_registered(self):
        process = shell("echo \"gateway listening on ws://127.0.0.1:4711/ (admin 127.0.0.1:9)\"; "
                        "echo \"worker 'w1' (pid 12, 0.1.0) registered, serving 1 path\" >&2; sleep 0.2; "
                        "echo \"worker 'w2' (pid 13, 0.1.0) registered, serving 1 path\" >&2; exec sleep 30")
        self.addCleanup(process.stop, 5.0)
        self.assertEqual(wait_for_up(process, 2, 5.0), 4711)

    def test_too_few_workers_fail(self):
        process = shell("echo 'gateway listening on ws://127.0.0.1:4711/'; "
                        "echo \"worker 'w1' (pid 12, 0.1.0) registered\"; exec sleep 30")
        self.addCleanup(process.stop, 5.0)
        with self.assertRaisesRegex(ProcessError, r"printed 1 of 2 line\(s\)"):
            wait_for_up(process, 2, 0.5)


class RunCheckedTest(unittest.TestCase):
    def test_returns_both_streams(self):
        self.assertEqual(run_checked(["sh", "-c", "echo out; echo err >&2"], 5.0), "out\nerr\n")

    def test_failure_is_an_assertion_with_the_output(self):
        with self.assertRaisesRegex(AssertionError, r"sh -c echo said; exit 4 exited 4:\nsaid"):
            run_checked(["sh", "-c", "echo said; exit 4"], 5.0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
