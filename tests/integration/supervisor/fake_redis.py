#!/usr/bin/python3
"""Stand-in for redis-server, as `framegate up` starts its private one:
`--port 0 --unixsocket PATH --unixsocketperm 700 --save "" --appendonly no --dir DIR`.

Listens on the Unix socket PATH, prints redis-server's ready line, and on
SIGTERM records which gateways and workers were still alive (Redis must be
stopped last), removes its socket and exits. FAKE_REDIS_MODE: normal
(default); `fail` exits 1 before the ready line. Crashes (exit 9, socket
left behind) when the file crash-redis appears in $FAKE_STATE_DIR.
"""

import os
import signal
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_common import STATE_DIR, log, recorded, write_record  # noqa: E402
from fake_records import pid_alive  # noqa: E402

argv = sys.argv[1:]
record = {"role": "redis", "name": "redis", "pid": os.getpid(), "ppid": os.getppid(), "argv": argv,
          "env": {k: v for k, v in os.environ.items() if k.startswith("FRAMEGATE_")}, "started": time.time()}
path = argv[argv.index("--unixsocket") + 1]
record["link_dir"] = argv[argv.index("--dir") + 1]


def save() -> None:
    write_record(f"redis.{os.getpid()}.json", record)


save()
if os.environ.get("FAKE_REDIS_MODE") == "fail":
    log("fake redis: failing at start-up")
    sys.exit(1)

stop_requested = False


def on_term(signum, frame) -> None:
    global stop_requested
    alive = lambda role: [r["pid"] for r in recorded(role) if pid_alive(r["pid"])]  # noqa: E731
    record["gateways_alive_at_term"] = alive("gateway")
    record["workers_alive_at_term"] = alive("worker")
    record["term_received"] = True
    save()
    stop_requested = True


signal.signal(signal.SIGTERM, on_term)
if os.path.exists(path):
    os.unlink(path)  # left by a crashed predecessor, as redis-server does too
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.bind(path)
sock.listen()
log(f"1:M 01 Jan 2024 00:00:00.000 * The server is now ready to accept connections at {path}")
crash_file = os.path.join(STATE_DIR, "crash-redis")
while not stop_requested:
    if os.path.exists(crash_file):
        os.unlink(crash_file)
        log("fake redis: crashing on request")
        os._exit(9)
    time.sleep(0.02)
sock.close()
os.unlink(path)
log("fake redis: bye bye")
sys.exit(0)
