"""The gateway's client-write metrics against a fan-out whose shape is known.

One gateway thread and one worker (rooms through the gateway's hub, no
Redis), so three members of a room share a link and a thread: a publish is
one Send to three recipients, framed once, and all but the last member's
frames wait for the write slice at the turn's end. A burst of publishes sent in one
TCP write travels as one batch at every hop, so each member's frames of the
burst leave in a few sends, not one per message.
"""

from __future__ import annotations

import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, HERE)

from exposition import scrape  # noqa: E402
from framegate_harness import OP_TEXT, WsClient, build_frame  # noqa: E402
from local_cluster import LocalCluster  # noqa: E402

MEMBERS = 3
BURST = 30


class WriteBatchingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.cluster = LocalCluster(gateway_args=["--admin", "127.0.0.1:0"], prefix="fg-batching-")
        cls.members: list[WsClient] = []
        try:
            cls.start_cluster()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls) -> None:
        for m in cls.members:
            m.close()
        cls.cluster.stop()

    @classmethod
    def start_cluster(cls) -> None:
        cls.cluster.start()
        cls.admin = cls.cluster.admin
        cls.members = cls.cluster.join_members("b", MEMBERS)

    def counters(self) -> dict[str, float]:
        g = scrape(self.admin)
        recipients = g["framegate_gateway_broadcast_recipients"]
        return {
            "shared_sends": recipients.count() - recipients.bucket(1),
            "sent": g["framegate_gateway_messages_sent_total"].total(),
            "writes": g["framegate_gateway_socket_writes_total"].value(),
            "slices": g["framegate_gateway_write_slices_total"].value(),
            "cut": g["framegate_gateway_write_slices_cut_total"].value(),
        }

    def publish(self, seqs: range) -> None:
        frames = b"".join(build_frame(OP_TEXT, json.dumps({"op": "publish", "room": "b", "data": s}).encode())
                          for s in seqs)
        self.members[0].send_raw(frames)  # one write, one segment on loopback
        for m in self.members:
            for s in seqs:
                got = json.loads(m.recv_frame().payload)
                self.assertEqual(got["data"], s)

    def test_a_broadcast_then_a_burst(self):
        before = self.counters()
        self.publish(range(1))
        one = self.counters()
        self.assertEqual(one["shared_sends"] - before["shared_sends"], 1, "one Send to the three members")
        self.assertEqual(one["sent"] - before["sent"], MEMBERS)
        self.assertGreaterEqual(one["slices"] - before["slices"], 1, "the first members' frames waited for the turn's end")
        self.assertEqual(one["writes"] - before["writes"], MEMBERS, "each member written once")

        self.publish(range(1, 1 + BURST))
        burst = self.counters()
        deliveries = burst["sent"] - one["sent"]
        writes = burst["writes"] - one["writes"]
        self.assertEqual(deliveries, MEMBERS * BURST)
        self.assertGreaterEqual(writes, MEMBERS)
        # Unbatched, every delivery would be a send of its own.
        self.assertLess(writes, deliveries / 3, f"{writes:.0f} sends for {deliveries:.0f} deliveries")
        self.assertGreater(burst["slices"], one["slices"])
        # The clock is read every 16 writes: three members' never run out of time.
        self.assertEqual(burst["cut"], 0)


if __name__ == "__main__":
    unittest.main()
