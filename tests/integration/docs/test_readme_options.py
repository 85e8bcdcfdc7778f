"""The README's configuration tables and the binaries' --help agree: every
option a binary accepts has a row in its table, and every row names an
option the binary accepts (so neither can drift from the other)."""

from __future__ import annotations

import os
import re
import subprocess
import unittest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BIN = os.environ.get("FRAMEGATE_BIN_DIR") or os.path.join(REPO, "build", "bin")
OPTION_RE = re.compile(r"--[a-z0-9][a-z0-9-]*")

# README heading line of each table -> the command whose --help it documents.
TABLES = {
    "`framegate up` (the supervisor):": ["framegate", "up", "--help"],
    "`framegate-worker`:": ["framegate-worker", "--help"],
    "`framegate-gateway`:": ["framegate-gateway", "--help"],
}


def help_options(argv: list[str]) -> set[str]:
    out = subprocess.run([os.path.join(BIN, argv[0]), *argv[1:]], capture_output=True, text=True, timeout=10,
                         env={k: v for k, v in os.environ.items() if not k.startswith("FRAMEGATE_")})
    assert out.returncode == 0, out.stderr
    # Option lines of CLI11's help start with the option itself (after "-h," for --help).
    options = {m.group(1) for line in out.stdout.splitlines() if (m := re.match(r"\s+(?:-[a-z],)?(--[a-z0-9-]+)", line))}
    return options - {"--help", "--version"}


def readme_table(heading: str) -> set[str]:
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        lines = f.read().splitlines()
    start = lines.index(heading)
    rows: list[str] = []
    for line in lines[start + 1:]:
        if line.startswith("|"):
            rows.append(line)
        elif rows:
            break  # the table ended
    # The first cell of each row names the option(s): `--a X` / `--b`.
    return {opt for row in rows[2:] for opt in OPTION_RE.findall(row.split("|")[1])}


class ReadmeOptionsTest(unittest.TestCase):
    def test_every_option_has_a_row_and_every_row_an_option(self):
        for heading, argv in TABLES.items():
            with self.subTest(binary=argv[0]):
                accepted, documented = help_options(argv), readme_table(heading)
                self.assertGreater(len(accepted), 5, f"no options parsed from {argv}")
                self.assertEqual(sorted(accepted - documented), [], f"options of {argv[0]} missing from README")
                self.assertEqual(sorted(documented - accepted), [], f"README rows for options {argv[0]} lacks")


if __name__ == "__main__":
    unittest.main()
