#!/usr/bin/python3
"""Stand-in for framegate-gateway: `--listen HOST:PORT --link-dir DIR`.

FAKE_GATEWAY_MODE: normal (default) prints `listening on 127.0.0.1:PORT` and
waits for SIGTERM; `exit` exits 3 before that line; `usage` exits 2 (a bad
option); `silent` never prints it. On SIGTERM it records whether the workers
were still alive (the supervisor must stop the gateway first).
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_common import FakeChild, log, recorded  # noqa: E402
from fake_records import pid_alive  # noqa: E402

mode = os.environ.get("FAKE_GATEWAY_MODE", "normal")
child = FakeChild("gateway", "gateway")
child.save()
if mode == "exit":
    log("fake gateway: failing at start-up")
    sys.exit(3)
if mode == "usage":
    log("fake gateway: --bogus: unknown option")
    sys.exit(2)


def on_term() -> None:
    workers = [r for r in recorded("worker")]
    child.record["workers_alive_at_term"] = [r["pid"] for r in workers if pid_alive(r["pid"])]
    child.record["term_received"] = True
    child.save()


child.handle_sigterm(on_term)
port = child.record["argv"][child.record["argv"].index("--listen") + 1].rsplit(":", 1)[1]
if mode != "silent":
    log(f"2024-01-01 00:00:00.000 [info] [gateway] listening on 127.0.0.1:{port} with 1 thread(s)")
while not child.stop_requested:
    time.sleep(0.02)
child.close()
log("fake gateway: stopped")
sys.exit(0)
