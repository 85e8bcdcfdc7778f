#!/usr/bin/python3
"""Stand-in for framegate-worker: `--id wK --link-dir DIR`.

Crashes (exit 7) when the file crash-<id> appears in $FAKE_STATE_DIR (and
removes it, so the next run stays up). FAKE_WORKER_MODE: normal (default);
`usage` exits 2 at once (a bad option); `stubborn` ignores SIGTERM. On SIGTERM
it records whether a gateway was still alive (it must not be).
"""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_common import STATE_DIR, FakeChild, log, recorded  # noqa: E402
from fake_records import pid_alive  # noqa: E402

mode = os.environ.get("FAKE_WORKER_MODE", "normal")
worker_id = sys.argv[sys.argv.index("--id") + 1]
child = FakeChild("worker", worker_id)
child.save()
if mode == "usage":
    log(f"fake worker {worker_id}: --bogus: unknown option")
    sys.exit(2)


def on_term() -> None:
    child.record["gateways_alive_at_term"] = [r["pid"] for r in recorded("gateway") if pid_alive(r["pid"])]
    child.record["term_received"] = True
    child.save()


if mode == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
else:
    child.handle_sigterm(on_term)
log(f"fake worker {worker_id}: ready")
crash_file = os.path.join(STATE_DIR, f"crash-{worker_id}")
while not child.stop_requested:
    if os.path.exists(crash_file):
        os.unlink(crash_file)
        log(f"fake worker {worker_id}: crashing on request")
        os._exit(7)  # no clean-up: like a real crash, the socket stays
    time.sleep(0.02)
child.close()
log(f"fake worker {worker_id}: stopped")
sys.exit(0)
