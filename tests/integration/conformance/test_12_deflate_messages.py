"""Autobahn section 12: compressed messages of many sizes and kinds (permessage-deflate, RFC 7692).

Autobahn 12.x sends each kind of data (JSON, an image, human-readable text,
HTML, a PDF) as messages of 16 B to 128 KiB with the default offer and
checks the echo; so does this module, with fewer messages per size, plus
the framing variants of a compressed message (fragments, TCP pieces,
control frames between fragments). The gateway runs with --deflate and
--deflate-threshold 0, so every echo that compression makes smaller comes
back compressed.
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from deflate_client import (  # noqa: E402
    DeflateTestCase, html_text, human_text, image_like, json_text, random_bytes,
)
from framegate_harness import OP_BINARY, OP_PING, OP_TEXT, build_frame  # noqa: E402

SIZES = (16, 64, 256, 1024, 4096, 8192, 16384, 32768, 65536, 131072)
PER_SIZE = 8  # Autobahn sends up to 1000; a few show the same and keep the suite quick


class CompressedMessagesTest(DeflateTestCase):
    """RFC 7692 7.2: each size echoes byte-identical; compressible echoes come back compressed."""

    def check(self, opcode: int, make, compressible: bool = True) -> None:
        client, deflate = self.open_deflate_client()
        for size in SIZES:  # no subTest: after a failure the echoes would be out of step
            payload = make(size)
            client.send_raw(b"".join(deflate.frames(opcode, payload) for _ in range(PER_SIZE)))
            for _ in range(PER_SIZE):
                # Up to ~64 bytes compression may not pay off: then the echo is plain.
                self.assert_deflate_echo(client, deflate, opcode, payload,
                                         compressed=True if compressible and size >= 256 else None)

    def test_12_1_json_text(self):
        self.check(OP_TEXT, json_text)

    def test_12_2_image_binary(self):
        self.check(OP_BINARY, image_like)

    def test_12_3_human_readable_text(self):
        self.check(OP_TEXT, human_text)

    def test_12_4_html_text(self):
        self.check(OP_TEXT, html_text)

    def test_12_5_incompressible_binary(self):
        """What does not shrink is echoed plain (no RSV1): byte-identical either way."""
        client, deflate = self.open_deflate_client()
        for size in SIZES:
            payload = random_bytes(size)
            client.send_raw(deflate.frames(OP_BINARY, payload))
            self.assert_deflate_echo(client, deflate, OP_BINARY, payload, compressed=False)

    def test_empty_messages(self):
        """RFC 7692 7.2.3.6: an empty message compresses to 0x00; a compressed empty payload is empty too."""
        client, deflate = self.open_deflate_client()
        for opcode in (OP_TEXT, OP_BINARY):
            client.send_raw(deflate.frames(opcode, b""))
            self.assert_deflate_echo(client, deflate, opcode, b"")
            client.send_raw(build_frame(opcode, b"", rsv=4))
            self.assert_deflate_echo(client, deflate, opcode, b"")


class CompressedFramingTest(DeflateTestCase):
    """RFC 7692 6: RSV1 on the first frame marks the whole message, however it is framed or cut."""

    def test_compressed_message_in_many_fragments(self):
        client, deflate = self.open_deflate_client()
        for size, fragments in ((4096, 2), (65536, 17), (131072, 100)):
            payload = json_text(size, seed=size)
            client.send_raw(deflate.frames(OP_TEXT, payload, fragments=fragments))
            self.assert_deflate_echo(client, deflate, OP_TEXT, payload, compressed=True)

    def test_compressed_message_in_small_tcp_writes(self):
        client, deflate = self.open_deflate_client()
        payload = human_text(20000)
        client.send_raw(deflate.frames(OP_TEXT, payload, fragments=3), chunk_size=97)
        self.assert_deflate_echo(client, deflate, OP_TEXT, payload, compressed=True)

    def test_pings_between_compressed_fragments(self):
        client, deflate = self.open_deflate_client()
        payload = json_text(30000)
        first, second, third = deflate.frame_list(OP_TEXT, payload, fragments=3)
        client.send_raw(first + build_frame(OP_PING, b"one") + second + build_frame(OP_PING, b"two") + third)
        self.assert_pong(client, b"one")
        self.assert_pong(client, b"two")
        self.assert_deflate_echo(client, deflate, OP_TEXT, payload, compressed=True)

    def test_compressed_and_plain_messages_interleave(self):
        client, deflate = self.open_deflate_client()
        messages = [(OP_TEXT, json_text(2000, seed=i), i % 2 == 0) for i in range(10)]
        client.send_raw(b"".join(deflate.frames(op, p) if compress else build_frame(op, p)
                                 for op, p, compress in messages))
        for op, payload, _ in messages:
            self.assert_deflate_echo(client, deflate, op, payload, compressed=True)

    def test_many_connections_each_their_own_stream(self):
        """Half-read compressed messages of many connections at once: no state leaks between them."""
        clients = [self.open_deflate_client() for _ in range(6)]
        payloads = [json_text(3000 + 500 * i, seed=i) for i in range(len(clients))]
        messages = [b"".join(deflate.frame_list(OP_TEXT, payload, fragments=4))
                    for (_, deflate), payload in zip(clients, payloads)]
        for (client, _), frames in zip(clients, messages):
            client.send_raw(frames[:len(frames) // 2])  # every message open at the same time
        for (client, _), frames in zip(clients, messages):
            client.send_raw(frames[len(frames) // 2:])
        for (client, deflate), payload in zip(clients, payloads):
            self.assert_deflate_echo(client, deflate, OP_TEXT, payload, compressed=True)


class ThresholdTest(DeflateTestCase):
    """--deflate-threshold: smaller messages go uncompressed (RSV1 clear); the client may still compress."""

    gateway_args = ("--deflate", "--deflate-threshold", "1024")

    def test_below_and_at_the_threshold(self):
        client, deflate = self.open_deflate_client()
        for size, compressed in ((1023, False), (1024, True), (100, False), (5000, True)):
            payload = json_text(size)
            client.send_raw(deflate.frames(OP_TEXT, payload))
            self.assert_deflate_echo(client, deflate, OP_TEXT, payload, compressed=compressed)
            client.send_frame(OP_TEXT, payload)  # sent plain: the echo follows the same rule
            self.assert_deflate_echo(client, deflate, OP_TEXT, payload, compressed=compressed)


if __name__ == "__main__":
    unittest.main()
