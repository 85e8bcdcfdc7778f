"""A cluster of real processes on loopback for one test class: an optional
redis-server, one gateway with a private link directory, and named workers.

Tests that check what crosses the whole stack (metrics, compression at the
publisher, write batching) start the same processes the same way; this is
that way, in one place. Everything listens on 127.0.0.1 on a free port, and
stop() ends the processes it started, by PID, in reverse order.

Only Python 3.11 standard library modules are used.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import time
from typing import Callable, Sequence, TypeVar

from framegate_harness import REPO_ROOT, GatewayProcess, Process, WsClient, admin_port_of

WORKER_BIN = os.environ.get("FRAMEGATE_WORKER_BIN") or os.path.join(REPO_ROOT, "build", "bin", "framegate-worker")

T = TypeVar("T")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the usual race: bind soon)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def until(what: str, check: Callable[[], T], timeout: float = 15.0) -> T:
    """Polls `check` until it returns something truthy, and returns that."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def start_redis() -> tuple[Process, int]:
    """A throw-away redis-server on a free 127.0.0.1 port, no persistence: (process, port)."""
    port = free_port()
    redis = Process(["redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                    name="redis-server", ready_pattern="Ready to accept connections", ready_stream="stdout")
    redis.start()
    return redis, port


class LocalCluster:
    """redis-server (with `redis=True`), a gateway and `workers` on one link directory.

    Each worker gets `worker_args` plus `--redis URL` when Redis runs; with
    `--admin` among the arguments, `admin` and `worker_admins` are the ports
    of their admin listeners. start() returns once every worker has
    registered with the gateway; a failure stops what was started.
    """

    def __init__(self, *, redis: bool = False, gateway_threads: int = 1, gateway_args: Sequence[str] = (),
                 workers: Sequence[str] = ("w1",), worker_args: Sequence[str] = (), prefix: str = "fg-cluster-"):
        self.redis_enabled = redis
        self.gateway_threads = gateway_threads
        self.gateway_args = list(gateway_args)
        self.worker_names = list(workers)
        self.worker_args = list(worker_args)
        self.tmp = tempfile.mkdtemp(prefix=prefix)
        self.link_dir = os.path.join(self.tmp, "links")
        self.processes: list[Process] = []
        self.redis: Process | None = None
        self.redis_port: int | None = None
        self.gateway: GatewayProcess | None = None
        self.workers: list[Process] = []
        self.admin: int | None = None
        self.worker_admins: list[int] = []

    @property
    def redis_url(self) -> str:
        if self.redis_port is None:
            raise RuntimeError("this cluster runs without Redis")
        return f"redis://127.0.0.1:{self.redis_port}"

    @property
    def port(self) -> int:
        """The gateway's WebSocket port."""
        assert self.gateway is not None, "not started"
        return self.gateway.port

    def start(self) -> "LocalCluster":
        try:
            if self.redis_enabled:
                self.redis, self.redis_port = start_redis()
                self.processes.append(self.redis)
            self.gateway = GatewayProcess(echo=False, threads=self.gateway_threads,
                                          extra_args=["--link-dir", self.link_dir, *self.gateway_args])
            self.gateway.start()
            self.processes.append(self.gateway)
            if "--admin" in self.gateway_args:
                self.admin = admin_port_of(self.gateway)
            for name in self.worker_names:
                self.workers.append(self.start_worker(name))
            if "--admin" in self.worker_args:
                self.worker_admins = [admin_port_of(w) for w in self.workers]
        except BaseException:
            self.stop()
            raise
        return self

    def start_worker(self, name: str) -> Process:
        """One more worker on the cluster's link directory (and Redis)."""
        argv = [WORKER_BIN, "--id", name, "--link-dir", self.link_dir, *self.worker_args]
        if self.redis is not None:
            argv += ["--redis", self.redis_url]
        # Ready once the gateway's Welcome came back: the gateway routes to it.
        worker = Process(argv, name=f"framegate-worker {name}", strip_env_prefixes=("FRAMEGATE_",),
                         ready_pattern="registered with gateway")
        worker.start()
        self.processes.append(worker)
        return worker

    def join_members(self, room: str, count: int) -> list[WsClient]:
        """`count` clients of /rooms in `room`, each back once its join was
        answered (the worker then holds the member: a publish reaches it).
        The caller closes them; if one fails, those opened are closed."""
        members: list[WsClient] = []
        try:
            for _ in range(count):
                c = WsClient("127.0.0.1", self.port)
                members.append(c)
                c.connect()
                c.handshake("/rooms")
                # "recover": the answer waits for the worker, with or without history.
                c.send_text(json.dumps({"op": "join", "room": room, "recover": True}))
                joined = json.loads(c.recv_frame().payload)
                assert joined.get("joined") == room, joined
        except BaseException:
            for c in members:
                c.close()
            raise
        return members

    def stop(self) -> None:
        for p in reversed(self.processes):
            p.stop()
        self.processes.clear()
        shutil.rmtree(self.tmp, ignore_errors=True)
