"""Autobahn section 1: basic framing (text and binary echo, payload length forms)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from framegate_harness import (  # noqa: E402
    OP_BINARY, OP_TEXT, GatewayTestCase, build_frame,
)

# Lengths at the edges of the 7-bit, 16-bit and 64-bit length forms (RFC 6455 5.2).
EDGE_LENGTHS = (0, 125, 126, 127, 128, 65535, 65536)


def text_payload(length: int) -> bytes:
    return (b"*" * length)


def binary_payload(length: int) -> bytes:
    return bytes((i * 7 + 3) & 0xFF for i in range(length))


class TextFramingTest(GatewayTestCase):
    """RFC 6455 5.2 / 5.6: single-frame text messages of every length form are echoed (Autobahn 1.1)."""

    def test_text_lengths(self):
        client = self.open_client()
        for length in EDGE_LENGTHS:
            with self.subTest(length=length):
                self.roundtrip(client, OP_TEXT, text_payload(length))

    def test_text_65536_sent_in_chunks_of_997(self):
        client = self.open_client()
        self.roundtrip(client, OP_TEXT, text_payload(65536), chunk_size=997)

    def test_text_small_sent_byte_by_byte(self):
        client = self.open_client()
        self.roundtrip(client, OP_TEXT, b"Hello, framegate!", chunk_size=1, delay=0.002)


class BinaryFramingTest(GatewayTestCase):
    """RFC 6455 5.2 / 5.6: single-frame binary messages of every length form are echoed (Autobahn 1.2)."""

    def test_binary_lengths(self):
        client = self.open_client()
        for length in EDGE_LENGTHS:
            with self.subTest(length=length):
                self.roundtrip(client, OP_BINARY, binary_payload(length))

    def test_binary_65536_sent_in_chunks_of_997(self):
        client = self.open_client()
        self.roundtrip(client, OP_BINARY, binary_payload(65536), chunk_size=997)

    def test_binary_all_byte_values(self):
        client = self.open_client()
        self.roundtrip(client, OP_BINARY, bytes(range(256)) * 4)

    def test_several_messages_in_one_write_are_echoed_in_order(self):
        client = self.open_client()
        payloads = [binary_payload(n) for n in (1, 200, 70000, 0, 5)]
        client.send_raw(b"".join(build_frame(OP_BINARY, p) for p in payloads))
        for payload in payloads:
            self.assert_echo(client, OP_BINARY, payload)


class FrameHeaderViolationTest(GatewayTestCase):
    """RFC 6455 5.1 and 5.2: unmasked client frames and 64-bit lengths with the MSB set fail with 1002."""

    def test_unmasked_text_frame(self):
        client = self.open_client()
        client.send_text(b"not masked", mask=False)
        self.assert_fails_with(client, 1002)

    def test_unmasked_frame_after_a_good_echo(self):
        client = self.open_client()
        self.roundtrip(client, OP_TEXT, b"good")
        client.send_binary(b"\x00\x01", mask=False)
        self.assert_fails_with(client, 1002)

    def test_64bit_length_with_most_significant_bit_set(self):
        client = self.open_client()
        header = build_frame(OP_BINARY, b"", length=(1 << 63) | 5, length_form=64)
        client.send_raw(header + b"12345")
        self.assert_fails_with(client, 1002)


if __name__ == "__main__":
    unittest.main()
