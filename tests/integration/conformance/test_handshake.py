"""Opening handshake: acceptance, refusals, Origin, subprotocols, header and connection limits."""

import os
import re
import resource
import sys
import time
import urllib.request
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from framegate_harness import (  # noqa: E402
    DEFAULT_PATH, OP_TEXT, GatewayTestCase, WsTimeout, HandshakeError, HttpResponse, accept_for, build_frame, build_handshake_request,
    make_key, validate_upgrade,
)


class HandshakeAcceptTest(GatewayTestCase):
    """RFC 6455 4.2.1 / 4.2.2: a valid opening handshake gets 101 with the right Sec-WebSocket-Accept."""

    def check_accepted(self, headers=None, path=DEFAULT_PATH) -> None:
        client = self.connect()
        response = client.request_handshake(path=path, headers=headers)
        self.assertIsNone(validate_upgrade(response, client.key), response.describe())
        self.roundtrip(client, OP_TEXT, b"upgraded")

    def test_plain_handshake(self):
        self.check_accepted()

    def test_accept_value_for_rfc_sample_key(self):
        """RFC 6455 1.3 sample: dGhlIHNhbXBsZSBub25jZQ== -> s3pPLMBiTxaQ9kYGzzhZRbK+xOo=."""
        self.assertEqual(accept_for("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        client = self.connect()
        response = client.request_handshake(key="dGhlIHNhbXBsZSBub25jZQ==")
        self.assertEqual(response.status, 101, response.describe())
        self.assertEqual(response.header("Sec-WebSocket-Accept"), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")

    def test_header_names_and_tokens_are_case_insensitive(self):
        self.check_accepted({"Upgrade": None, "Connection": None, "upgrade": "WebSocket",
                             "CONNECTION": "keep-alive, UPGRADE"})

    def test_path_and_query_are_accepted(self):
        self.check_accepted(path=DEFAULT_PATH + "?id=42&x=y")

    def test_no_subprotocol_header_without_offer(self):
        client = self.connect()
        response = client.request_handshake()
        self.assertEqual(response.status, 101, response.describe())
        self.assertIsNone(response.header("Sec-WebSocket-Protocol"), response.describe())
        self.assertIsNone(response.header("Sec-WebSocket-Extensions"), response.describe())

    def test_extension_offer_is_declined(self):
        """RFC 6455 9.1: an extension the server does not support is not in the response."""
        client = self.connect()
        response = client.request_handshake(
            headers={"Sec-WebSocket-Extensions": "permessage-deflate; client_max_window_bits"})
        self.assertEqual(response.status, 101, response.describe())
        self.assertIsNone(response.header("Sec-WebSocket-Extensions"), response.describe())

    def test_handshake_sent_in_small_pieces(self):
        client = self.connect()
        request = (f"GET {DEFAULT_PATH} HTTP/1.1\r\nHost: {client.host_header}\r\nUpgrade: websocket\r\n"
                   "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                   "Sec-WebSocket-Version: 13\r\n\r\n").encode()
        client.send_raw(request, chunk_size=7, delay=0.002)
        response = client.read_http_response()
        self.assertEqual(response.status, 101, response.describe())
        self.assertEqual(response.header("Sec-WebSocket-Accept"), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")

    def test_frame_in_same_write_as_handshake(self):
        """Bytes after the request head belong to the WebSocket stream."""
        client = self.connect()
        key = "dGhlIHNhbXBsZSBub25jZQ=="
        client.send_raw(build_handshake_request(client.host_header, key=key) + build_frame(OP_TEXT, b"early"))
        response = client.read_http_response()
        self.assertEqual(response.status, 101, response.describe())
        self.assert_echo(client, OP_TEXT, b"early")


class HandshakeRefusalTest(GatewayTestCase):
    """RFC 6455 4.2.1 / 4.2.2 / 4.4: bad handshakes are refused with the status of the contract."""

    def refuse(self, status: int, **request) -> HttpResponse:
        client = self.connect()
        response = client.request_handshake(**request)
        self.assert_refused(response, status)
        closed, _ = client.wait_for_tcp_close(self.close_bound)
        self.assertTrue(closed, f"connection still open after HTTP {status}")
        return response

    def test_post_gets_405(self):
        self.refuse(405, method="POST")

    def test_http_1_0_gets_400(self):
        self.refuse(400, http_version="HTTP/1.0")

    def test_missing_host_gets_400(self):
        self.refuse(400, headers={"Host": None})

    def test_missing_key_gets_400(self):
        self.refuse(400, headers={"Sec-WebSocket-Key": None})

    def test_key_not_base64_gets_400(self):
        self.refuse(400, headers={"Sec-WebSocket-Key": "not base64 at all!!"})

    def test_key_of_15_bytes_gets_400(self):
        self.refuse(400, headers={"Sec-WebSocket-Key": "AAAAAAAAAAAAAAAAAAAA"})  # 15 bytes

    def test_key_of_17_bytes_gets_400(self):
        self.refuse(400, headers={"Sec-WebSocket-Key": "AAAAAAAAAAAAAAAAAAAAAAA="})  # 17 bytes

    def test_connection_upgrade_without_upgrade_header_gets_400(self):
        self.refuse(400, headers={"Upgrade": None})

    def test_connection_upgrade_with_other_protocol_gets_400(self):
        self.refuse(400, headers={"Upgrade": "h2c"})

    def test_version_8_gets_426_with_version_13(self):
        response = self.refuse(426, headers={"Sec-WebSocket-Version": "8"})
        self.assertIn("13", response.header_tokens("Sec-WebSocket-Version"), response.describe())

    def test_version_14_gets_426_with_version_13(self):
        response = self.refuse(426, headers={"Sec-WebSocket-Version": "14"})
        self.assertIn("13", response.header_tokens("Sec-WebSocket-Version"), response.describe())

    def test_plain_get_gets_426_with_upgrade_websocket(self):
        response = self.refuse(426, headers={"Upgrade": None, "Connection": None,
                                             "Sec-WebSocket-Key": None, "Sec-WebSocket-Version": None})
        self.assertIn("websocket", response.header_tokens("Upgrade"), response.describe())

    def test_header_block_over_limit_gets_431(self):
        self.refuse(431, headers={"X-Filler": "f" * 9000})

    def test_header_block_under_limit_is_accepted(self):
        client = self.connect()
        response = client.request_handshake(headers={"X-Filler": "f" * 6000})
        self.assertIsNone(validate_upgrade(response, client.key), response.describe())

    def test_many_headers_over_limit_get_431(self):
        headers = [(f"X-Header-{i}", "v" * 40) for i in range(300)]
        self.refuse(431, headers=headers)


class OriginAllowListTest(GatewayTestCase):
    """RFC 6455 4.2.2 / 10.2: with --origin only listed Origins are accepted; others get 403."""

    gateway_args = ("--origin", "http://allowed.example,https://also.example:8443")

    def test_listed_origins_accepted(self):
        for origin in ("http://allowed.example", "https://also.example:8443"):
            with self.subTest(origin=origin):
                client = self.open_client(headers={"Origin": origin})
                self.roundtrip(client, OP_TEXT, origin.encode())

    def test_unlisted_origin_gets_403(self):
        for origin in ("http://evil.example", "http://allowed.example.evil", "https://allowed.example"):
            with self.subTest(origin=origin):
                client = self.connect()
                response = client.request_handshake(headers={"Origin": origin})
                self.assert_refused(response, 403)


class SubprotocolTest(GatewayTestCase):
    """RFC 6455 4.2.2 / 11.3.4: one of the client's offered subprotocols supported by --subprotocol is selected."""

    gateway_args = ("--subprotocol", "a,b")

    def selected(self, *offers: str) -> "str | None":
        headers = [("Sec-WebSocket-Protocol", offer) for offer in offers]
        client = self.connect()
        response = client.request_handshake(headers=headers)
        self.assertIsNone(validate_upgrade(response, client.key), response.describe())
        self.roundtrip(client, OP_TEXT, b"ok")
        return response.header("Sec-WebSocket-Protocol")

    def test_single_supported_offer(self):
        self.assertEqual(self.selected("b"), "b")

    def test_first_supported_offer_in_client_order(self):
        """Contract: the first client-offered protocol that the server supports."""
        self.assertEqual(self.selected("c, b, a"), "b")
        self.assertEqual(self.selected("x, a"), "a")

    def test_offer_split_over_repeated_headers(self):
        """RFC 6455 11.3.4: the header may appear several times (same as one comma list)."""
        self.assertEqual(self.selected("x", "b"), "b")

    def test_no_supported_offer_means_no_header(self):
        """RFC 6455 4.2.2: the server must not select a protocol the client did not offer."""
        self.assertIsNone(self.selected("x, y"))

    def test_no_offer_means_no_header(self):
        self.assertIsNone(self.selected())


class MaxConnectionsTest(GatewayTestCase):
    """Contract (RFC 6455 4.2.2 allows refusing): with --max-connections 1 a second handshake gets 503."""

    gateway_args = ("--max-connections", "1")

    def test_second_client_gets_503_until_first_leaves(self):
        first = self.open_client()
        second = self.connect()
        self.assert_refused(second.request_handshake(), 503)
        second.close()
        first.send_close(1000)
        self.assert_close(first, 1000, reply=False)
        self.assert_eventually_accepted()

class OutOfDescriptorsTest(GatewayTestCase):
    """Out of file descriptors, the gateway rests its listener and serves the queued connections once some free up."""

    gateway_args = None
    spare = 6  # descriptors the gateway may open past those it holds at rest
    clients = spare + 3  # the last ones wait in the kernel's queue for the first to leave
    served_within = 2.0  # a handshake the gateway accepted is answered in milliseconds

    def test_queued_handshakes_are_answered_once_descriptors_free_up(self):
        gateway = self.start_gateway(("--admin", "127.0.0.1:0"))
        with open(f"/proc/{gateway.pid}/maps") as maps:
            if "libubsan" in maps.read():
                # UBSan's own checks open descriptors (a pipe to probe memory):
                # out of them, it reports the gateway's error_code as a bad object.
                self.skipTest("a sanitized gateway: the sanitizer's runtime needs descriptors of its own")
        admin = gateway.wait_for(r"admin listening on 127\.0\.0\.1:(\d+)")[0]
        held = len(os.listdir(f"/proc/{gateway.pid}/fd"))
        resource.prlimit(gateway.pid, resource.RLIMIT_NOFILE, (held + self.spare, held + self.spare))
        clients = []
        for _ in range(self.clients):
            client = self.connect(gateway)  # the kernel completes TCP's handshake, accepted or not
            key = make_key()
            client.send_raw(build_handshake_request(client.host_header, DEFAULT_PATH, key))
            clients.append((client, key))
        gateway.wait_for("accept on the client listener failed: Too many open files", timeout=10)
        time.sleep(self.served_within)
        served, queued = [], []
        for client, key in clients:
            try:
                response = client.read_http_response(timeout=0.05)
            except WsTimeout:
                queued.append((client, key))
                continue
            self.assertIsNone(validate_upgrade(response, key), response.describe())
            served.append(client)
        self.assertTrue(served and queued, f"{len(served)} served, {len(queued)} queued: expected some of each")
        self.assertLessEqual(len(queued), len(served), "more queued than the served will free room for")
        # Their descriptors freed, nothing new connecting: only the listener's
        # retry can take the queued connections (they raise no new edge).
        for client in served:
            client.close()
        for client, key in queued:
            response = client.read_http_response(timeout=10)
            self.assertIsNone(validate_upgrade(response, key), response.describe())
            self.roundtrip(client, OP_TEXT, b"served at last")
        gateway.wait_for("accepting on the client listener again", timeout=10)
        with urllib.request.urlopen(f"http://127.0.0.1:{admin.group(1)}/metrics", timeout=5) as response:
            scrape = response.read().decode()
        backoffs = re.search(r"^framegate_gateway_accept_backoffs_total (\d+)", scrape, re.M)
        self.assertIsNotNone(backoffs, "no accept back-off counter in the scrape")
        self.assertGreaterEqual(int(backoffs.group(1)), 1)


if __name__ == "__main__":
    unittest.main()
