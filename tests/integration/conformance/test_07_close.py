"""Autobahn section 7: close handling."""

import os
import re
import signal
import socket
import sys
import unittest
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from framegate_harness import (  # noqa: E402
    OP_BINARY, OP_CLOSE, OP_PING, OP_PONG, OP_TEXT, TARGET, GatewayTestCase, build_frame, close_payload,
)

VALID_CODES = (1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999)
INVALID_CODES = (0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535)


class CloseHandshakeTest(GatewayTestCase):
    """RFC 6455 5.5.1 / 7.1: a client close is answered with a close of the same code, then TCP is closed."""

    def test_close_1000_answered_then_tcp_closed(self):
        """Autobahn 7.1.1 (after an echo)."""
        client = self.open_client()
        self.roundtrip(client, OP_TEXT, b"Hello World!")
        client.send_close(1000)
        self.assert_close(client, 1000, reply=False)

    def test_empty_close_answered_with_empty_close(self):
        """Autobahn 7.3.1."""
        client = self.open_client()
        client.send_close(None)
        self.assert_close(client, None, reply=False)

    def test_close_with_reason(self):
        """Autobahn 7.3.3."""
        client = self.open_client()
        client.send_close(1000, "Hello World!")
        self.assert_close(client, 1000, reply=False)

    def test_close_with_125_byte_payload(self):
        """Autobahn 7.3.4: code plus a 123-byte reason is the longest legal close."""
        client = self.open_client()
        client.send_close(1000, "*" * 123)
        self.assert_close(client, 1000, reply=False)

    def test_close_with_utf8_multibyte_reason(self):
        client = self.open_client()
        client.send_close(1000, "κόσμε 𝄞")
        self.assert_close(client, 1000, reply=False)

    def test_valid_codes_echoed(self):
        """Autobahn 7.7.x: every legal code comes back."""
        for code in VALID_CODES:
            with self.subTest(code=code):
                client = self.open_client()
                client.send_close(code)
                self.assert_close(client, code, reply=False)

    def test_data_after_close_is_ignored(self):
        """Autobahn 7.1.3: a text frame after the close is neither echoed nor an error."""
        client = self.open_client()
        client.send_raw(build_frame(OP_CLOSE, close_payload(1000)) + build_frame(OP_TEXT, b"after close"))
        self.assert_close(client, 1000, reply=False)

    def test_second_close_is_ignored(self):
        """Autobahn 7.1.2."""
        client = self.open_client()
        client.send_raw(build_frame(OP_CLOSE, close_payload(1000)) + build_frame(OP_CLOSE, close_payload(1001)))
        self.assert_close(client, 1000, reply=False)

    def test_ping_after_close_not_answered(self):
        """Autobahn 7.1.4: no pong after the close."""
        client = self.open_client()
        client.send_raw(build_frame(OP_CLOSE, close_payload(1000)) + build_frame(OP_PING, b"too late"))
        self.assert_close(client, 1000, reply=False)

    def test_close_in_the_middle_of_a_fragmented_message(self):
        """Autobahn 7.1.5: control frames may interleave; the unfinished message is dropped."""
        client = self.open_client()
        client.send_raw(build_frame(OP_TEXT, b"fragment1", fin=False) + build_frame(OP_CLOSE, close_payload(1000)))
        self.assert_close(client, 1000, reply=False)

    def test_message_and_close_in_one_write_get_the_reply_first(self):
        """`ws.send(m); ws.close()`: what the client sent before its close is answered before the close."""
        client = self.open_client()
        client.send_raw(build_frame(OP_TEXT, b"last words") + build_frame(OP_CLOSE, close_payload(1000)))
        self.assert_echo(client, OP_TEXT, b"last words")
        self.assert_close(client, 1000, reply=False)

    def test_pipelined_messages_then_close_get_every_reply_first(self):
        client = self.open_client()
        messages = [(OP_TEXT if i % 2 else OP_BINARY, f"message {i}".encode()) for i in range(100)]
        client.send_raw(b"".join(build_frame(op, m) for op, m in messages) + build_frame(OP_CLOSE, close_payload(1001)))
        for op, m in messages:
            self.assert_echo(client, op, m)
        self.assert_close(client, 1001, reply=False)

    def test_message_then_empty_close_gets_the_reply_then_an_empty_close(self):
        client = self.open_client()
        client.send_raw(build_frame(OP_TEXT, b"bye") + build_frame(OP_CLOSE, b""))
        self.assert_echo(client, OP_TEXT, b"bye")
        self.assert_close(client, None, reply=False)

    def test_close_sent_in_chunks(self):
        client = self.open_client()
        client.send_close(1000, "chunked", chunk_size=1, delay=0.001)
        self.assert_close(client, 1000, reply=False)


