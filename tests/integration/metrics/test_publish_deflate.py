"""A room message compressed once, by the worker that published it.

Two workers with --publish-deflate share a real redis-server behind one
gateway (two I/O threads, --deflate), or, without Redis, the gateway's hub
(BrokerPublish carries the compression; deliveries have no offset). Members of one room connect with
permessage-deflate (15-bit window), with a 9-bit server window (too small
for the publisher's compression of a 2 KiB message), and without it. Each
must get every publish exactly as the rooms protocol says, offsets
included; the deflate members' frames must inflate, and the gateway must
have sent the publisher's compression (its own counter) instead of
compressing, while the workers count the publishes they compressed and the
deliveries that came with a compression.
"""

from __future__ import annotations

import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, HERE)

from deflate_client import Deflate, json_text  # noqa: E402
from exposition import scrape  # noqa: E402
from framegate_harness import RSV1, WsClient  # noqa: E402
from local_cluster import LocalCluster  # noqa: E402

ROOM = "z"
WIDE_OFFER = "permessage-deflate; client_max_window_bits"
NARROW_OFFER = "permessage-deflate; server_max_window_bits=9; client_max_window_bits"
BIG = 2048  # above --deflate-threshold and --publish-deflate-threshold (1024), above a 9-bit window (512)
SMALL = 200
PUBLISHES = 4


class Member:
    def __init__(self, port: int, offer: str | None):
        self.client = WsClient("127.0.0.1", port)
        self.client.connect()
        headers = {"Sec-WebSocket-Extensions": offer} if offer else None
        response = self.client.handshake("/rooms", headers=headers)
        self.deflate = Deflate(offer, response.header("Sec-WebSocket-Extensions")) if offer else None

    def next_message(self) -> tuple[bytes, bool]:
        """The next message's text (inflated) and whether it came compressed."""
        frame = self.client.recv_frame(timeout=10)
        assert frame.fin, frame.describe()
        if frame.rsv == RSV1:
            assert self.deflate is not None, f"RSV1 without permessage-deflate: {frame.describe()}"
            return self.deflate.inflate(frame.payload), True
        assert frame.rsv == 0, frame.describe()
        return frame.payload, False


class PublishDeflateCases:
    """The cases, for a cluster with Redis (REDIS) or through the gateway's hub."""

    REDIS = True

    @classmethod
    def setUpClass(cls) -> None:
        cls.cluster = LocalCluster(redis=cls.REDIS, gateway_threads=2, prefix="fg-publish-deflate-",
                                   gateway_args=["--admin", "127.0.0.1:0", "--deflate", "--deflate-threshold", "1024"],
                                   workers=("w1", "w2"), worker_args=["--admin", "127.0.0.1:0", "--publish-deflate"])
        cls.members: dict[str, list[Member]] = {}
        try:
            cls.cluster.start()
            cls.gateway_admin = cls.cluster.admin
            cls.worker_admins = cls.cluster.worker_admins
            cls.join_members()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls) -> None:
        for group in cls.members.values():
            for m in group:
                m.client.close()
        cls.cluster.stop()

    @classmethod
    def join_members(cls) -> None:
        port = cls.cluster.port
        # Enough wide members that both workers and both gateway threads hold some.
        cls.members = {
            "wide": [Member(port, WIDE_OFFER) for _ in range(6)],
            "narrow": [Member(port, NARROW_OFFER) for _ in range(2)],
            "plain": [Member(port, None) for _ in range(2)],
        }
        for group in cls.members.values():
            for m in group:
                # Answered once the member's worker is subscribed to the room.
                m.client.send_text(json.dumps({"op": "join", "room": ROOM, "recover": True}))
                text, _ = m.next_message()
                assert json.loads(text)["joined"] == ROOM, text
        cls.publisher = Member(port, None)
        cls.members["publisher"] = [cls.publisher]

    def counters(self) -> dict[str, float]:
        g = scrape(self.gateway_admin)
        workers = [scrape(port) for port in self.worker_admins]
        return {
            "from_publisher": g["framegate_gateway_deflate_publisher_messages_total"].value(),
            "compressed": g["framegate_gateway_deflate_messages_total"].value(direction="out"),
            "deflated_publishes": sum(w["framegate_worker_broker_deflated_publishes_total"].value() for w in workers),
            "deflated_deliveries": sum(w["framegate_worker_broker_deflated_deliveries_total"].value()
                                       for w in workers),
        }

    def publish(self, data: str) -> int | None:
        """Publishes `data` (a JSON string value) and returns its offset (None through the hub)."""
        self.publisher.client.send_text(json.dumps({"op": "publish", "room": ROOM, "data": data, "id": "p"}))
        text, _ = self.publisher.next_message()
        receipt = json.loads(text)
        self.assertEqual("offset" in receipt, self.REDIS, text)
        return receipt.get("offset")

    def expect_everywhere(self, data: str, offset: int | None) -> dict[str, list[bool]]:
        """Every member got the delivery exactly; which ones came compressed, by group."""
        compressed: dict[str, list[bool]] = {}
        expected = {"room": ROOM, "data": data} if offset is None else {"room": ROOM, "data": data, "offset": offset}
        for group, members in self.members.items():
            if group == "publisher":
                continue
            for m in members:
                text, was = m.next_message()
                if offset is not None:
                    self.assertTrue(text.endswith(b',"offset":%d}' % offset), text[-40:])
                self.assertEqual(json.loads(text), expected)
                compressed.setdefault(group, []).append(was)
        return compressed

    def test_a_big_message_reaches_deflate_members_with_its_publishers_compression(self):
        before = self.counters()
        for i in range(PUBLISHES):
            data = json_text(BIG, seed=i).decode()
            compressed = self.expect_everywhere(data, self.publish(data))
            self.assertEqual(compressed["wide"], [True] * 6)
            self.assertEqual(compressed["narrow"], [True] * 2, "compressed by the gateway for the narrow window")
            self.assertEqual(compressed["plain"], [False] * 2)
        after = self.counters()
        self.assertEqual(after["deflated_publishes"] - before["deflated_publishes"], PUBLISHES)
        self.assertGreaterEqual(after["deflated_deliveries"] - before["deflated_deliveries"], PUBLISHES)
        sent = after["from_publisher"] - before["from_publisher"]
        # One frame per Send with wide members: a Send per worker and gateway thread at most.
        self.assertGreaterEqual(sent, PUBLISHES)
        self.assertLessEqual(sent, PUBLISHES * 4)
        # The narrow members' compression was the gateway's own, per Send.
        self.assertGreater(after["compressed"] - before["compressed"], sent)

    def test_a_small_message_is_not_compressed_anywhere(self):
        before = self.counters()
        data = "x" * SMALL
        compressed = self.expect_everywhere(data, self.publish(data))
        self.assertEqual(compressed["wide"], [False] * 6)
        after = self.counters()
        self.assertEqual(after, before)


class PublishDeflateTest(PublishDeflateCases, unittest.TestCase):
    REDIS = True


class HubPublishDeflateTest(PublishDeflateCases, unittest.TestCase):
    REDIS = False


if __name__ == "__main__":
    unittest.main()
