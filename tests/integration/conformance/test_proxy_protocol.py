"""--proxy-protocol-from: behind a load balancer, the gateway counts each
connection as the client the balancer's PROXY protocol header names.

The test plays the balancer: its sockets come from 127.0.0.1, the trusted
network, and start with a header (v1 text or v2 binary) naming a client
address from the documentation ranges (RFC 5737, RFC 3849). A socket from
127.0.0.2, outside it, is an ordinary client whose header is not believed.
Per-IP limits then apply to the named clients, not to the balancer; a
trusted socket without a valid header gets 400; the balancer's own health
checks (LOCAL) count as the balancer. Through workers, the worker sees
the client's address (/whoami) and `--sticky-key ip` uses it.
"""

import ipaddress
import os
import struct
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from framegate_harness import (  # noqa: E402
    OP_TEXT, TARGET, GatewayTestCase, WsClient, scrape_metrics,
)

V2_SIGNATURE = b"\r\n\r\n\x00\r\nQUIT\n"
BALANCER = "127.0.0.1"
OUTSIDER = "127.0.0.2"  # loopback too, but not in --proxy-protocol-from
TRUSTED = ("--proxy-protocol-from", f"{BALANCER}/32")


def v1(client: str, port: int = 40000) -> bytes:
    family = "TCP6" if ":" in client else "TCP4"
    server = "2001:db8::1" if ":" in client else "198.51.100.1"
    return f"PROXY {family} {client} {server} {port} 8080\r\n".encode()


def v2(client: str | None, port: int = 40000, tlv: bytes = b"") -> bytes:
    """A v2 PROXY header for `client`, or LOCAL (the balancer's own connection) without one."""
    if client is None:
        return V2_SIGNATURE + bytes([0x20, 0x00]) + struct.pack("!H", len(tlv)) + tlv
    address = ipaddress.ip_address(client)
    server = ipaddress.ip_address("2001:db8::1" if address.version == 6 else "198.51.100.1")
    body = address.packed + server.packed + struct.pack("!HH", port, 8080) + tlv
    family = 0x21 if address.version == 6 else 0x11  # AF_INET6 / AF_INET, STREAM
    return V2_SIGNATURE + bytes([0x21, family]) + struct.pack("!H", len(body)) + body


class ProxyProtocolCase(GatewayTestCase):
    def through_balancer(self, header: bytes) -> WsClient:
        """A socket from the balancer that sent `header`, ready for its client's handshake."""
        client = self.connect(source=BALANCER)
        client.send_raw(header)
        return client

    def metric(self, key: str) -> float:
        return scrape_metrics(self.gateway).get(key, 0.0)


class PerClientLimitsBehindTheBalancerTest(ProxyProtocolCase):
    """With --max-connections-per-ip 1, every client behind the balancer gets its own slot."""

    gateway_args = (*TRUSTED, "--max-connections-per-ip", "1", "--admin", "127.0.0.1:0")

    def test_each_named_client_has_its_own_per_ip_slot(self):
        clients_before = self.metric('framegate_gateway_proxy_headers_total{result="client"}')
        first = self.through_balancer(v1("192.0.2.10"))
        first.handshake("/echo")
        second = self.through_balancer(v2("192.0.2.11"))  # the balancer's address twice: refused without PROXY
        second.handshake("/echo")
        self.roundtrip(first, OP_TEXT, b"one")
        self.roundtrip(second, OP_TEXT, b"two")
        # The first client again, through the same balancer: its own cap applies.
        again = self.through_balancer(v1("192.0.2.10", port=40001))
        self.assert_refused(again.request_handshake("/echo"), 429)
        self.assertEqual(self.metric('framegate_gateway_proxy_headers_total{result="client"}') - clients_before, 3)

    def test_an_ipv6_client_in_a_v2_header_with_tlvs(self):
        tlv = bytes([0x04, 0x00, 0x03]) + b"abc"  # PP2_TYPE_NOOP, skipped
        client = self.through_balancer(v2("2001:db8::7", tlv=tlv))
        client.handshake("/echo")
        self.roundtrip(client, OP_TEXT, b"six")

    def test_a_header_split_in_one_byte_writes_and_one_sent_with_the_request(self):
        slow = self.connect(source=BALANCER)
        slow.send_raw(v2("192.0.2.20"), chunk_size=1, delay=0.005)
        slow.handshake("/echo")
        self.roundtrip(slow, OP_TEXT, b"slow")
        together = self.connect(source=BALANCER)
        self.assertEqual(together.request_raw(v1("192.0.2.21") + handshake_bytes(together)).status, 101)

    def test_the_balancers_own_connection_counts_as_the_balancer(self):
        local_before = self.metric('framegate_gateway_proxy_headers_total{result="local"}')
        health = self.through_balancer(v2(None))
        health.handshake("/echo")
        # One slot for the balancer's address: its second LOCAL connection is over the cap.
        second = self.through_balancer(b"PROXY UNKNOWN\r\n")
        self.assert_refused(second.request_handshake("/echo"), 429)
        self.assertEqual(self.metric('framegate_gateway_proxy_headers_total{result="local"}') - local_before, 2)


