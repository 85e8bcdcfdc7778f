"""Autobahn section 10: messages arriving in many small pieces."""

import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from framegate_harness import (  # noqa: E402
    OP_BINARY, OP_CONT, OP_TEXT, GatewayTestCase, build_frame,
)

CHUNK = 1300  # Autobahn 10.1.1 auto-fragment size


def text_message(size: int) -> bytes:
    unit = "0123456789-κόσμε-𝄞|".encode("utf-8")
    raw = (unit * (size // len(unit) + 1))[:size]
    complete = raw.decode("utf-8", "ignore").encode("utf-8")
    return complete + b"." * (size - len(complete))


class AutoFragmentationTest(GatewayTestCase):
    """RFC 6455 5.4: a message is the same whatever TCP segmentation or framing carries it (Autobahn 10.1)."""

    def test_large_text_frame_in_small_tcp_writes(self):
        client = self.open_client()
        payload = text_message(256 * 1024)
        client.send_frame(OP_TEXT, payload, chunk_size=CHUNK)
        self.assert_echo(client, OP_TEXT, payload)

    def test_text_message_in_1300_byte_fragments_each_its_own_write(self):
        """Autobahn 10.1.1: 65536 bytes auto-fragmented into 1300-byte frames."""
        client = self.open_client()
        payload = text_message(65536)
        parts = [payload[i:i + CHUNK] for i in range(0, len(payload), CHUNK)]
        for index, part in enumerate(parts):
            client.send_raw(build_frame(OP_TEXT if index == 0 else OP_CONT, part, fin=index == len(parts) - 1))
        self.assert_echo(client, OP_TEXT, payload)

    def test_pipelined_messages_in_random_sized_writes(self):
        client = self.open_client()
        rng = random.Random(6455)
        payloads = [bytes(rng.getrandbits(8) for _ in range(rng.choice((0, 1, 125, 126, 5000, 20000))))
                    for _ in range(12)]
        stream = b"".join(build_frame(OP_BINARY, p) for p in payloads)
        offset = 0
        while offset < len(stream):
            size = rng.randint(1, 4000)
            client.send_raw(stream[offset:offset + size])
            offset += size
        for payload in payloads:
            self.assert_echo(client, OP_BINARY, payload)


if __name__ == "__main__":
    unittest.main()
