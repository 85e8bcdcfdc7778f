"""Handshake timeout and idle keep-alive pings."""

import os
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from framegate_harness import (  # noqa: E402
    OP_CLOSE, OP_PING, OP_TEXT, Frame, GatewayTestCase, WsConnectionClosed, WsTimeout, build_frame, close_payload,
)


class HandshakeTimeoutTest(GatewayTestCase):
    """RFC 6455 4.1 / 4.2 (server may drop slow handshakes); contract --handshake-timeout."""

    gateway_args = ("--handshake-timeout", "0.5")

    def test_silent_client_is_disconnected_without_a_response(self):
        client = self.connect()
        closed, received = client.wait_for_tcp_close(self.close_bound)
        self.assertTrue(closed, f"silent client still connected after {self.close_bound}s")
        self.assertEqual(received, b"", "nothing was sent, so no HTTP response is expected")

    def test_partial_request_gets_408(self):
        client = self.connect()
        client.send_raw(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        response = client.read_http_response(self.close_bound)
        self.assert_refused(response, 408)
        closed, _ = client.wait_for_tcp_close(self.close_bound)
        self.assertTrue(closed, "connection still open after 408")

    def test_upgraded_client_outlives_the_handshake_timeout(self):
        client = self.open_client()
        time.sleep(1.0)
        self.roundtrip(client, OP_TEXT, b"still here")


class IdlePingTest(GatewayTestCase):
    """RFC 6455 5.5.2 / 5.5.3 (keep-alive ping); contract --idle-ping / --pong-timeout (close 1011 or drop)."""

    # A handshake deadline far away: the pong timeout must run from the ping,
    # not from a deadline set before it (the connection keeps only one).
    gateway_args = ("--idle-ping", "0.3", "--pong-timeout", "0.3", "--close-timeout", "1", "--handshake-timeout", "60")

    def test_idle_client_receives_a_ping(self):
        client = self.open_client()
        frame = self.expect_frame(client, "a keep-alive ping")
        self.assertEqual(frame.opcode, OP_PING, frame.describe())
        self.assertTrue(frame.fin, frame.describe())
        self.assertLessEqual(len(frame.payload), 125, frame.describe())

    def test_client_that_never_answers_is_closed(self):
        client = self.open_client()
        ping = self.expect_frame(client, "a keep-alive ping")
        self.assertEqual(ping.opcode, OP_PING, ping.describe())
        self.assert_closed_for_missing_pong(client)

    def assert_closed_for_missing_pong(self, client) -> None:
        """A close frame (which must carry 1011) or a plain TCP drop, within the bound."""
        deadline = time.monotonic() + self.close_bound
        while True:
            try:
                frame = client.recv_frame(max(0.0, deadline - time.monotonic()))
            except WsConnectionClosed:
                return  # TCP drop without a close frame is allowed by the contract
            except WsTimeout:
                self.fail(f"client that never answered pings still connected after {self.close_bound}s")
            if frame.opcode == OP_CLOSE:
                self.assertEqual(frame.close_code, 1011, frame.describe())
                self.assert_tcp_closed(client, "after the 1011 close")  # no close reply sent
                return
            self.assertEqual(frame.opcode, OP_PING, f"unexpected frame {frame.describe()}")

    def test_client_answering_pongs_stays_connected(self):
        client = self.open_client()
        pings = self.answer_pings_for(client, 2.0)
        self.assertGreaterEqual(pings, 2, "expected repeated keep-alive pings over 2 s of idleness")
        client.send_text(b"alive")
        frame = self.expect_frame_past_pings(client, "echo", answer=True)
        self.assertEqual((frame.opcode, frame.payload), (OP_TEXT, b"alive"), frame.describe())

    def answer_pings_for(self, client, seconds: float) -> int:
        """Answer every ping with a pong of the same payload for `seconds`; returns how many came."""
        deadline = time.monotonic() + seconds
        count = 0
        while time.monotonic() < deadline:
            try:
                frame = client.recv_frame(max(0.01, deadline - time.monotonic()))
            except WsTimeout:
                break
            except WsConnectionClosed as exc:
                self.fail(f"client answering pongs was disconnected after {count} pings: {exc}\n{self.tail()}")
            self.assertEqual(frame.opcode, OP_PING, f"unexpected frame {frame.describe()}")
            client.send_pong(frame.payload)
            count += 1
        return count

    def expect_frame_past_pings(self, client, what: str, answer: bool) -> Frame:
        """The next frame that is not a keep-alive ping; the pings before it get pongs if `answer`."""
        while True:
            frame = self.expect_frame(client, what)
            if frame.opcode != OP_PING:
                return frame
            if answer:
                client.send_pong(frame.payload)

    def test_any_frame_counts_as_a_sign_of_life(self):
        """Contract: the pong timeout fires on no frame at all; a chatty client never answering pings stays."""
        client = self.open_client()
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            client.send_text(b"chatter")
            frame = self.expect_frame_past_pings(client, "echo", answer=False)
            self.assertEqual((frame.opcode, frame.payload), (OP_TEXT, b"chatter"), frame.describe())
            time.sleep(0.1)

    def test_close_still_works_after_pings(self):
        client = self.open_client()
        self.answer_pings_for(client, 0.8)
        client.send_raw(build_frame(OP_CLOSE, close_payload(1000)))
        frame = self.expect_frame_past_pings(client, "close reply", answer=False)
        self.assertEqual((frame.opcode, frame.close_code), (OP_CLOSE, 1000), frame.describe())
        self.assert_tcp_closed(client, "after the close reply")


class CloseAfterPingTest(GatewayTestCase):
    """Contract --close-timeout: counted from our close frame, also after a keep-alive ping.

    The gateway keeps one deadline per connection for whatever it waits
    for: the pong of its ping while open, the peer's close frame once
    closing. Closing must start a deadline of its own rather than inherit
    the pong's (a minute away here), and not drop the client at once
    either.
    """

    close_timeout = 2.0
    # --message-rate 0.1: the first message passes, the second closes the connection (1008).
    gateway_args = ("--idle-ping", "0.2", "--pong-timeout", "60", "--close-timeout", str(close_timeout),
                    "--message-rate", "0.1")

    def test_close_timeout_runs_from_the_close_not_the_ping(self):
        client = self.open_client()
        ping = self.expect_frame(client, "a keep-alive ping")
        self.assertEqual(ping.opcode, OP_PING, ping.describe())
        time.sleep(0.3)  # left unanswered for a few ticks
        client.send_text(b"within the rate")
        client.send_text(b"past the rate")
        while True:
            frame = self.expect_frame(client, "close 1008 (message rate exceeded)")
            if frame.opcode == OP_CLOSE:
                break
            self.assertIn(frame.opcode, (OP_PING, OP_TEXT), frame.describe())
        self.assertEqual(frame.close_code, 1008, frame.describe())
        closed, _ = client.wait_for_tcp_close(self.close_timeout / 2)
        self.assertFalse(closed, f"dropped within half of --close-timeout {self.close_timeout}s after the close")
        closed, _ = client.wait_for_tcp_close(self.close_bound)
        self.assertTrue(closed, f"still connected {self.close_bound}s past half of --close-timeout "
                                f"{self.close_timeout}s: the close waited for the ping's deadline")


class LongDurationTest(GatewayTestCase):
    """Contract: durations are held in 64-bit time, and above a day refused at start-up.

    32-bit milliseconds wrapped past 24.8 days: `--idle-ping 2592000` (30
    days) pinged after a fraction of a second and closed with 1011.
    """

    gateway_args = ("--idle-ping", "86400", "--pong-timeout", "86400", "--handshake-timeout", "86400")

    def test_a_day_of_idle_ping_does_not_ping_at_once(self):
        client = self.open_client()
        with self.assertRaises(WsTimeout, msg="a ping (or close) came long before a day of silence"):
            client.recv_frame(1.5)
        self.roundtrip(client, OP_TEXT, b"still open")

    def test_more_than_a_day_is_refused_at_start(self):
        for option in ("--idle-ping", "--pong-timeout", "--handshake-timeout", "--close-timeout",
                       "--pool-shed-period"):
            with self.subTest(option=option):
                line = self.assert_refuses_to_start("--listen", "127.0.0.1:0", "--echo", option, "2592000")
                self.assertIn(option, line)
                self.assertIn("1 day", line)

    def test_zero_is_refused_at_start(self):
        line = self.assert_refuses_to_start("--listen", "127.0.0.1:0", "--echo", "--idle-ping", "0")
        self.assertIn("--idle-ping", line)

    def test_a_negative_pool_shed_period_is_refused_at_start(self):
        # Its 0 is allowed: it turns shedding off (tests/integration/metrics/test_pool_shed.py).
        line = self.assert_refuses_to_start("--listen", "127.0.0.1:0", "--echo", "--pool-shed-period", "-1")
        self.assertIn("--pool-shed-period", line)


if __name__ == "__main__":
    unittest.main()
