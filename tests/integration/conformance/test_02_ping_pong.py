"""Autobahn section 2: pings and pongs."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from framegate_harness import (  # noqa: E402
    OP_PING, OP_TEXT, GatewayTestCase, build_frame,
)


class PingPongTest(GatewayTestCase):
    """RFC 6455 5.5.2 / 5.5.3: a ping is answered by a pong with the same payload; unsolicited pongs are ignored."""

    def test_ping_payload_lengths_0_to_125(self):
        client = self.open_client()
        for length in range(126):
            payload = bytes((length + i) & 0x7F for i in range(length))
            client.send_ping(payload)
            self.assert_pong(client, payload)

    def test_ping_with_text_payload(self):
        client = self.open_client()
        client.send_ping(b"Hello, world!")
        self.assert_pong(client, b"Hello, world!")

    def test_ping_with_binary_payload(self):
        client = self.open_client()
        payload = bytes([0x00, 0xFF, 0xFE, 0xFD, 0xFC, 0xFB, 0x00, 0xFF])
        client.send_ping(payload)
        self.assert_pong(client, payload)

    def test_ping_125_bytes_sent_in_1_byte_chunks(self):
        client = self.open_client()
        payload = b"\xfe" * 125
        client.send_ping(payload, chunk_size=1, delay=0.001)
        self.assert_pong(client, payload)

    def test_ping_126_bytes_fails_with_1002(self):
        """RFC 6455 5.5: control frames carry at most 125 bytes (Autobahn 2.5)."""
        client = self.open_client()
        client.send_ping(b"\xfe" * 126)
        self.assert_fails_with(client, 1002)

    def test_unsolicited_empty_pong_is_ignored(self):
        client = self.open_client()
        client.send_pong(b"")
        self.roundtrip(client, OP_TEXT, b"after pong")

    def test_unsolicited_pong_with_payload_is_ignored(self):
        client = self.open_client()
        client.send_pong(b"unsolicited pong payload")
        self.roundtrip(client, OP_TEXT, b"after pong")

    def test_unsolicited_pong_then_ping(self):
        """Autobahn 2.9: only the ping is answered."""
        client = self.open_client()
        client.send_pong(b"unsolicited pong payload")
        client.send_ping(b"ping payload")
        self.assert_pong(client, b"ping payload")

    def test_ten_pings_in_a_row_all_answered(self):
        client = self.open_client()
        payloads = [f"payload-{i}".encode() for i in range(10)]
        client.send_raw(b"".join(build_frame(OP_PING, p) for p in payloads))
        for payload in payloads:
            self.assert_pong(client, payload)

    def test_ten_pings_sent_in_chunks_all_answered(self):
        client = self.open_client()
        payloads = [f"payload-{i}".encode() for i in range(10)]
        client.send_raw(b"".join(build_frame(OP_PING, p) for p in payloads), chunk_size=1, delay=0.0005)
        for payload in payloads:
            self.assert_pong(client, payload)


if __name__ == "__main__":
    unittest.main()
