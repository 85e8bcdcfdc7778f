"""bench/flamegraph.py on canned `perf script` output: stacks are folded
root first, grouped and filtered by command, and each frame's width is its
share of the samples. Standard library only: python3 -m unittest flamegraph_test."""
import os
import re
import subprocess
import sys
import unittest

BENCH = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench"))
sys.path.insert(0, BENCH)
import flamegraph  # noqa: E402

PERF_SCRIPT = """\
framegate-gatew  4242 [001] 100.000001:    1001001 cpu-clock:ppp:
\tffffffff8160f449 tcp_sendmsg+0x39 ([kernel.kallsyms])
\t          5d4ad7 fg::gateway::session::flush+0x17 (/work/build/bin/framegate-gateway)
\t          14645 main+0x25 (/work/build/bin/framegate-gateway)

framegate-gatew  4242 [001] 100.001001:    1001001 cpu-clock:ppp:
\t          5d4ad7 fg::gateway::session::flush+0x17 (/work/build/bin/framegate-gateway)
\t          14645 main+0x25 (/work/build/bin/framegate-gateway)

framegate-gatew  4242 [001] 100.002001:    1001001 cpu-clock:ppp:
\t          90b4 memcpy+0x354 (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t          14645 main+0x25 (/work/build/bin/framegate-gateway)

redis-server  77 [000] 100.003001:    1001001 cpu-clock:ppp:
\t          fe8c processCommand+0x7c (/usr/bin/redis-server)
"""


class flamegraph_test(unittest.TestCase):
    def test_stacks_are_folded_root_first_and_grouped_by_command(self):
        stacks = flamegraph.collapse(PERF_SCRIPT.splitlines())
        names = {tuple(f if isinstance(f, str) else f[0] for f in s): n for s, n in stacks.items()}
        self.assertEqual(names[("framegate-gatew", "main", "fg::gateway::session::flush")], 1)
        self.assertEqual(names[("framegate-gatew", "main", "fg::gateway::session::flush", "tcp_sendmsg")], 1)
        self.assertEqual(names[("framegate-gatew", "main", "memcpy")], 1)
        self.assertEqual(names[("redis-server", "processCommand")], 1)

    def test_a_frame_is_as_wide_as_its_share_of_the_samples(self):
        tree = flamegraph.build_tree(flamegraph.collapse(PERF_SCRIPT.splitlines()))
        self.assertEqual(tree.count, 4)
        gateway = tree.children["framegate-gatew"]
        self.assertEqual(gateway.count, 3)
        self.assertEqual(gateway.children["main"].children["fg::gateway::session::flush"].count, 2)

    def test_the_svg_keeps_only_the_commands_asked_for(self):
        out = subprocess.run([sys.executable, os.path.join(BENCH, "flamegraph.py"), "--title", "t",
                              "--comm", "redis-server"], input=PERF_SCRIPT, capture_output=True, text=True,
                             check=True).stdout
        self.assertTrue(out.startswith("<svg"))
        titles = re.findall(r"<title>([^<]*)</title>", out)
        self.assertIn("processCommand (1 samples, 100.00%)", titles)
        self.assertFalse(any("session::flush" in t for t in titles))

    def test_input_without_stacks_is_an_error(self):
        proc = subprocess.run([sys.executable, os.path.join(BENCH, "flamegraph.py")], input="no samples here\n",
                              capture_output=True, text=True)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("no samples", proc.stderr)


if __name__ == "__main__":
    unittest.main()
