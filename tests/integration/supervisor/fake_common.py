"""Shared parts of the stand-in children the supervisor test runs instead of
the real gateway and worker: record what the supervisor gave us (argv,
FRAMEGATE_* environment, parent pid) in a JSON file under $FAKE_STATE_DIR, hold
a Unix socket in the link directory like the real children will, and stop on
SIGTERM.
"""

import json
import os
import signal
import socket
import sys
import time

from fake_records import read_records

STATE_DIR = os.environ["FAKE_STATE_DIR"]


def arg_value(name: str) -> str:
    """The value after `name` in our argv (the supervisor always passes it)."""
    return sys.argv[sys.argv.index(name) + 1]


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def recorded(role: str) -> list:
    """State records of every run of `role` so far, oldest first."""
    return read_records(STATE_DIR, role)


def write_record(name: str, rec: dict) -> None:
    path = os.path.join(STATE_DIR, name)
    with open(path + ".tmp", "w") as f:
        json.dump(rec, f)
    os.replace(path + ".tmp", path)  # readers never see half a file


class FakeChild:
    def __init__(self, role: str, name: str) -> None:
        self.role = role
        self.name = name
        self.stop_requested = False
        self.record = {
            "role": role,
            "name": name,
            "pid": os.getpid(),
            "ppid": os.getppid(),
            "argv": sys.argv[1:],
            "env": {k: v for k, v in os.environ.items() if k.startswith("FRAMEGATE_")},
            "link_dir": arg_value("--link-dir"),
            "started": time.time(),
        }
        self.socket_path = os.path.join(self.record["link_dir"], f"{name}.sock")
        if os.path.exists(self.socket_path):
            os.unlink(self.socket_path)  # left by our killed predecessor
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.socket_path)
        self.sock.listen()

    def save(self) -> None:
        write_record(f"{self.name}.{os.getpid()}.json", self.record)

    def handle_sigterm(self, on_term) -> None:
        def handler(signum, frame):
            on_term()
            self.stop_requested = True
        signal.signal(signal.SIGTERM, handler)

    def close(self) -> None:
        self.sock.close()
        os.unlink(self.socket_path)
