"""The client seam (issue #12): no one client can take the gateway down.

Every byte queued for a client counts toward --max-send-queue (pongs
included); connections still in their handshake count toward
--max-connections; per-IP caps and handshake, message and byte rate limits;
a duplicate Origin is refused.
"""

import os
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from framegate_harness import (  # noqa: E402
    OP_BINARY, OP_CLOSE, OP_PING, OP_PONG, OP_TEXT, GatewayTestCase, HandshakeError, WsClient, WsTimeout, build_frame,
    scrape_metrics,
)

SEND_QUEUE = 65536
# What may sit past the limit: the one close frame the gateway itself sends.
SEND_QUEUE_SLACK = 256
FLOOD_BYTES = 16 * 1024 * 1024


class PingFloodBase(GatewayTestCase):
    """A client sends pings as fast as it can and never reads (issue #12, item 4)."""

    # The gateway still has the whole flood to parse when the client starts
    # reading; under a sanitizer that takes seconds. A liveness bound, not a
    # speed check.
    io_timeout = 30.0

    def open_reluctant_client(self) -> WsClient:
        """A client with a tiny receive buffer, so the gateway's pongs pile up on its side."""
        client = WsClient(self.gateway.host, self.gateway.port, timeout=self.io_timeout)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.settimeout(self.io_timeout)
        sock.connect((self.gateway.host, self.gateway.port))
        client.sock = sock
        self.addCleanup(client.close)
        client.handshake()
        return client

    def flood_pings(self, client: WsClient) -> int:
        """Sends FLOOD_BYTES of pings (less if the gateway ends the connection); returns the bytes sent."""
        burst = b"".join(build_frame(OP_PING, b"p" * 125) for _ in range(512))
        sent = 0
        try:
            while sent < FLOOD_BYTES:
                client.sock.sendall(burst)
                sent += len(burst)
        except OSError:
            pass  # the gateway ended the connection: bounded too
        return sent

    def wait_until_read(self, sent: int) -> None:
        """Until the gateway has read `sent` bytes from its clients (a liveness bound, not a speed check)."""
        deadline = time.monotonic() + 2 * self.io_timeout
        while scrape_metrics(self.gateway)["framegate_gateway_socket_read_bytes_total"] < sent:
            self.assertLess(time.monotonic(), deadline, f"the gateway did not read the {sent} bytes of pings")
            time.sleep(0.1)

    def drain_pongs(self, client: WsClient) -> int:
        """Reads the pongs that fitted until none comes for a second; returns how many."""
        pongs = 0
        while True:
            try:
                frame = client.recv_frame(1.0)
            except WsTimeout:
                return pongs
            self.assertEqual(frame.opcode, OP_PONG, frame.describe())
            pongs += 1

    def assert_queue_bounded(self) -> dict:
        metrics = scrape_metrics(self.gateway)
        queued = metrics["framegate_gateway_send_queue_bytes"]
        self.assertLessEqual(queued, SEND_QUEUE + SEND_QUEUE_SLACK,
                             f"{queued:.0f} bytes queued for a client that pings and never reads")
        return metrics


class PingFloodCloseTest(PingFloodBase):
    gateway_args = ("--max-send-queue", str(SEND_QUEUE), "--sndbuf", "4096", "--admin", "127.0.0.1:0",
                    "--close-timeout", "30")

    def test_pongs_count_toward_the_send_queue_and_close_1008(self):
        client = self.open_reluctant_client()
        self.flood_pings(client)
        metrics = self.assert_queue_bounded()
        self.assertGreaterEqual(metrics['framegate_gateway_backpressure_events_total{action="closed"}'], 1)
        # Reading now: the pongs that fitted, then the close with 1008.
        while True:
            frame = self.receive_frame(client, "pongs, then a close 1008")
            if frame.opcode == OP_CLOSE:
                self.assertEqual(frame.close_code, 1008, frame.describe())
                break
            self.assertEqual(frame.opcode, OP_PONG, frame.describe())


class PingFloodDropTest(PingFloodBase):
    gateway_args = ("--max-send-queue", str(SEND_QUEUE), "--sndbuf", "4096", "--admin", "127.0.0.1:0",
                    "--send-queue-policy", "drop")

    def test_pongs_past_the_send_queue_are_dropped_and_counted(self):
        client = self.open_reluctant_client()
        # Every ping parsed first: then what is queued is all there will be.
        self.wait_until_read(self.flood_pings(client))
        metrics = self.assert_queue_bounded()
        self.assertGreaterEqual(metrics['framegate_gateway_backpressure_events_total{action="pong_dropped"}'], 1)
        # The connection stays usable. Its queue is full of pongs, and the
        # drop policy would drop a message too: take the pongs that fitted,
        # then the echo comes. (Sent while pongs still arrived, it raced
        # them for room and was sometimes dropped.)
        self.assertGreaterEqual(self.drain_pongs(client), 1)
        client.send_text(b"still here")
        frame = self.receive_frame(client, "the echo")
        self.assertEqual((frame.opcode, frame.payload), (OP_TEXT, b"still here"), frame.describe())


class PendingHandshakesCountTest(GatewayTestCase):
    """Sockets that have not finished their handshake hold a slot of --max-connections (issue #12, item 8)."""

    gateway_args = ("--max-connections", "2", "--handshake-timeout", "30")

    def test_silent_sockets_fill_the_connection_limit(self):
        silent = [self.connect(), self.connect()]
        late = self.connect()
        self.assert_refused(late.request_handshake(), 503)
        silent[0].close()
        self.assert_eventually_accepted()

