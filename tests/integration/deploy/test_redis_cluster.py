"""The cluster profile's Redis files run here without Docker: six
redis-server nodes on deploy/redis/cluster-node.conf (only the port, the
address and the nodes.conf path made local), joined by
deploy/redis/cluster-init.sh exactly as redis-cluster-init runs it, which
must then leave a second run alone."""

from __future__ import annotations

import os
import random
import socket
import subprocess
import tempfile
import time
import unittest

from deploy_files import REDIS_CLUSTER_INIT, REDIS_CLUSTER_NODE_CONF, run, tool


def cluster_ports(count: int) -> list[int]:
    """Ports whose bus port (+10000) is free too, both below the ephemeral
    range, where no client connection can hold them (see redis_cluster.mjs)."""
    ports: list[int] = []
    while len(ports) < count:
        port = random.randint(10000, 22767)
        try:
            for p in (port, port + 10000):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", p))
        except OSError:
            continue
        if port not in ports:
            ports.append(port)
    return ports


class ClusterFilesTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.TemporaryDirectory(prefix="fg-redis-cluster-")
        self.addCleanup(self.dir.cleanup)
        self.ports = cluster_ports(6)
        for port in self.ports:
            node_dir = os.path.join(self.dir.name, str(port))
            os.mkdir(node_dir)
            node = subprocess.Popen([tool("redis-server"), REDIS_CLUSTER_NODE_CONF, "--port", str(port),
                                     "--bind", "127.0.0.1", "--dir", node_dir,
                                     "--cluster-config-file", os.path.join(node_dir, "nodes.conf"),
                                     "--cluster-announce-hostname", "localhost"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.addCleanup(node.wait)
            self.addCleanup(node.kill)
        deadline = time.monotonic() + 10
        while not all(self.cli(p, "ping") == "PONG" for p in self.ports):
            self.assertLess(time.monotonic(), deadline, "the nodes did not answer PING")
            time.sleep(0.05)

    def cli(self, port: int, *args: str) -> str:
        result = run([tool("redis-cli"), "-h", "127.0.0.1", "-p", str(port), *args])
        return result.stdout.strip()

    def init(self) -> subprocess.CompletedProcess:
        return run(["sh", REDIS_CLUSTER_INIT, *(f"127.0.0.1:{p}" for p in self.ports)])

    def test_init_makes_one_cluster_once(self):
        first = self.init()
        self.assertEqual(first.returncode, 0, first.stdout + first.stderr)
        self.assertIn("cluster_state:ok on all 6 nodes", first.stdout)
        for port in self.ports:
            self.assertIn("cluster_state:ok", self.cli(port, "cluster", "info"))
        roles = [self.cli(p, "role").split("\n")[0] for p in self.ports]
        self.assertEqual(sorted(roles), ["master"] * 3 + ["slave"] * 3)
        # Clients are sent to the announced hostname, not an address.
        key = "framegate:room:x"
        owner = self.cli(self.ports[0], "cluster", "keyslot", key)
        moved = [self.cli(p, "spublish", key, "m") for p in self.ports]
        self.assertTrue(any(m.startswith(f"MOVED {owner} localhost:") for m in moved), moved)

        again = self.init()
        self.assertEqual(again.returncode, 0, again.stdout + again.stderr)
        self.assertIn("nothing to do", again.stdout)


if __name__ == "__main__":
    unittest.main()
