"""permessage-deflate violations and limits (RFC 7692 6, 8; RFC 6455 7.4.1 close codes).

- RSV1 on a control frame or on a message's continuation frame: 1002.
- Compressed data that does not inflate: 1007 (invalid payload data).
- Inflated text that is not UTF-8: 1007.
- A zip bomb: the inflated size counts against --max-message-size as it is
  produced, so the connection closes with 1009 and the gateway's peak memory
  stays far below what the bomb would inflate to.
"""

import os
import sys
import unittest
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from deflate_client import DeflateTestCase, json_text, vm_hwm_kib  # noqa: E402
from framegate_harness import (  # noqa: E402
    OP_BINARY, OP_CLOSE, OP_CONT, OP_PING, OP_TEXT, RSV1, build_frame, close_payload,
)

KIB = 1024
MIB = 1024 * KIB


def raw_deflate(data: bytes, level: int = 6) -> bytes:
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    out = c.compress(data) + c.flush(zlib.Z_SYNC_FLUSH)
    return out[:-4]


class DeflateViolationsTest(DeflateTestCase):
    """RFC 7692 6: RSV1 is allowed on a data message's first frame only; the payload must inflate."""

    def test_rsv1_on_ping(self):
        client, _ = self.open_deflate_client()
        client.send_ping(b"ping", rsv=RSV1)
        self.assert_fails_with(client, 1002)

    def test_rsv1_on_close(self):
        client, _ = self.open_deflate_client()
        client.send_raw(build_frame(OP_CLOSE, close_payload(1000), rsv=RSV1))
        self.assert_fails_with(client, 1002)

    def test_rsv1_on_a_continuation_frame(self):
        client, deflate = self.open_deflate_client()
        data = deflate.compress(json_text(3000))
        client.send_raw(build_frame(OP_TEXT, data[:100], fin=False, rsv=RSV1) +
                        build_frame(OP_CONT, data[100:], rsv=RSV1))
        self.assert_fails_with(client, 1002)

    def test_rsv1_on_a_continuation_of_a_plain_message(self):
        client, _ = self.open_deflate_client()
        client.send_raw(build_frame(OP_TEXT, b"plain", fin=False) + build_frame(OP_CONT, b"more", rsv=RSV1))
        self.assert_fails_with(client, 1002)

    def test_rsv2_and_rsv3_stay_reserved(self):
        for rsv in (2, 1, RSV1 | 2):
            with self.subTest(rsv=rsv):
                client, _ = self.open_deflate_client()
                client.send_text(b"x", rsv=rsv)
                self.assert_fails_with(client, 1002)

    def test_corrupt_compressed_data(self):
        for name, payload in (("reserved block type", b"\xff\xff\xff"),
                              ("stored block length mismatch", b"\x00\x05\x00\x00\x00Hello"),
                              ("distance beyond the start", b"\xf2\x00\x11\x00\x00")):
            with self.subTest(case=name):
                client, _ = self.open_deflate_client()
                client.send_binary(payload, rsv=RSV1)
                self.assert_fails_with(client, 1007)

    def test_good_echo_before_a_corrupt_message_still_arrives(self):
        """Like Autobahn 3.2: what came before the violation is answered first."""
        client, deflate = self.open_deflate_client()
        good = json_text(2000)
        client.send_raw(deflate.frames(OP_TEXT, good) + build_frame(OP_BINARY, b"\xff\xff", rsv=RSV1))
        self.assert_deflate_echo(client, deflate, OP_TEXT, good)
        self.assert_fails_with(client, 1007)

    def test_inflated_text_must_be_utf8(self):
        client, deflate = self.open_deflate_client()
        client.send_raw(deflate.frames(OP_TEXT, b"caf\xc3\xa9 ok " * 100 + b"\xff" + b"tail" * 50))
        self.assert_fails_with(client, 1007)

    def test_inflated_text_cut_inside_a_code_point(self):
        client, deflate = self.open_deflate_client()
        client.send_raw(deflate.frames(OP_TEXT, json_text(500) + b"\xe2\x82", fragments=3))
        self.assert_fails_with(client, 1007)


class ZipBombTest(DeflateTestCase):
    """RFC 7692 8 and RFC 6455 10.4: a small compressed message inflating past the limit closes with 1009."""

    LIMIT = 128 * KIB
    gateway_args = ("--deflate", "--deflate-threshold", "0", "--max-message-size", str(LIMIT))

    def test_64_mib_of_zeros_in_a_64_kib_message(self):
        bomb = raw_deflate(b"\x00" * (64 * MIB), 9)
        self.assertLess(len(bomb), self.LIMIT, "the bomb itself must be under the wire limit")
        before = vm_hwm_kib(self.gateway.pid)
        for fragments in (1, 8):
            with self.subTest(fragments=fragments):
                client, _ = self.open_deflate_client()
                step = -(-len(bomb) // fragments)
                parts = [bomb[i:i + step] for i in range(0, len(bomb), step)]
                client.send_raw(b"".join(build_frame(OP_BINARY if i == 0 else OP_CONT, part,
                                                     fin=i == len(parts) - 1, rsv=RSV1 if i == 0 else 0)
                                         for i, part in enumerate(parts)))
                self.assert_fails_with(client, 1009)
        growth = vm_hwm_kib(self.gateway.pid) - before
        # The inflated size is checked as it is produced: the gateway never
        # holds more than about twice the limit, not the 64 MiB.
        self.assertLess(growth, 8 * 1024, f"gateway peak RSS grew by {growth} KiB for a 64 MiB bomb")

    def test_exactly_the_limit_inflates(self):
        client, deflate = self.open_deflate_client()
        payload = b"\x00" * self.LIMIT
        client.send_raw(deflate.frames(OP_BINARY, payload))
        self.assert_deflate_echo(client, deflate, OP_BINARY, payload, compressed=True)
        client.send_raw(deflate.frames(OP_BINARY, payload + b"\x00"))
        self.assert_fails_with(client, 1009)

    def test_ping_answered_before_the_bomb_is_refused(self):
        client, _ = self.open_deflate_client()
        client.send_raw(build_frame(OP_PING, b"first") + build_frame(OP_BINARY, raw_deflate(b"a" * MIB, 9), rsv=RSV1))
        self.assert_pong(client, b"first")
        self.assert_fails_with(client, 1009)


if __name__ == "__main__":
    unittest.main()
