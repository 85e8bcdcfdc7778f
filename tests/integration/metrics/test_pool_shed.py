"""Pooled memory goes back after a burst (--pool-shed-period).

Two kinds of burst. Large messages:
One gateway thread and one worker, both with a shed period of half a
second. Eighty clients each send the first half of a 192 KiB message and
wait, so that the gateway's reader holds a buffer for each of them at the
same time; then the rest, and read the echo through the worker. Once the
messages are done the buffers sit in the thread's pool; two quiet periods
later they are freed (more than 1 MiB: the gateway hands the memory back to
the kernel too); a small message each leaves payload strings in the
worker's pool, and the worker frees those.

A wave of connections: 6,000 clients open their WebSocket to /echo (a
worker's app), say nothing and leave. No pool holds anything, but the
gateway's sessions and the worker's connection entries (over 1 MiB each)
were freed, so both hand the memory back to the kernel all the same: a
trim each, no pool bytes shed.
"""

from __future__ import annotations

import base64
import os
import selectors
import socket
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, HERE)

from exposition import scrape  # noqa: E402
from framegate_harness import OP_BINARY, WsClient, build_frame  # noqa: E402
from local_cluster import LocalCluster, until  # noqa: E402

CLIENTS = 80
SIZE = 192 * 1024
PERIOD = "0.5"


class PoolShedTest(unittest.TestCase):
    def setUp(self) -> None:
        self.cluster = LocalCluster(gateway_args=["--admin", "127.0.0.1:0", "--pool-shed-period", PERIOD],
                                    worker_args=["--admin", "127.0.0.1:0", "--pool-shed-period", PERIOD],
                                    prefix="fg-pool-shed-")
        self.clients: list[WsClient] = []
        self.addCleanup(self.cluster.stop)
        self.addCleanup(lambda: [c.close() for c in self.clients])
        self.cluster.start()

    def gateway(self, name: str) -> float:
        return scrape(self.cluster.admin)[f"framegate_gateway_{name}"].value()

    def worker(self, name: str) -> float:
        return scrape(self.cluster.worker_admins[0])[f"framegate_worker_{name}"].value()

    def test_a_burst_of_large_messages_is_given_back(self):
        for _ in range(CLIENTS):
            c = WsClient("127.0.0.1", self.cluster.port)
            c.connect()
            c.handshake("/echo")
            self.clients.append(c)
        self.assertEqual(self.gateway("pool_shed_bytes_total"), 0.0, "nothing to shed before the burst")

        payloads = [bytes([i]) * SIZE for i in range(CLIENTS)]
        frames = [build_frame(OP_BINARY, p) for p in payloads]
        for c, f in zip(self.clients, frames):
            c.send_raw(f[:len(f) // 2])
        time.sleep(0.3)  # every first half read: eighty partial messages at once
        for c, f in zip(self.clients, frames):
            c.send_raw(f[len(f) // 2:])
        for c, p in zip(self.clients, payloads):
            echo = c.recv_frame(timeout=20)
            self.assertEqual(echo.payload, p)
        # The worker keeps payload strings of up to 64 KiB for reuse: a small
        # message each leaves some in its pool.
        for c in self.clients:
            c.send_binary(b"small")
        for c in self.clients:
            self.assertEqual(c.recv_frame(timeout=20).payload, b"small")

        # The gateway's reader buffers: eighty of up to 256 KiB, in the pool
        # once the messages are done, unused from then on.
        shed = until("the gateway's pool to shed the burst's buffers",
                     lambda: self.gateway("pool_shed_bytes_total") >= CLIENTS * SIZE // 2 or None, timeout=20)
        self.assertTrue(shed)
        self.assertGreaterEqual(self.gateway("memory_trims_total"), 1.0, "more than 1 MiB shed: a trim")
        # The worker's payload strings, unused since the small messages.
        until("the worker's pool to shed", lambda: self.worker("pool_shed_bytes_total") > 0 or None, timeout=20)


WAVE = 6000


def open_idle_websockets(port: int, path: str, count: int, timeout: float = 60.0) -> list[socket.socket]:
    """`count` upgraded WebSocket connections to 127.0.0.1:port/path, opened together."""
    sel = selectors.DefaultSelector()
    request = (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}\r\n"
               "Sec-WebSocket-Version: 13\r\n\r\n").encode()
    socks, pending = [], {}
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(request)
        s.setblocking(False)
        socks.append(s)
        pending[s] = b""
        sel.register(s, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    while pending:
        if time.monotonic() > deadline:
            raise AssertionError(f"{len(pending)} handshakes unanswered")
        for key, _ in sel.select(timeout=1):
            s = key.fileobj
            pending[s] += s.recv(4096)
            if b"\r\n\r\n" in pending[s]:
                if not pending[s].startswith(b"HTTP/1.1 101"):
                    raise AssertionError(f"handshake refused: {pending[s][:80]!r}")
                del pending[s]
                sel.unregister(s)
    sel.close()
    return socks


class ConnectionWaveTest(unittest.TestCase):
    def setUp(self) -> None:
        self.cluster = LocalCluster(gateway_args=["--admin", "127.0.0.1:0", "--pool-shed-period", PERIOD,
                                                  "--max-connections", str(WAVE + 100)],
                                    worker_args=["--admin", "127.0.0.1:0", "--pool-shed-period", PERIOD],
                                    prefix="fg-wave-")
        self.addCleanup(self.cluster.stop)
        self.cluster.start()

    def metric(self, admin: int, name: str) -> float:
        return scrape(admin)[name].value()

    def test_memory_freed_by_a_wave_of_clients_is_handed_back(self):
        gateway, worker = self.cluster.admin, self.cluster.worker_admins[0]
        socks = open_idle_websockets(self.cluster.port, "/echo", WAVE)
        until("the worker to hold every connection",
              lambda: self.metric(worker, "framegate_worker_connections") == WAVE or None, timeout=30)
        trims_before = {"gateway": self.metric(gateway, "framegate_gateway_memory_trims_total"),
                        "worker": self.metric(worker, "framegate_worker_memory_trims_total")}
        for s in socks:
            s.close()
        until("a trim in the gateway after the wave left",
              lambda: self.metric(gateway, "framegate_gateway_memory_trims_total") > trims_before["gateway"] or None,
              timeout=20)
        until("a trim in the worker after the wave left",
              lambda: self.metric(worker, "framegate_worker_memory_trims_total") > trims_before["worker"] or None,
              timeout=20)
        self.assertEqual(self.metric(gateway, "framegate_gateway_pool_shed_bytes_total"), 0.0,
                         "no gateway pool had anything to shed")

if __name__ == "__main__":
    unittest.main()