def handshake_bytes(client: WsClient) -> bytes:
    from framegate_harness import build_handshake_request, make_key
    client.key = make_key()
    return build_handshake_request(client.host_header, "/echo", client.key, None, "GET", "HTTP/1.1")


class HeaderRequiredFromTheBalancerTest(ProxyProtocolCase):
    """A trusted peer must start with a header; an untrusted one is not believed."""

    gateway_args = (*TRUSTED, "--admin", "127.0.0.1:0")

    def test_a_trusted_peer_without_a_valid_header_gets_400(self):
        refused_before = self.metric('framegate_gateway_proxy_headers_total{result="refused"}')
        response = self.connect(source=BALANCER).request_handshake("/echo")
        self.assert_refused(response, 400)
        self.assertIn(b"PROXY protocol header", response.body)
        bad_version = V2_SIGNATURE + bytes([0x31, 0x11, 0x00, 0x0C]) + bytes(12)
        self.assert_refused(self.through_balancer(bad_version).request_raw(b""), 400)
        self.assert_refused(self.through_balancer(b"PROXY TCP4 192.0.2.1 198.51.100.1 99999 8080\r\n")
                            .request_handshake("/echo"), 400)
        self.assertEqual(self.metric('framegate_gateway_proxy_headers_total{result="refused"}') - refused_before, 3)

    def test_an_untrusted_peer_cannot_claim_another_address(self):
        liar = self.connect(source=OUTSIDER)
        response = liar.request_raw(v1("192.0.2.99") + handshake_bytes(liar))
        self.assert_refused(response, 400)  # taken as its HTTP request, which it is not
        honest = self.connect(source=OUTSIDER)
        honest.handshake("/echo")
        self.roundtrip(honest, OP_TEXT, b"plain")

    def test_bad_networks_stop_the_gateway_at_start(self):
        self.assertIn("host bits set", self.assert_refuses_to_start("--proxy-protocol-from", "10.0.0.1/8"))
        self.assertIn("not an IP address", self.assert_refuses_to_start("--proxy-protocol-from", "balancer.local"))


class StalledBalancerTest(ProxyProtocolCase):
    """--handshake-timeout covers the header: a balancer's connection that stalls in it is ended."""

    gateway_args = (*TRUSTED, "--handshake-timeout", "0.5")

    def test_a_partial_header_gets_408_and_a_silent_one_is_dropped(self):
        partial = self.through_balancer(v1("192.0.2.30")[:20])
        self.assert_refused(partial.read_http_response(self.close_bound), 408)
        silent = self.connect(source=BALANCER)
        closed, received = silent.wait_for_tcp_close(self.close_bound)
        self.assertTrue(closed, f"a silent balancer connection still open after {self.close_bound}s")
        self.assertEqual(received, b"")


@unittest.skipUnless(TARGET == "workers", "the worker's view needs workers (FRAMEGATE_CONFORMANCE_TARGET=workers)")
class WorkersSeeTheClientTest(ProxyProtocolCase):
    """Through workers: the client's address is the one handed on, and the one `--sticky-key ip` hashes."""

    gateway_args = (*TRUSTED, "--sticky-key", "ip")
    worker_args = ("--enable-test-apps",)

    def test_whoami_reports_the_named_client(self):
        client = self.through_balancer(v1("192.0.2.55"))
        client.handshake("/whoami")
        seen = self.whoami(client)
        self.assertEqual(seen["remote_address"], "192.0.2.55")
        self.assertEqual(seen["sticky_key"], "192.0.2.55")


if __name__ == "__main__":
    unittest.main()
