"""--forwarded-for-from: behind an HTTP balancer (AWS ALB, nginx `http` with
Upgrade, Envoy, Cloudflare), the gateway counts each request as the client
the balancer names in X-Forwarded-For (or Forwarded, or X-Real-IP).

The test plays the balancer: its sockets come from 127.0.0.1, the trusted
network, and carry the header a balancer would send, naming clients from
the documentation ranges (RFC 5737, RFC 3849). Only the hops the trusted
proxies appended are believed: the nearest address outside them is the
client, never one the client itself wrote to the left. A socket from
127.0.0.2, outside the trusted networks, is an ordinary client whose header
is ignored. Per-IP limits, the workers' remote address and `--sticky-key
ip` then follow the named client.
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from framegate_harness import OP_TEXT, TARGET, GatewayTestCase, scrape_metrics  # noqa: E402

BALANCER = "127.0.0.1"
OUTSIDER = "127.0.0.2"  # loopback too, but not trusted
TRUSTED = ("--forwarded-for-from", f"{BALANCER}/32, 198.18.0.0/24")
CAP_ONE = ("--max-connections-per-ip", "1", "--admin", "127.0.0.1:0")


class ForwardedForCase(GatewayTestCase):
    def request(self, header_value: str | None, header: str = "X-Forwarded-For", source: str = BALANCER):
        """A handshake from `source` carrying `header: header_value`; the response and the open client."""
        client = self.connect(source=source)
        headers = [] if header_value is None else [(header, header_value)]
        return client.request_handshake("/echo", headers), client

    def assert_admitted(self, header_value: str | None, **kwargs):
        response, client = self.request(header_value, **kwargs)
        self.assertEqual(response.status, 101, f"{header_value!r}: {response.describe()}")
        self.roundtrip(client, OP_TEXT, b"hello")
        return client

    def assert_capped(self, header_value: str | None, **kwargs) -> None:
        """Refused by --max-connections-per-ip 1: the address it stands for is in use."""
        response, _ = self.request(header_value, **kwargs)
        self.assert_refused(response, 429)

    def counted(self, result: str) -> float:
        return scrape_metrics(self.gateway).get(f'framegate_gateway_forwarded_for_total{{result="{result}"}}', 0.0)


class PerClientLimitsBehindTheBalancerTest(ForwardedForCase):
    """With --max-connections-per-ip 1, each client behind the balancer has its own slot."""

    gateway_args = (*TRUSTED, *CAP_ONE)

    def test_each_named_client_has_its_own_slot_and_the_balancer_none(self):
        before = self.counted("client")
        self.assert_admitted("192.0.2.10")
        self.assert_admitted("192.0.2.11:54321")  # from the balancer's address again: only its client counts
        self.assert_admitted("2001:db8::7")
        self.assert_capped("192.0.2.10")
        self.assertEqual(self.counted("client") - before, 4)

    def test_what_the_client_wrote_before_its_balancer_is_not_believed(self):
        # The client sent "X-Forwarded-For: 192.0.2.66"; the balancer appended 198.51.100.20.
        self.assert_admitted("192.0.2.66, 198.51.100.20")
        self.assert_capped("192.0.2.67, 198.51.100.20")  # another claim, the same client
        self.assert_capped("198.18.0.5, 198.51.100.20")  # even a trusted-looking one
        self.assert_capped("\"oops, 198.51.100.20")      # and a quote left open cannot hide it

    def test_a_chain_of_trusted_proxies_is_walked_to_the_client(self):
        # client → CDN edge (198.18.0.5, trusted) → the balancer.
        self.assert_admitted("198.51.100.30, 198.18.0.5")
        self.assert_capped("198.51.100.30")

    def test_lines_of_the_header_are_one_list(self):
        client = self.connect(source=BALANCER)
        lines = [("X-Forwarded-For", "192.0.2.66"), ("X-Forwarded-For", "198.51.100.40, 198.18.0.5")]
        self.assertEqual(client.request_handshake("/echo", lines).status, 101)
        self.assert_capped("198.51.100.40")

    def test_without_a_header_or_with_an_unknown_hop_the_balancer_is_the_client(self):
        absent, unknown = self.counted("absent"), self.counted("unknown")
        self.assert_admitted(None)
        self.assert_capped("unknown")         # the hop the balancer could not name: the balancer counts
        self.assert_capped("garbage, ")       # the same for what is not an address
        self.assertEqual(self.counted("absent") - absent, 1)
        self.assertEqual(self.counted("unknown") - unknown, 2)

    def test_an_untrusted_peer_cannot_claim_another_address(self):
        self.assert_admitted("192.0.2.80", source=OUTSIDER)
        self.assert_capped("192.0.2.81", source=OUTSIDER)  # its own address counts, whatever it says


class Rfc7239ForwardedTest(ForwardedForCase):
    """--forwarded-for-header forwarded reads RFC 7239's `for` parameters; X-Forwarded-For is then ignored."""

    gateway_args = (*TRUSTED, "--forwarded-for-header", "Forwarded", *CAP_ONE)

    def test_the_for_parameter_names_the_client(self):
        self.assert_admitted('for="[2001:db8:cafe::17]:4711";proto=https', header="Forwarded")
        self.assert_admitted("for=192.0.2.43, for=198.18.0.5;by=198.18.0.1", header="Forwarded")
        self.assert_capped("for=192.0.2.43;proto=http", header="Forwarded")

    def test_obfuscated_and_unknown_nodes_leave_the_nearest_known_hop(self):
        self.assert_admitted('for="_gazonk", for=198.18.0.6', header="Forwarded")  # 198.18.0.6 counts
        self.assert_capped("for=unknown, for=198.18.0.6", header="Forwarded")

    def test_another_header_is_not_read(self):
        self.assert_admitted(None)
        self.assert_capped("192.0.2.90")  # X-Forwarded-For: the balancer still counts


