"""Graceful shutdown on SIGTERM / SIGINT."""

import os
import signal
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from framegate_harness import (  # noqa: E402
    OP_CLOSE, OP_TEXT, GatewayTestCase, build_frame, close_payload,
)

EXIT_BOUND = 10.0
# Other tests give the gateway this long after its listening line before they
# signal it, so that only test_sigterm_right_after_listening_line_exits_0
# covers the start-up window.
SETTLE = 0.3
RACE_ATTEMPTS = 10


class GracefulShutdownTest(GatewayTestCase):
    """RFC 6455 7.1.2 / 7.4.1 (1001 going away); contract: SIGTERM closes clients with 1001 and exits 0."""

    gateway_args = None  # each test starts and signals its own gateway

    def expect_going_away(self, client) -> None:
        """The server's close 1001 arrives; the client answers it like a well-behaved peer."""
        frame = self.expect_frame(client, "close 1001 (going away)")
        self.assertEqual((frame.opcode, frame.close_code), (OP_CLOSE, 1001), frame.describe())
        client.send_raw_quietly(build_frame(OP_CLOSE, close_payload(1001)))

    def start_settled_gateway(self, extra_args=()):
        gateway = self.start_gateway(extra_args)
        time.sleep(SETTLE)
        return gateway

    def assert_exits_zero(self, gateway) -> None:
        code = gateway.wait(EXIT_BOUND)
        self.assertEqual(code, 0, f"gateway exit code {code}\n{gateway.describe_tail()}")

    def test_sigterm_sends_1001_to_every_client_and_exits_0(self):
        gateway = self.start_settled_gateway(("--close-timeout", "5"))
        clients = [self.open_client(gateway) for _ in range(3)]
        for client in clients:
            self.roundtrip(client, OP_TEXT, b"before shutdown")
        gateway.send_signal(signal.SIGTERM)
        for client in clients:
            self.expect_going_away(client)
        for client in clients:
            self.assert_tcp_closed(client, "after shutdown")
        self.assert_exits_zero(gateway)

    def test_sigint_behaves_like_sigterm(self):
        gateway = self.start_settled_gateway()
        client = self.open_client(gateway)
        gateway.send_signal(signal.SIGINT)
        self.expect_going_away(client)
        self.assert_tcp_closed(client, "after shutdown")
        self.assert_exits_zero(gateway)

    def test_unresponsive_client_does_not_block_exit(self):
        """A client that never answers the close is dropped after --close-timeout."""
        gateway = self.start_settled_gateway(("--close-timeout", "0.5"))
        client = self.open_client(gateway)
        gateway.send_signal(signal.SIGTERM)
        frame = self.expect_frame(client, "close 1001 (going away)")
        self.assertEqual((frame.opcode, frame.close_code), (OP_CLOSE, 1001), frame.describe())
        self.assert_exits_zero(gateway)
        closed, _ = client.wait_for_tcp_close(self.close_bound)
        self.assertTrue(closed, "connection open after the gateway exited")

    def test_sigterm_with_no_clients_exits_0(self):
        gateway = self.start_settled_gateway()
        client = self.open_client(gateway)
        self.roundtrip(client, OP_TEXT, b"served")  # fully up
        client.close()
        gateway.send_signal(signal.SIGTERM)
        self.assert_exits_zero(gateway)

    def test_sigterm_right_after_listening_line_exits_0(self):
        """The listening line means ready: SIGTERM from then on must be handled (exit 0, not death by signal).

        The race is timing dependent, so it is probed several times.
        """
        codes = []
        for _ in range(RACE_ATTEMPTS):
            gateway = self.start_gateway()
            gateway.send_signal(signal.SIGTERM)
            codes.append(gateway.wait(EXIT_BOUND))
        self.assertEqual(codes, [0] * RACE_ATTEMPTS, "exit codes of gateways signalled right after "
                         "printing 'listening on' (negative = killed by the signal)")

    def test_no_new_connections_after_shutdown(self):
        gateway = self.start_settled_gateway(("--close-timeout", "5"))
        client = self.open_client(gateway)
        gateway.send_signal(signal.SIGTERM)
        self.expect_going_away(client)
        self.assert_tcp_closed(client, "after shutdown")
        self.assert_exits_zero(gateway)
        with self.assertRaises(OSError):
            late = self.connect(gateway)
            late.handshake()


class BadOptionsTest(GatewayTestCase):
    """Contract: bad options exit with code 2 and one line on stderr."""

    gateway_args = None

    def test_unknown_option(self):
        self.assert_refuses_to_start("--listen", "127.0.0.1:0", "--echo", "--no-such-option")

    def test_non_numeric_size(self):
        self.assert_refuses_to_start("--listen", "127.0.0.1:0", "--echo", "--max-message-size", "lots")

    def test_bad_listen_address(self):
        self.assert_refuses_to_start("--listen", "not-an-address", "--echo")


if __name__ == "__main__":
    unittest.main()
