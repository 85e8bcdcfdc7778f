"""Autobahn section 9 (limits and large messages) and the gateway's size limits."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from framegate_harness import (  # noqa: E402
    OP_BINARY, OP_CONT, OP_PING, OP_TEXT, GatewayTestCase, build_frame,
)

KIB = 1024
MIB = 1024 * KIB
LARGE_SIZES = (64 * KIB, 256 * KIB, 1 * MIB)  # 1 MiB is the default --max-message-size
FRAGMENT_SIZES = (64, 4 * KIB)

SMALL_LIMIT = 64 * KIB
FRAGMENT_LIMIT = 8


def text_of_size(size: int) -> bytes:
    """Valid UTF-8 of exactly `size` bytes, with multi-byte code points throughout."""
    unit = "abc-κόσμε-𝄞-€-".encode("utf-8")
    raw = (unit * (size // len(unit) + 1))[:size]
    complete = raw.decode("utf-8", "ignore").encode("utf-8")  # drops a cut-off last code point
    return complete + b"x" * (size - len(complete))


def binary_of_size(size: int) -> bytes:
    pattern = bytes(range(256))
    return (pattern * (size // 256 + 1))[:size]


def payload_for(opcode: int, size: int) -> bytes:
    return text_of_size(size) if opcode == OP_TEXT else binary_of_size(size)


def split(data: bytes, size: int) -> list:
    return [data[i:i + size] for i in range(0, len(data), size)] or [b""]


class LargeMessageTest(GatewayTestCase):
    """RFC 6455 5.4 / 5.6: messages from 64 KiB to 1 MiB come back exactly (Autobahn 9.1, 9.2, 9.3, 9.4)."""

    def check_single_frame(self, opcode: int) -> None:
        for size in LARGE_SIZES:
            with self.subTest(size=size):
                client = self.open_client()
                self.roundtrip(client, opcode, payload_for(opcode, size))
                self.roundtrip(client, opcode, payload_for(opcode, size))  # and again, same connection

    def check_fragmented(self, opcode: int) -> None:
        for size in LARGE_SIZES:
            for fragment_size in FRAGMENT_SIZES:
                with self.subTest(size=size, fragment_size=fragment_size):
                    client = self.open_client()
                    payload = payload_for(opcode, size)
                    client.send_fragments(opcode, split(payload, fragment_size))
                    self.assert_echo(client, opcode, payload)

    def test_text_single_frame(self):
        self.check_single_frame(OP_TEXT)

    def test_binary_single_frame(self):
        self.check_single_frame(OP_BINARY)

    def test_text_fragmented(self):
        self.check_fragmented(OP_TEXT)

    def test_binary_fragmented(self):
        self.check_fragmented(OP_BINARY)


class MessageSizeLimitTest(GatewayTestCase):
    """RFC 6455 7.4.1: a message larger than --max-message-size fails the connection with 1009."""

    gateway_args = ("--max-message-size", str(SMALL_LIMIT), "--max-fragments", str(FRAGMENT_LIMIT))

    def test_message_of_exactly_the_limit_is_echoed(self):
        client = self.open_client()
        for opcode in (OP_TEXT, OP_BINARY):
            with self.subTest(opcode=opcode):
                self.roundtrip(client, opcode, payload_for(opcode, SMALL_LIMIT))

    def test_fragments_adding_up_to_exactly_the_limit_are_echoed(self):
        client = self.open_client()
        payload = binary_of_size(SMALL_LIMIT)
        client.send_fragments(OP_BINARY, split(payload, SMALL_LIMIT // 4))
        self.assert_echo(client, OP_BINARY, payload)

    def test_one_frame_announced_one_byte_over_the_limit(self):
        """Only the header and the first KiB are sent: the announced length alone is too big."""
        for opcode in (OP_TEXT, OP_BINARY):
            with self.subTest(opcode=opcode):
                client = self.open_client()
                payload = payload_for(opcode, SMALL_LIMIT + 1)
                frame = build_frame(opcode, payload)
                client.send_raw(frame[:len(frame) - len(payload) + KIB])
                self.assert_fails_with(client, 1009)

    def test_one_frame_announced_far_over_the_limit(self):
        client = self.open_client()
        client.send_raw(build_frame(OP_BINARY, b"", length=1 << 40, length_form=64) + b"\x00" * 16)
        self.assert_fails_with(client, 1009)

    def test_fragments_adding_up_to_limit_plus_one(self):
        client = self.open_client()
        fragments = split(binary_of_size(SMALL_LIMIT), SMALL_LIMIT // 4) + [b"!"]
        client.send_fragments(OP_BINARY, fragments)
        self.assert_fails_with(client, 1009)

    def test_unfinished_fragments_over_the_limit(self):
        """The total is already over the limit before the final fragment: 1009 without it."""
        client = self.open_client()
        half = text_of_size(SMALL_LIMIT // 2 + 1)
        client.send_raw(build_frame(OP_TEXT, half, fin=False) + build_frame(OP_CONT, half, fin=False))
        self.assert_fails_with(client, 1009)

    def test_limit_applies_per_message(self):
        client = self.open_client()
        for _ in range(3):
            self.roundtrip(client, OP_BINARY, binary_of_size(SMALL_LIMIT - 10))


class LimitsFromEnvironmentTest(GatewayTestCase):
    """Contract: each option is also read from FRAMEGATE_<NAME>; RFC 6455 7.4.1 code 1009."""

    gateway_env = {"FRAMEGATE_MAX_MESSAGE_SIZE": str(SMALL_LIMIT), "FRAMEGATE_MAX_FRAGMENTS": str(FRAGMENT_LIMIT)}

    def test_max_message_size_from_environment(self):
        client = self.open_client()
        self.roundtrip(client, OP_BINARY, binary_of_size(SMALL_LIMIT))
        client.send_binary(binary_of_size(SMALL_LIMIT + 1))
        self.assert_fails_with(client, 1009)

    def test_max_fragments_from_environment(self):
        client = self.open_client()
        client.send_fragments(OP_TEXT, [b"y"] * (FRAGMENT_LIMIT + 1))
        self.assert_fails_with(client, 1009)


class FragmentCountLimitTest(GatewayTestCase):
    """RFC 6455 5.4 / 7.4.1: more than --max-fragments fragments in one message fails with 1009."""

    gateway_args = ("--max-fragments", str(FRAGMENT_LIMIT))

    def test_exactly_max_fragments_is_echoed(self):
        client = self.open_client()
        for opcode in (OP_TEXT, OP_BINARY):
            with self.subTest(opcode=opcode):
                parts = [b"part%d" % i for i in range(FRAGMENT_LIMIT)]
                client.send_fragments(opcode, parts)
                self.assert_echo(client, opcode, b"".join(parts))

    def test_interleaved_pings_are_not_fragments(self):
        client = self.open_client()
        parts = [b"p%d" % i for i in range(FRAGMENT_LIMIT)]
        pings = {i: build_frame(OP_PING, b"%d" % i) for i in (1, 4, 7)}
        data = b"".join(pings.get(i, b"") + build_frame(OP_TEXT if i == 0 else OP_CONT, part,
                                                          fin=i == FRAGMENT_LIMIT - 1)
                        for i, part in enumerate(parts))
        client.send_raw(data)
        for i in sorted(pings):
            self.assert_pong(client, b"%d" % i)
        self.assert_echo(client, OP_TEXT, b"".join(parts))

    def test_max_fragments_plus_one(self):
        for opcode in (OP_TEXT, OP_BINARY):
            with self.subTest(opcode=opcode):
                client = self.open_client()
                client.send_fragments(opcode, [b"x"] * (FRAGMENT_LIMIT + 1))
                self.assert_fails_with(client, 1009)

    def test_max_fragments_plus_one_empty_fragments(self):
        client = self.open_client()
        client.send_fragments(OP_BINARY, [b""] * (FRAGMENT_LIMIT + 1))
        self.assert_fails_with(client, 1009)


if __name__ == "__main__":
    unittest.main()
