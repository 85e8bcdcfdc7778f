"""Autobahn section 3: reserved bits without a negotiated extension."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from framegate_harness import (  # noqa: E402
    OP_BINARY, OP_CLOSE, OP_PING, OP_TEXT, RSV1, RSV2, RSV3, GatewayTestCase, build_frame, close_payload,
)


class ReservedBitsTest(GatewayTestCase):
    """RFC 6455 5.2: a non-zero RSV bit with no extension defining it fails the connection (1002)."""

    def test_rsv1_on_text(self):
        """Autobahn 3.1."""
        client = self.open_client()
        client.send_text(b"Hello, world!", rsv=RSV1)
        self.assert_fails_with(client, 1002)

    def test_rsv2_on_text_after_a_good_echo(self):
        """Autobahn 3.2: the good message is echoed, then the connection fails."""
        client = self.open_client()
        client.send_raw(build_frame(OP_TEXT, b"good") + build_frame(OP_TEXT, b"bad", rsv=RSV2))
        self.assert_echo(client, OP_TEXT, b"good")
        self.assert_fails_with(client, 1002)

    def test_rsv3_on_text_between_good_text_and_ping(self):
        """Autobahn 3.3: echo, then fail; the ping after the bad frame is never answered."""
        client = self.open_client()
        client.send_raw(build_frame(OP_TEXT, b"good") + build_frame(OP_TEXT, b"bad", rsv=RSV3)
                        + build_frame(OP_PING, b"unanswered"))
        self.assert_echo(client, OP_TEXT, b"good")
        self.assert_fails_with(client, 1002)

    def test_rsv1_rsv3_on_text_sent_in_chunks(self):
        """Autobahn 3.4."""
        client = self.open_client()
        client.send_raw(build_frame(OP_TEXT, b"good") + build_frame(OP_TEXT, b"bad", rsv=RSV1 | RSV3)
                        + build_frame(OP_PING, b"unanswered"), chunk_size=1, delay=0.001)
        self.assert_echo(client, OP_TEXT, b"good")
        self.assert_fails_with(client, 1002)

    def test_rsv1_rsv3_on_binary(self):
        """Autobahn 3.5."""
        client = self.open_client()
        client.send_binary(bytes([0x00, 0xFF, 0xFE, 0xFD]), rsv=RSV1 | RSV3)
        self.assert_fails_with(client, 1002)

    def test_rsv2_rsv3_on_ping(self):
        """Autobahn 3.6: no pong may come back."""
        client = self.open_client()
        client.send_ping(b"ping", rsv=RSV2 | RSV3)
        self.assert_fails_with(client, 1002)

    def test_all_rsv_bits_on_close(self):
        """Autobahn 3.7: the close is a violation, so 1002 comes back instead of 1000."""
        client = self.open_client()
        client.send_raw(build_frame(OP_CLOSE, close_payload(1000), rsv=RSV1 | RSV2 | RSV3))
        self.assert_fails_with(client, 1002)

    def test_each_rsv_bit_on_binary_after_a_good_echo(self):
        for rsv in (RSV1, RSV2, RSV3):
            with self.subTest(rsv=rsv):
                client = self.open_client()
                self.roundtrip(client, OP_BINARY, b"\x01\x02")
                client.send_binary(b"\x03", rsv=rsv)
                self.assert_fails_with(client, 1002)


if __name__ == "__main__":
    unittest.main()
