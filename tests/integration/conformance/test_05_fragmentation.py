"""Autobahn section 5: fragmentation."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from framegate_harness import (  # noqa: E402
    OP_BINARY, OP_CONT, OP_PING, OP_PONG, OP_TEXT, GatewayTestCase, build_frame,
)


def fragment_frames(opcode: int, parts, interleave: dict | None = None) -> bytes:
    """Frames of one fragmented message; `interleave` maps index -> frame bytes sent before part i."""
    interleave = interleave or {}
    frames = []
    for index, part in enumerate(parts):
        frames.append(interleave.get(index, b""))
        frames.append(build_frame(opcode if index == 0 else OP_CONT, part, fin=index == len(parts) - 1))
    return b"".join(frames)


class FragmentedMessagesTest(GatewayTestCase):
    """RFC 6455 5.4: a fragmented text/binary message is delivered (echoed) as one message."""

    def test_text_in_two_fragments(self):
        """Autobahn 5.3."""
        client = self.open_client()
        client.send_fragments(OP_TEXT, [b"fragment1", b"fragment2"])
        self.assert_echo(client, OP_TEXT, b"fragment1fragment2")

    def test_binary_in_three_fragments(self):
        client = self.open_client()
        client.send_fragments(OP_BINARY, [b"\x00\x01", b"\xff" * 300, b"\x80" * 70000])
        self.assert_echo(client, OP_BINARY, b"\x00\x01" + b"\xff" * 300 + b"\x80" * 70000)

    def test_text_in_two_fragments_sent_in_chunks(self):
        """Autobahn 5.4/5.5 variant: each frame trickles in byte by byte."""
        client = self.open_client()
        client.send_raw(fragment_frames(OP_TEXT, [b"fragment1", b"fragment2"]), chunk_size=1, delay=0.001)
        self.assert_echo(client, OP_TEXT, b"fragment1fragment2")

    def test_ping_between_fragments_answered_before_message_completes(self):
        """Autobahn 5.6/5.7: the pong arrives while the message is still open."""
        client = self.open_client()
        client.send_frame(OP_TEXT, b"fragment1", fin=False)
        client.send_ping(b"pong me")
        self.assert_pong(client, b"pong me")
        client.send_frame(OP_CONT, b"fragment2", fin=True)
        self.assert_echo(client, OP_TEXT, b"fragment1fragment2")

    def test_ping_between_fragments_in_one_write(self):
        """Autobahn 5.8 variant: pong first, then the complete message."""
        client = self.open_client()
        client.send_raw(fragment_frames(OP_BINARY, [b"ab", b"cd", b"ef"],
                                        {1: build_frame(OP_PING, b"p1"), 2: build_frame(OP_PING, b"p2")}))
        self.assert_pong(client, b"p1")
        self.assert_pong(client, b"p2")
        self.assert_echo(client, OP_BINARY, b"abcdef")

    def test_unsolicited_pong_between_fragments_is_ignored(self):
        client = self.open_client()
        client.send_raw(fragment_frames(OP_TEXT, [b"a", b"b"], {1: build_frame(OP_PONG, b"x")}))
        self.assert_echo(client, OP_TEXT, b"ab")

    def test_many_one_byte_fragments(self):
        client = self.open_client()
        message = bytes(range(32, 127)) * 3
        client.send_fragments(OP_TEXT, [message[i:i + 1] for i in range(len(message))])
        self.assert_echo(client, OP_TEXT, message)

    def test_empty_first_and_last_fragments(self):
        client = self.open_client()
        client.send_fragments(OP_TEXT, [b"", b"abc", b"", b"def", b""])
        self.assert_echo(client, OP_TEXT, b"abcdef")

    def test_all_fragments_empty(self):
        client = self.open_client()
        client.send_fragments(OP_BINARY, [b"", b"", b""])
        self.assert_echo(client, OP_BINARY, b"")

    def test_messages_after_a_fragmented_one(self):
        client = self.open_client()
        client.send_fragments(OP_TEXT, [b"one", b"two"])
        client.send_binary(b"three")
        self.assert_echo(client, OP_TEXT, b"onetwo")
        self.assert_echo(client, OP_BINARY, b"three")


class FragmentationViolationTest(GatewayTestCase):
    """RFC 6455 5.4 / 5.5: illegal fragmentation fails the connection with 1002."""

    def test_fragmented_ping(self):
        """Autobahn 5.1: control frames must not be fragmented."""
        client = self.open_client()
        client.send_raw(build_frame(OP_PING, b"fragment1", fin=False) + build_frame(OP_CONT, b"fragment2"))
        self.assert_fails_with(client, 1002)

    def test_fragmented_pong(self):
        """Autobahn 5.2."""
        client = self.open_client()
        client.send_raw(build_frame(OP_PONG, b"fragment1", fin=False) + build_frame(OP_CONT, b"fragment2"))
        self.assert_fails_with(client, 1002)

    def test_continuation_with_fin_without_start(self):
        """Autobahn 5.9."""
        client = self.open_client()
        client.send_frame(OP_CONT, b"non-continuation payload", fin=True)
        self.assert_fails_with(client, 1002)

    def test_continuation_without_fin_without_start(self):
        """Autobahn 5.12."""
        client = self.open_client()
        client.send_frame(OP_CONT, b"non-continuation payload", fin=False)
        self.assert_fails_with(client, 1002)

    def test_continuation_after_a_complete_message(self):
        """Autobahn 5.15/5.17 style: the finished message is echoed, the stray continuation fails."""
        client = self.open_client()
        client.send_fragments(OP_TEXT, [b"fragment1", b"fragment2"])
        self.assert_echo(client, OP_TEXT, b"fragment1fragment2")
        client.send_frame(OP_CONT, b"fragment3", fin=True)
        self.assert_fails_with(client, 1002)

    def test_new_text_frame_during_fragmented_message(self):
        """Autobahn 5.18: a data frame (not a continuation) inside an open message."""
        client = self.open_client()
        client.send_raw(build_frame(OP_TEXT, b"fragment1", fin=False) + build_frame(OP_TEXT, b"fragment2"))
        self.assert_fails_with(client, 1002)

    def test_new_binary_frame_during_fragmented_text(self):
        client = self.open_client()
        client.send_raw(build_frame(OP_TEXT, b"fragment1", fin=False)
                        + build_frame(OP_BINARY, b"fragment2", fin=False))
        self.assert_fails_with(client, 1002)

    def test_new_frame_during_fragmented_message_after_pings(self):
        """Autobahn 5.19/5.20 style: pings inside the message are answered, the new data frame fails."""
        client = self.open_client()
        client.send_raw(build_frame(OP_TEXT, b"f1", fin=False) + build_frame(OP_PING, b"p1"))
        self.assert_pong(client, b"p1")
        client.send_frame(OP_TEXT, b"f2", fin=True)
        self.assert_fails_with(client, 1002)


if __name__ == "__main__":
    unittest.main()
