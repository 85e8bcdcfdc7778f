"""bench/bench_lib.sh's results_file: a later run of the same day gets its
own file instead of overwriting the first. Standard library and bash only:
python3 -m unittest bench_lib_test (in this directory)."""
import os
import subprocess
import tempfile
import unittest

LIB = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench",
                                    "bench_lib.sh"))


def results_files(results_dir, quick, runs):
    """The names results_file gives `runs` runs in a row, each file created as a run would."""
    script = f'''
        set -euo pipefail
        LOG_TAG=test
        source "{LIB}"
        RESULTS_DIR="{results_dir}"
        QUICK={quick}
        for _ in $(seq {runs}); do f=$(results_file fanout); touch "$f"; basename "$f"; done
    '''
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout.split()


class bench_lib_test(unittest.TestCase):
    def test_a_second_run_of_the_day_does_not_overwrite_the_first(self):
        with tempfile.TemporaryDirectory() as d:
            names = results_files(d, 0, 3)
        self.assertEqual(len(set(names)), 3)
        day = names[0][len("fanout-"):-len(".json")]
        self.assertEqual(names, [f"fanout-{day}.json", f"fanout-{day}-run2.json", f"fanout-{day}-run3.json"])

    def test_quick_runs_are_numbered_apart_from_full_ones(self):
        with tempfile.TemporaryDirectory() as d:
            full = results_files(d, 0, 1)
            quick = results_files(d, 1, 2)
        day = full[0][len("fanout-"):-len(".json")]
        self.assertEqual(quick, [f"fanout-{day}-quick.json", f"fanout-{day}-run2-quick.json"])


if __name__ == "__main__":
    unittest.main()