class CloseViolationTest(GatewayTestCase):
    """RFC 6455 5.5 / 5.5.1 / 7.4: malformed close frames fail the connection (1002, 1007 for bad UTF-8)."""

    def test_close_with_one_byte_payload(self):
        """Autobahn 7.3.2."""
        client = self.open_client()
        client.send_frame(OP_CLOSE, b"\x03")
        self.assert_fails_with(client, 1002, reply=False)

    def test_close_with_126_byte_payload(self):
        """Autobahn 7.3.6: control frames carry at most 125 bytes."""
        client = self.open_client()
        client.send_close(1000, "*" * 124)
        self.assert_fails_with(client, 1002, reply=False)

    def test_invalid_codes(self):
        """Autobahn 7.9.x: codes that must not appear on the wire."""
        for code in INVALID_CODES:
            with self.subTest(code=code):
                client = self.open_client()
                client.send_close(code)
                self.assert_fails_with(client, 1002, reply=False)

    def test_invalid_utf8_in_reason(self):
        """Autobahn 7.5.1."""
        client = self.open_client()
        client.send_close(1000, b"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80edited")
        self.assert_fails_with(client, 1007, reply=False)

    def test_truncated_utf8_in_reason(self):
        client = self.open_client()
        client.send_close(1000, b"reason\xe2\x82")
        self.assert_fails_with(client, 1007, reply=False)

    def test_fragmented_close(self):
        client = self.open_client()
        client.send_raw(build_frame(OP_CLOSE, close_payload(1000), fin=False))
        self.assert_fails_with(client, 1002, reply=False)


class CloseTimeoutTest(GatewayTestCase):
    """RFC 6455 7.1.1 / 7.1.7: after failing the connection the server drops TCP even if the close is never answered."""

    gateway_args = ("--close-timeout", "0.5")

    def test_unanswered_server_close_still_ends_tcp(self):
        client = self.open_client()
        client.send_text(b"bad", rsv=4)
        self.assert_close(client, 1002, reply=False)


class PeerEndOfStreamTest(GatewayTestCase):
    """A client's end of stream ends its connection, even when it comes in one segment with the client's last frame."""

    # Far away, so that only the end of stream can end the connection within the bound.
    gateway_args = ("--idle-ping", "120")

    def test_last_frame_and_fin_in_one_segment(self):
        client = self.open_client()
        self.roundtrip(client, OP_TEXT, b"before")
        # Corked, the frame waits in the client's kernel and the FIN joins it:
        # the gateway sees both in one readable edge and reads short.
        # A ping, as the gateway answers it itself, before it reads on: a
        # message's reply through a worker may come after the end of stream
        # has failed the connection (1006), and then it is not sent.
        client.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
        client.send_ping(b"last words")
        client.sock.shutdown(socket.SHUT_WR)
        frame = self.expect_frame(client, "the pong of the last frame")
        self.assertEqual((frame.opcode, frame.payload), (OP_PONG, b"last words"), frame.describe())
        self.assert_tcp_closed(client, "after the client's end of stream")


ADMIN_RE = re.compile(r"admin listening on 127\.0\.0\.1:(\d+)")


class CloseWithAStoppedWorkerTest(GatewayTestCase):
    """A close held for replies never waits past --close-timeout: a stopped worker keeps no client waiting."""

    gateway_args = None
    close_timeout = 1.0

    def test_the_close_comes_within_the_bound_and_is_counted(self):
        if TARGET != "workers":
            self.skipTest("the gateway's own --echo has no worker to stop")
        gateway = self.start_gateway(("--close-timeout", str(self.close_timeout), "--admin", "127.0.0.1:0"))
        client = self.open_client(gateway)
        self.roundtrip(client, OP_TEXT, b"before")
        for worker in gateway.workers:
            worker.send_signal(signal.SIGSTOP)
        self.addCleanup(lambda: [w.send_signal(signal.SIGCONT) for w in gateway.workers if w.is_running()])
        client.send_raw(build_frame(OP_TEXT, b"never answered") + build_frame(OP_CLOSE, close_payload(1000)))
        # Without the bound the close would wait for the worker for ever:
        # the wait below is a liveness bound (4x the timeout), not a speed check.
        frame = self.receive_frame(client, "the held close", timeout=4 * self.close_timeout + 2)
        self.assertEqual(frame.opcode, OP_CLOSE, f"expected the close, got {frame.describe()}")
        self.assertEqual(frame.close_code, 1000)
        self.assert_tcp_closed(client, "after the held close")
        for worker in gateway.workers:
            worker.send_signal(signal.SIGCONT)
        match = next(filter(None, (ADMIN_RE.search(line) for line in gateway.output_lines())), None)
        self.assertIsNotNone(match, "the gateway did not print its admin address\n" + gateway.describe_tail())
        with urllib.request.urlopen(f"http://127.0.0.1:{match.group(1)}/metrics", timeout=5) as response:
            scrape = response.read().decode()
        self.assertIn('framegate_gateway_held_close_timeouts_total{reason="client_close"} 1', scrape)
        self.assertRegex(scrape, r'framegate_gateway_held_closes_total\{reason="client_close"\} [1-9]')


if __name__ == "__main__":
    unittest.main()
