"""--io-uring: a turn's client writes in one system call, or a send each.

One gateway thread and one worker (rooms through the gateway's hub, no
Redis), so a publish to a room of eight is one Send to eight members read
in one turn: with a ring the eight writes leave in one io_uring batch (one
system call), with --io-uring off in eight sends. Either way every member
gets every message, in order.

Echo replies: clients that write while the gateway is stopped (SIGSTOP)
are all read in its next turn; with a ring their replies leave together,
a batch's worth (16) at once and the rest at the turn's end.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))

from exposition import scrape  # noqa: E402
from framegate_harness import GatewayProcess, GatewayTestCase, WsClient, admin_port_of  # noqa: E402
from local_cluster import LocalCluster  # noqa: E402

MEMBERS = 8
PUBLISHES = 20


class Cluster:
    """A cluster with `mode` and MEMBERS members in room "u"."""

    def __init__(self, mode: str):
        self.cluster = LocalCluster(gateway_args=["--admin", "127.0.0.1:0", "--io-uring", mode],
                                    prefix="fg-io-uring-")
        self.members: list[WsClient] = []
        try:
            self.cluster.start()
            self.members = self.cluster.join_members("u", MEMBERS)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        for m in self.members:
            m.close()
        self.cluster.stop()

    def log(self) -> str:
        assert self.cluster.gateway is not None
        return "\n".join(self.cluster.gateway.output_lines())

    def counters(self) -> tuple[float, float]:
        g = scrape(self.cluster.admin)
        return (g["framegate_gateway_socket_writes_total"].value(),
                g["framegate_gateway_socket_write_calls_total"].value())

    def publish_one_by_one(self, test: unittest.TestCase) -> list[tuple[float, float]]:
        """Each publish answered by all before the next: (writes, calls) it took."""
        taken = []
        for seq in range(PUBLISHES):
            before = self.counters()
            self.members[seq % MEMBERS].send_text(json.dumps({"op": "publish", "room": "u", "data": seq}))
            for m in self.members:
                test.assertEqual(json.loads(m.recv_frame().payload)["data"], seq)
            after = self.counters()
            taken.append((after[0] - before[0], after[1] - before[1]))
        return taken


class IoUringWritesTest(unittest.TestCase):
    def start(self, mode: str) -> Cluster:
        cluster = Cluster(mode)
        self.addCleanup(cluster.stop)
        return cluster

    def test_a_ring_writes_a_fan_out_in_one_system_call(self):
        cluster = self.start("auto")
        if "client writes: io_uring" not in cluster.log():
            self.skipTest("this kernel gives no io_uring: " + cluster.log()[-300:])
        for writes, calls in cluster.publish_one_by_one(self):
            self.assertEqual(writes, MEMBERS, "each member written once")
            self.assertEqual(calls, 1, "eight members' sends in one io_uring batch")

    def test_off_writes_each_member_with_a_send_of_its_own(self):
        cluster = self.start("off")
        self.assertIn("client writes: one send() each (--io-uring off)", cluster.log())
        for writes, calls in cluster.publish_one_by_one(self):
            self.assertEqual(writes, MEMBERS)
            self.assertEqual(calls, MEMBERS, "one send per member")

    def test_a_ring_keeps_a_members_order_across_a_burst(self):
        cluster = self.start("auto")
        burst = [json.dumps({"op": "publish", "room": "u", "data": seq}) for seq in range(200)]
        for text in burst:
            cluster.members[0].send_text(text)
        for m in cluster.members:
            self.assertEqual([json.loads(m.recv_frame().payload)["data"] for _ in burst], list(range(200)))


def write_counters(admin: int) -> tuple[float, float]:
    """The gateway's (client writes, system calls that made them)."""
    g = scrape(admin)
    return (g["framegate_gateway_socket_writes_total"].value(),
            g["framegate_gateway_socket_write_calls_total"].value())


def wait_until_stopped(pid: int, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        if state in ("T", "t"):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"process {pid} not stopped after SIGSTOP (state {state})")
        time.sleep(0.005)


class EchoRepliesTest(unittest.TestCase):
    def start(self, mode: str, clients: int) -> tuple[GatewayProcess, int, list[WsClient]]:
        gateway = GatewayProcess(extra_args=["--admin", "127.0.0.1:0", "--io-uring", mode], echo=True)
        if gateway.behind_workers:
            self.skipTest("the gateway's own echo: its replies are what this counts")
        gateway.start()
        self.addCleanup(gateway.stop)
        opened = []
        for _ in range(clients):
            c = gateway.client()
            self.addCleanup(c.close)
            c.handshake("/")
            opened.append(c)
        return gateway, admin_port_of(gateway), opened

    def echo_in_one_turn(self, gateway: GatewayProcess, admin: int, clients: list[WsClient]) -> tuple[float, float]:
        """Every client writes while the gateway is stopped; (writes, calls) of the replies."""
        before = write_counters(admin)
        assert gateway.pid is not None
        os.kill(gateway.pid, signal.SIGSTOP)
        try:
            # A stop takes effect asynchronously: a client write before it
            # would wake the gateway's wait and be read in a turn of its own.
            wait_until_stopped(gateway.pid)
            for i, c in enumerate(clients):
                c.send_text(f"reply {i}")
            time.sleep(0.2)  # loopback: in the gateway's sockets by now
        finally:
            os.kill(gateway.pid, signal.SIGCONT)
        for i, c in enumerate(clients):
            frame = c.recv_frame()
            self.assertEqual(frame.payload, f"reply {i}".encode(), f"client {i} got another's reply")
        after = write_counters(admin)
        return after[0] - before[0], after[1] - before[1]

    def test_a_turns_replies_leave_in_one_system_call(self):
        gateway, admin, clients = self.start("auto", 8)
        if not any("client writes: io_uring" in line for line in gateway.output_lines()):
            self.skipTest("this kernel gives no io_uring")
        self.assertEqual(self.echo_in_one_turn(gateway, admin, clients), (8, 1))

    def test_a_batchs_worth_of_replies_goes_at_once_and_the_rest_at_the_turns_end(self):
        gateway, admin, clients = self.start("auto", 20)
        if not any("client writes: io_uring" in line for line in gateway.output_lines()):
            self.skipTest("this kernel gives no io_uring")
        self.assertEqual(self.echo_in_one_turn(gateway, admin, clients), (20, 2), "16 at once, then 4")

    def test_off_replies_with_a_send_each(self):
        gateway, admin, clients = self.start("off", 8)
        self.assertEqual(self.echo_in_one_turn(gateway, admin, clients), (8, 8))


class IoUringOptionTest(GatewayTestCase):
    gateway_args = None

    def test_an_unknown_mode_stops_the_gateway(self):
        line = self.assert_refuses_to_start("--listen", "127.0.0.1:0", "--echo", "--admin", "off", "--io-uring", "yes")
        self.assertIn("--io-uring", line)


if __name__ == "__main__":
    unittest.main()