class DuplicateOriginTest(GatewayTestCase):
    """A second Origin header is refused (issue #12, item 9): it was judged by its first copy while apps saw the last."""

    gateway_args = ("--origin", "http://good.example")

    def test_two_origins_get_403_even_if_the_first_is_allowed(self):
        client = self.connect()
        response = client.request_handshake(headers=[("Origin", "http://good.example"),
                                                     ("Origin", "http://evil.example")])
        self.assert_refused(response, 403)

    def test_one_allowed_origin_is_accepted(self):
        client = self.open_client(headers={"Origin": "http://good.example"})
        self.roundtrip(client, OP_TEXT, b"welcome")


class PerIpCapTest(GatewayTestCase):
    """--max-connections-per-ip: one address cannot hold every slot (issue #12, item 8)."""

    gateway_args = ("--max-connections-per-ip", "2", "--admin", "127.0.0.1:0")

    def test_third_socket_of_one_address_gets_429_until_one_leaves(self):
        first = self.open_client()
        self.open_client()
        self.assert_refused(self.connect().request_handshake(), 429)
        metrics = scrape_metrics(self.gateway)
        self.assertEqual(metrics["framegate_gateway_connections_refused_per_ip_total"], 1)
        first.close()
        deadline = time.monotonic() + 5.0
        while True:
            client = self.connect()
            response = client.request_handshake()
            if response.status == 101:
                return
            self.assertEqual(response.status, 429, response.describe())
            self.assertLess(time.monotonic(), deadline, "the address's slot was never released")
            time.sleep(0.1)


class PerIpRefusalsHoldNoSlotTest(GatewayTestCase):
    """A socket refused by a per-IP limit does not hold a slot of --max-connections while it drains."""

    gateway_args = ("--max-connections", "2", "--max-connections-per-ip", "1")

    def test_refused_sockets_left_open_do_not_fill_the_gateway(self):
        self.open_client()
        for _ in range(3):  # each stays connected after its 429
            self.assert_refused(self.connect().request_handshake(), 429)


class HandshakeRateTest(GatewayTestCase):
    """--handshake-rate: a token bucket per address; past it 429 with Retry-After (issue #12, item 8)."""

    # One new socket every 10 s after a burst of 3: the test's connects come far faster.
    gateway_args = ("--handshake-rate", "0.1", "--handshake-burst", "3", "--admin", "127.0.0.1:0")

    def test_fourth_quick_handshake_gets_429_with_retry_after(self):
        for _ in range(3):
            self.open_client()
        response = self.connect().request_handshake()
        self.assert_refused(response, 429)
        retry_after = int(response.header("Retry-After") or "0")
        self.assertGreaterEqual(retry_after, 1, response.describe())
        self.assertLessEqual(retry_after, 10, response.describe())
        metrics = scrape_metrics(self.gateway)
        self.assertEqual(metrics['framegate_gateway_rate_limited_total{what="handshake",action="refused"}'], 1)
        self.assertEqual(metrics['framegate_gateway_handshakes_refused_total{status="429"}'], 1)


class MessageRateCloseTest(GatewayTestCase):
    """--message-rate with the close policy: the connection past the rate is closed with 1008."""

    # A burst of one message, then one every 10 s.
    gateway_args = ("--message-rate", "0.1", "--admin", "127.0.0.1:0")

    def test_second_quick_message_closes_1008(self):
        client = self.open_client()
        self.roundtrip(client, OP_TEXT, b"first")
        client.send_text(b"second")
        self.assert_close(client, 1008, "message rate exceeded")
        metrics = scrape_metrics(self.gateway)
        self.assertEqual(metrics['framegate_gateway_rate_limited_total{what="message",action="closed"}'], 1)


class MessageRateDropTest(GatewayTestCase):
    """--message-rate with the drop policy: messages past the rate are dropped and counted, the connection stays."""

    gateway_args = ("--message-rate", "0.1", "--rate-limit-policy", "drop", "--admin", "127.0.0.1:0")

    def test_messages_past_the_rate_are_dropped(self):
        client = self.open_client()
        self.roundtrip(client, OP_TEXT, b"first")
        client.send_text(b"second")
        client.send_text(b"third")
        client.send_ping(b"after")
        self.assert_pong(client, b"after")  # nothing echoed before it
        metrics = scrape_metrics(self.gateway)
        self.assertEqual(metrics['framegate_gateway_rate_limited_total{what="message",action="dropped"}'], 2)


class ByteRateTest(GatewayTestCase):
    """--byte-rate: a message larger than the budget passes on a full bucket, then the debt is paid first."""

    gateway_args = ("--byte-rate", "1", "--admin", "127.0.0.1:0")

    def test_bytes_past_the_rate_close_1008(self):
        client = self.open_client()
        self.roundtrip(client, OP_BINARY, b"x" * 100)
        client.send_binary(b"y" * 100)
        self.assert_close(client, 1008, "byte rate exceeded")
        metrics = scrape_metrics(self.gateway)
        self.assertEqual(metrics['framegate_gateway_rate_limited_total{what="bytes",action="closed"}'], 1)


if __name__ == "__main__":
    unittest.main()
