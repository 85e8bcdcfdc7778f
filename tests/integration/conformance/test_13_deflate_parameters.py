"""Autobahn section 13: compressed echoes under each negotiated parameter set (RFC 7692 7.1).

Autobahn 13.x repeats 12.1's messages with different offers: plain,
server_no_context_takeover, server_max_window_bits 8 and 15 with and
without no-context-takeover, and several offers at once. This module sends
those offers to gateways with each --deflate-takeover choice, checks that
the response is one RFC 7692 allows for the offer (the client parses it as
strictly as a browser: see deflate_client.Deflate), and that messages echo
under the agreed context and window rules. A client that compresses with
context takeover where the gateway did not agree to it, or the reverse,
fails with 1007 here, so each agreement is also checked in use.
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from deflate_client import DeflateTestCase, html_text, image_like, json_text  # noqa: E402
from framegate_harness import OP_BINARY, OP_TEXT, GatewayProcess, GatewayTestCase  # noqa: E402

# Autobahn 13.1-13.7, in the header form Autobahn sends them.
OFFERS = {
    "13_1": "permessage-deflate",
    "13_2": "permessage-deflate; server_no_context_takeover",
    "13_3": "permessage-deflate; client_max_window_bits; server_max_window_bits=8",
    "13_4": "permessage-deflate; client_max_window_bits; server_max_window_bits=15",
    "13_5": "permessage-deflate; client_max_window_bits; server_no_context_takeover; server_max_window_bits=8",
    "13_6": "permessage-deflate; client_max_window_bits; server_no_context_takeover; server_max_window_bits=15",
    "13_7": "permessage-deflate; server_no_context_takeover; server_max_window_bits=8, "
            "permessage-deflate; server_no_context_takeover, permessage-deflate",
    "chromium": "permessage-deflate; client_max_window_bits",
    "client_window_9": "permessage-deflate; client_max_window_bits=9",
}
SIZES = (64, 1024, 4096, 16384, 65536)


def messages():
    """Similar messages, so context takeover has something to take over; empty ones between (7.2.3.6)."""
    yield OP_TEXT, b""
    for size in SIZES:
        yield OP_BINARY, b""
        for n in range(4):
            yield OP_TEXT, json_text(size, seed=size + n)
        yield OP_BINARY, image_like(size)
        yield OP_TEXT, html_text(size)


class ParameterSets:
    """Mixed into one test class per --deflate-takeover choice."""

    expected: dict = {}  # offer name -> (server_no_context_takeover, client_no_context_takeover, server_bits, client_bits)

    def check_offer(self, name: str) -> None:
        client, deflate = self.open_deflate_client(OFFERS[name])
        got = (deflate.server_no_context_takeover, deflate.client_no_context_takeover, deflate.server_bits,
               deflate.client_bits)
        if name in self.expected:
            self.assertEqual(got, self.expected[name], f"{name}: response {deflate.response!r}")
        sent = list(messages())
        client.send_raw(b"".join(deflate.frames(op, payload) for op, payload in sent))
        for op, payload in sent:
            self.assert_deflate_echo(client, deflate, op, payload)

    def test_13_1(self):
        self.check_offer("13_1")

    def test_13_2(self):
        self.check_offer("13_2")

    def test_13_3(self):
        self.check_offer("13_3")

    def test_13_4(self):
        self.check_offer("13_4")

    def test_13_5(self):
        self.check_offer("13_5")

    def test_13_6(self):
        self.check_offer("13_6")

    def test_13_7(self):
        self.check_offer("13_7")

    def test_chromium_offer(self):
        self.check_offer("chromium")

    def test_client_window_9(self):
        self.check_offer("client_window_9")


class NoTakeoverTest(ParameterSets, DeflateTestCase):
    """Default: no context kept on either side, whatever the offer; window bits as offered."""

    expected = {
        "13_1": (True, True, 15, 15),
        "13_2": (True, True, 15, 15),
        "13_3": (True, True, 8, 15),
        "13_4": (True, True, 15, 15),
        "13_5": (True, True, 8, 15),
        "13_6": (True, True, 15, 15),
        "13_7": (True, True, 8, 15),  # the first offer is valid: accepted
        "chromium": (True, True, 15, 15),
        "client_window_9": (True, True, 15, 15),
    }


class BothTakeoverTest(ParameterSets, DeflateTestCase):
    """--deflate-takeover both: contexts are kept unless the client says no."""

    gateway_args = (*DeflateTestCase.gateway_args, "--deflate-takeover", "both")
    expected = {
        "13_1": (False, False, 15, 15),
        "13_2": (True, False, 15, 15),
        "13_3": (False, False, 8, 15),
        "13_4": (False, False, 15, 15),
        "13_5": (True, False, 8, 15),
        "chromium": (False, False, 15, 15),
        "client_window_9": (False, False, 15, 9),
    }

    def test_server_context_is_taken_over(self):
        """RFC 7692 7.2.3.2: the same message again compresses to a back reference."""
        client, deflate = self.open_deflate_client("permessage-deflate")
        payload = json_text(2000)
        sizes = []
        for _ in range(2):
            client.send_raw(deflate.frames(OP_TEXT, payload))
            frame, data, compressed = self.expect_message(client, deflate, "an echo")
            self.assertTrue(compressed)
            self.assertEqual(data, payload)
            sizes.append(len(frame.payload))
        self.assertLess(sizes[1] * 10, sizes[0], f"second echo not shorter with context takeover: {sizes}")


class CappedTakeoverTest(ParameterSets, DeflateTestCase):
    """--deflate-takeover both --deflate-window-bits 10: windows capped, or no client takeover if uncappable."""

    gateway_args = (*DeflateTestCase.gateway_args, "--deflate-takeover", "both", "--deflate-window-bits", "10")
    expected = {
        # No client_max_window_bits offered: the client's window cannot be capped (7.1.2.2).
        "13_1": (False, True, 10, 15),
        "13_3": (False, False, 8, 10),
        "13_4": (False, False, 10, 10),
        "chromium": (False, False, 10, 10),
        "client_window_9": (False, False, 10, 9),
    }


class ServerTakeoverTest(ParameterSets, DeflateTestCase):
    """--deflate-takeover server."""

    gateway_args = (*DeflateTestCase.gateway_args, "--deflate-takeover", "server")
    expected = {"13_1": (False, True, 15, 15), "13_2": (True, True, 15, 15), "chromium": (False, True, 15, 15)}


class ClientTakeoverTest(ParameterSets, DeflateTestCase):
    """--deflate-takeover client."""

    gateway_args = (*DeflateTestCase.gateway_args, "--deflate-takeover", "client")
    expected = {"13_1": (True, False, 15, 15), "13_2": (True, False, 15, 15), "chromium": (True, False, 15, 15)}


class NegotiationTest(DeflateTestCase):
    """RFC 7692 7: invalid offers are declined, the first valid one accepted; a malformed header is a 400."""

    def response_to(self, *offers: str):
        client = self.connect()
        return client, client.request_handshake(headers=[("Sec-WebSocket-Extensions", o) for o in offers])

    def assert_declined(self, *offers: str) -> None:
        client, response = self.response_to(*offers)
        self.assertEqual(response.status, 101, response.describe())
        self.assertIsNone(response.header("Sec-WebSocket-Extensions"), response.describe())
        # Declined means not negotiated: RSV1 is a protocol error again.
        client.send_text(b"x", rsv=4)
        self.assert_fails_with(client, 1002)

    def test_invalid_offers_are_declined(self):
        for offer in ("permessage-deflate; server_max_window_bits",
                      "permessage-deflate; server_max_window_bits=7",
                      "permessage-deflate; client_max_window_bits=16",
                      "permessage-deflate; server_max_window_bits=010",
                      "permessage-deflate; server_no_context_takeover=1",
                      "permessage-deflate; unknown_parameter",
                      "permessage-deflate; client_no_context_takeover; client_no_context_takeover",
                      "permessage-deflate; server_max_window_bits=10; server_max_window_bits=10",
                      "x-webkit-deflate-frame"):
            with self.subTest(offer=offer):
                self.assert_declined(offer)

    def test_first_valid_offer_over_several_headers(self):
        _, response = self.response_to("permessage-deflate; bogus", "permessage-deflate; server_max_window_bits=11, "
                                       "permessage-deflate; server_max_window_bits=12")
        self.assertEqual(response.status, 101, response.describe())
        self.assertIn("server_max_window_bits=11", response.header("Sec-WebSocket-Extensions"))

    def test_quoted_value(self):
        client, deflate = self.open_deflate_client('permessage-deflate; server_max_window_bits="9"')
        self.assertEqual(deflate.server_bits, 9)
        client.send_raw(deflate.frames(OP_TEXT, json_text(5000)))
        self.assert_deflate_echo(client, deflate, OP_TEXT, json_text(5000), compressed=True)

    def test_malformed_header_gets_400(self):
        for offer in ('permessage-deflate; server_max_window_bits="10', "permessage-deflate;;", "; x"):
            with self.subTest(offer=offer):
                _, response = self.response_to(offer)
                self.assert_refused(response, 400)


class DeflateOffTest(DeflateTestCase):
    """Without --deflate the header is not even read: a malformed one does not matter."""

    gateway_args = ()

    def test_offers_are_ignored(self):
        client = self.connect()
        response = client.request_handshake(headers={"Sec-WebSocket-Extensions": "permessage-deflate;;"})
        self.assertEqual(response.status, 101, response.describe())
        self.assertIsNone(response.header("Sec-WebSocket-Extensions"))


class DeflateOptionsTest(GatewayTestCase):
    """Bad --deflate* options stop the gateway at start: one line on stderr, exit code 2."""

    gateway_args = None

    def test_bad_options(self):
        cases = {
            ("--deflate-threshold", "100"): "requires --deflate",
            ("--deflate-takeover", "both"): "requires --deflate",
            ("--deflate", "--deflate-takeover", "sometimes"): "--deflate-takeover",
            ("--deflate", "--deflate-window-bits", "8"): "--deflate-window-bits",
            ("--deflate", "--deflate-window-bits", "16"): "--deflate-window-bits",
            ("--deflate", "--deflate-level", "0"): "--deflate-level",
            ("--deflate", "--deflate-mem-level", "10"): "--deflate-mem-level",
            ("--deflate", "--deflate-threshold", "-1"): "--deflate-threshold",
        }
        for args, needle in cases.items():
            with self.subTest(args=args):
                line = self.assert_refuses_to_start("--listen", "127.0.0.1:0", "--echo", "--admin", "off", *args)
                self.assertIn(needle, line)

    def test_start_up_line_tells_the_memory_per_connection(self):
        gateway = GatewayProcess(["--deflate", "--deflate-takeover", "both", "--deflate-window-bits", "10",
                                  "--deflate-mem-level", "4"])
        gateway.start()
        try:
            lines = "\n".join(gateway.output_lines())
            self.assertIn("permessage-deflate on", lines)
            self.assertIn("26 KiB of zlib state per connection", lines)
        finally:
            gateway.stop()


if __name__ == "__main__":
    unittest.main()