class BehindAProxyProtocolBalancerTest(ForwardedForCase):
    """The two compose: an L4 balancer's PROXY header names an L7 proxy, whose X-Forwarded-For names the client."""

    gateway_args = ("--proxy-protocol-from", f"{BALANCER}/32", "--forwarded-for-from", "198.18.0.0/24", *CAP_ONE)

    def through(self, proxy: str, forwarded_for: str):
        client = self.connect(source=BALANCER)
        client.send_raw(f"PROXY TCP4 {proxy} 198.51.100.1 40000 8080\r\n".encode())
        return client.request_handshake("/echo", [("X-Forwarded-For", forwarded_for)]), client

    def test_the_l7_proxy_named_by_the_proxy_header_is_trusted_for_its_header(self):
        response, client = self.through("198.18.0.9", "203.0.113.5")
        self.assertEqual(response.status, 101)
        self.roundtrip(client, OP_TEXT, b"through two")
        self.assert_refused(self.through("198.18.0.10", "203.0.113.5")[0], 429)  # the same client
        # A PROXY client outside 198.18.0.0/24 is the client: its header is not read.
        self.assertEqual(self.through("203.0.113.6", "203.0.113.7")[0].status, 101)
        self.assert_refused(self.through("203.0.113.6", "203.0.113.8")[0], 429)


class BadOptionsTest(GatewayTestCase):
    def test_bad_values_stop_the_gateway_at_start(self):
        self.assertIn("host bits set", self.assert_refuses_to_start("--forwarded-for-from", "10.0.0.1/8"))
        self.assertIn("--forwarded-for-from", self.assert_refuses_to_start("--forwarded-for-from", "balancer.local"))
        self.assertIn("is not a header name", self.assert_refuses_to_start(
            "--forwarded-for-from", "127.0.0.1", "--forwarded-for-header", "X Forwarded"))
        self.assertIn("is not a header name", self.assert_refuses_to_start("--forwarded-for-header", ""))
        # Named without a balancer to read it from, the header would be ignored silently.
        self.assertIn("none is listed", self.assert_refuses_to_start("--forwarded-for-header", "x-real-ip"))


@unittest.skipUnless(TARGET == "workers", "the worker's view needs workers (FRAMEGATE_CONFORMANCE_TARGET=workers)")
class WorkersSeeTheClientTest(ForwardedForCase):
    """Through workers: the named client is the remote address handed on, and the one `--sticky-key ip` hashes."""

    gateway_args = (*TRUSTED, "--sticky-key", "ip")
    worker_args = ("--enable-test-apps",)

    def test_whoami_reports_the_named_client(self):
        client = self.connect(source=BALANCER)
        client.handshake("/whoami", [("X-Forwarded-For", "192.0.2.1, 2001:db8::55")])
        seen = self.whoami(client)
        self.assertEqual(seen["remote_address"], "2001:db8::55")
        self.assertEqual(seen["sticky_key"], "2001:db8::55")


if __name__ == "__main__":
    unittest.main()
