"""A Docker engine for the live compose test: the one running on this
machine, or Debian's `dockerd` started here (and stopped again by whoever
started it).

A daemon started here gets its bridge and every network Compose creates
inside 198.19.0.0/16, the benchmarking range (RFC 2544), so that it can
never take an address range the machine or its network already uses.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

# docker0, then the /24s Compose's networks are carved from: all in 198.19.0.0/16.
DAEMON_CONFIG = {
    "bip": "198.19.0.1/24",
    "default-address-pools": [{"base": "198.19.64.0/18", "size": 24}],
}
# Debian's own binaries first: another `docker` earlier in PATH (a static
# CLI of another version) need not speak the API of Debian's daemon.
SEARCH_PATH = os.pathsep.join(["/usr/bin", "/usr/sbin", os.environ.get("PATH", "")])


def fail(message: str) -> None:
    raise unittest.TestCase.failureException(message)


def command(name: str) -> str:
    path = shutil.which(name, path=SEARCH_PATH)
    if path is None:
        fail(f"{name} is not installed: run tools/setup.sh as root (it installs docker.io and debootstrap)")
    return path


def docker(*args: str, timeout: float = 120, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    """`docker ARGS...`, its output captured; a failure raises with the command's stderr."""
    result = subprocess.run([command("docker"), *args], capture_output=True, text=True, timeout=timeout, **kwargs)
    if check and result.returncode != 0:
        fail(f"docker {' '.join(args)} exited {result.returncode}:\n{result.stderr.strip()}")
    return result


def engine_answers() -> bool:
    result = subprocess.run([command("docker"), "version", "--format", "{{.Server.Version}}"],
                            capture_output=True, text=True, timeout=30)
    return result.returncode == 0


class Engine:
    """Use the running Docker engine, or start one; stop() stops only the one started here."""

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None
        self.dir: tempfile.TemporaryDirectory | None = None

    def start(self, timeout: float = 60) -> None:
        command("docker")
        if engine_answers():
            return
        if os.geteuid() != 0:
            fail("no Docker engine answers and only root can start one: run this test as root")
        self.dir = tempfile.TemporaryDirectory(prefix="fg-dockerd-")
        config = os.path.join(self.dir.name, "daemon.json")
        with open(config, "w", encoding="utf-8") as f:
            json.dump(DAEMON_CONFIG, f)
        self.log_path = os.path.join(self.dir.name, "dockerd.log")
        with open(self.log_path, "wb") as log:
            # Its own session: a Ctrl-C meant for the test does not reach it first.
            self.process = subprocess.Popen([command("dockerd"), "--config-file", config], stdin=subprocess.DEVNULL,
                                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while not engine_answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                fail(f"dockerd did not come up:\n{self.log_tail()}")
            time.sleep(0.5)

    def log_tail(self, lines: int = 30) -> str:
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except (AttributeError, OSError):
            return "(no dockerd log)"

    def stop(self, timeout: float = 30) -> None:
        if self.process is not None and self.process.poll() is None:
            # SIGTERM: dockerd stops its containerd and cleans its sockets up.
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.process = None
        if self.dir is not None:
            self.dir.cleanup()
            self.dir = None
