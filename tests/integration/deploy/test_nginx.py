"""deploy/nginx/nginx.conf, the scale-out profile's load balancer: accepted
by `nginx -t`, balancing the compose file's gateways on their client port,
and, when the gateway is built, doing its job in front of two real
gateways: one client address sticks to one gateway, WebSocket traffic
passes through, and a gateway that goes away is skipped; with its
`proxy_protocol` line on, each client keeps its own address. And
deploy/nginx/tls.conf: wss:// through the real nginx terminating TLS (a
certificate made for the test) to a real gateway that trusts its header.
And deploy/nginx/http.conf: nginx as an HTTP balancer passing upgrades on,
each client named in X-Forwarded-For to gateways that trust it.

The upstream names only resolve inside Docker, so the tests run a copy
with each upstream and the listen port replaced by loopback addresses
(and Debian's dynamic stream module loaded; the official nginx image has
it built in)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import tempfile
import time
import unittest

from deploy_files import NGINX_CONFIG, compose_config, free_port, ports, run, services_answering, tool, volumes

STREAM_MODULE = "/usr/lib/nginx/modules/ngx_stream_module.so"
UPSTREAM_SERVER = re.compile(r"^(\s*server\s+)([\w.-]+):(\d+)", re.MULTILINE)
LISTEN = re.compile(r"^(\s*listen\s+)(\d+)((?:\s+\w+)*);", re.MULTILINE)
TLS_CONFIG = os.path.join(os.path.dirname(NGINX_CONFIG), "tls.conf")
HTTP_CONFIG = os.path.join(os.path.dirname(NGINX_CONFIG), "http.conf")
# Commented out in nginx.conf; ProxyProtocolTest runs the config with it on.
PROXY_PROTOCOL_LINE = "# proxy_protocol on;"


def read_config(path: str = NGINX_CONFIG) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def upstreams(text: str) -> list[tuple[str, int]]:
    return [(m[2], int(m[3])) for m in UPSTREAM_SERVER.finditer(text)]


def hermetic_copy(text: str, servers: dict[str, int], listen_port: int) -> str:
    """The config with upstream NAME:PORT -> 127.0.0.1:servers[NAME] and listen -> 127.0.0.1:listen_port."""
    text = UPSTREAM_SERVER.sub(lambda m: f"{m[1]}127.0.0.1:{servers[m[2]]}", text)
    text = LISTEN.sub(lambda m: f"{m[1]}127.0.0.1:{listen_port}{m[3]};", text)
    dynamic = "--with-stream=dynamic" in run([tool("nginx"), "-V"]).stderr
    return (f"load_module {STREAM_MODULE};\n" if dynamic else "") + text


class NginxRun:
    """nginx in the foreground on a hermetic copy, in its own prefix directory."""

    def __init__(self, text: str):
        self.dir = tempfile.TemporaryDirectory(prefix="fg-nginx-")
        self.conf = os.path.join(self.dir.name, "nginx.conf")
        with open(self.conf, "w", encoding="utf-8") as f:
            f.write(text)
        self.process: subprocess.Popen | None = None

    def argv(self, *extra: str) -> list[str]:
        return [tool("nginx"), "-p", self.dir.name, "-c", self.conf, "-e", "stderr",
                "-g", f"pid {self.dir.name}/nginx.pid;", *extra]

    def start(self, port: int) -> None:
        self.process = subprocess.Popen(self.argv("-g", "daemon off;"), stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                if self.process.poll() is not None:
                    raise AssertionError(f"nginx exited: {self.process.stderr.read().decode()}")
                time.sleep(0.05)
        raise AssertionError("nginx did not listen within 10 s")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.kill(self.process.pid, 15)  # by PID: fast shutdown, the workers exit with the master
            self.process.wait(10)
        if self.process:
            self.process.stderr.close()
        self.dir.cleanup()


class NginxConfigTest(unittest.TestCase):
    def test_nginx_accepts_it(self):
        # tls.conf needs its certificate: TlsTest runs it with one.
        for path in (NGINX_CONFIG, HTTP_CONFIG):
            with self.subTest(os.path.basename(path)):
                text = read_config(path)
                nginx = NginxRun(hermetic_copy(text, {name: free_port() for name, _ in upstreams(text)}, free_port()))
                try:
                    result = run(nginx.argv("-t", "-q"))
                finally:
                    nginx.stop()
                self.assertEqual(result.returncode, 0, result.stderr)

    def test_sticky_by_client_address(self):
        self.assertRegex(read_config(), r"(?m)^\s*hash \$remote_addr consistent;")

    def test_upstreams_are_two_compose_gateways_on_their_client_port(self):
        services = compose_config("scale-out")["services"]
        servers = upstreams(read_config())
        reached = set()
        for host, port in servers:
            with self.subTest(server=f"{host}:{port}"):
                answering = services_answering(host, services)
                self.assertEqual(len(answering), 1, f"{host} should name one compose service: {answering}")
                service = services[answering.pop()]
                self.assertEqual(service.get("command"), ["framegate-gateway"])
                self.assertEqual(service["environment"]["FRAMEGATE_LISTEN"], f"0.0.0.0:{port}")
                reached.add(id(service))
        self.assertEqual(len(reached), 2, f"two distinct gateways: {servers}")

    def test_compose_mounts_it_and_publishes_its_port(self):
        lb = compose_config("scale-out")["services"]["lb"]
        self.assertIn({"type": "bind", "source": NGINX_CONFIG, "target": "/etc/nginx/nginx.conf", "read_only": True},
                      volumes(lb))
        listen = [int(m[2]) for m in LISTEN.finditer(read_config())]
        self.assertEqual([target for _, _, target in ports(lb)], listen)


class BalancedGateways:
    """Two real gateways (--echo, each serving a file naming it) behind the real nginx."""

    gateway_args: tuple[str, ...] = ()

    def config(self) -> str:
        return read_config()

    def setUp(self) -> None:
        from framegate_harness import GatewayProcess

        self.gateways = {}
        self.dirs = []
        text = self.config()
        for host, _ in upstreams(text):
            static = tempfile.TemporaryDirectory(prefix="fg-lb-static-")
            self.dirs.append(static)
            with open(os.path.join(static.name, "id.txt"), "w", encoding="utf-8") as f:
                f.write(host)
            admin = () if "--admin" in self.gateway_args else ("--admin", "off")
            gateway = GatewayProcess(["--static-dir", static.name, *admin, *self.gateway_args])
            gateway.start()
            self.addCleanup(gateway.stop)
            self.gateways[host] = gateway
        self.port = free_port()
        self.nginx = NginxRun(hermetic_copy(text, {h: g.port for h, g in self.gateways.items()}, self.port))
        self.addCleanup(self.nginx.stop)
        self.nginx.start(self.port)

    def tearDown(self) -> None:
        for d in self.dirs:
            d.cleanup()

    def client_from(self, source: str):
        """A client of nginx from the loopback address `source`, closed at cleanup."""
        from framegate_harness import WsClient

        client = WsClient("127.0.0.1", self.port)
        self.addCleanup(client.close)
        return client.connect(source)

    def assert_each_client_counted_by_its_own_address(self, headers=None) -> None:
        """Two clients in under a per-address cap of one, a second socket of the first refused, the first alive."""
        from framegate_harness import OP_TEXT

        first, second = self.client_from("127.0.0.2"), self.client_from("127.0.0.3")
        for client in (first, second):
            client.handshake("/", headers)
            client.send_text("through nginx")
            self.assertEqual(client.recv_frame().payload, b"through nginx")
        again = self.client_from("127.0.0.2")  # the same gateway (hash of the address), its one slot taken
        response = again.request_handshake("/", headers)
        self.assertEqual(response.status, 429, response.describe())
        self.assertIn(b"too many connections from this address", response.body)
        first.send_text("still here")
        frame = first.recv_frame()
        self.assertEqual((frame.opcode, frame.payload), (OP_TEXT, b"still here"))


@unittest.skipUnless(os.environ.get("FRAMEGATE_GATEWAY_BIN"), "needs the built gateway (CTest passes it)")
class LoadBalancerTest(BalancedGateways, unittest.TestCase):
    def which_gateway(self) -> str:
        from framegate_harness import WsClient

        with WsClient("127.0.0.1", self.port).connect() as client:
            response = client.request_raw(b"GET /id.txt HTTP/1.1\r\nHost: lb\r\nConnection: close\r\n\r\n")
        self.assertEqual(response.status, 200, response.describe())
        return response.body.decode()

    def test_one_address_sticks_to_one_gateway(self):
        seen = {self.which_gateway() for _ in range(8)}
        self.assertEqual(len(seen), 1, seen)
        self.assertIn(seen.pop(), self.gateways)

    def test_websocket_passes_through(self):
        from framegate_harness import OP_TEXT, WsClient, scrape_metrics

        with WsClient("127.0.0.1", self.port).connect() as client:
            client.handshake("/")
            client.send_text("through nginx")
            frame = client.recv_frame()
        self.assertEqual((frame.opcode, frame.payload), (OP_TEXT, b"through nginx"))

    def test_a_gateway_that_goes_away_is_skipped(self):
        first = self.which_gateway()
        self.gateways[first].stop()
        second = self.which_gateway()
        self.assertNotEqual(second, first)
        self.assertIn(second, self.gateways)


@unittest.skipUnless(os.environ.get("FRAMEGATE_GATEWAY_BIN"), "needs the built gateway (CTest passes it)")
class ProxyProtocolTest(BalancedGateways, unittest.TestCase):
    """nginx's `proxy_protocol on` (docs/DEPLOY.md) with gateways that trust it: each client keeps its own
    address behind the balancer, so a per-address cap of one lets two clients in and refuses a second
    socket of either (without the header both would be nginx's 127.0.0.1)."""

    gateway_args = ("--proxy-protocol-from", "127.0.0.1/32", "--max-connections-per-ip", "1")

    def config(self) -> str:
        text = read_config()
        self.assertIn(PROXY_PROTOCOL_LINE, text, "the documented line to enable is not in nginx.conf")
        return text.replace(PROXY_PROTOCOL_LINE, PROXY_PROTOCOL_LINE.replace("# ", "", 1))

    def test_each_client_is_counted_by_its_own_address(self):
        self.assert_each_client_counted_by_its_own_address()


@unittest.skipUnless(os.environ.get("FRAMEGATE_GATEWAY_BIN"), "needs the built gateway (CTest passes it)")
class HttpBalancerTest(BalancedGateways, unittest.TestCase):
    """http.conf: nginx as an HTTP balancer in front of gateways with --forwarded-for-from its address. Each
    client is counted by the address nginx appends to X-Forwarded-For, whatever the client wrote there
    itself (without the option every client would be nginx's 127.0.0.1)."""

    gateway_args = ("--forwarded-for-from", "127.0.0.1/32", "--max-connections-per-ip", "1", "--admin", "127.0.0.1:0")

    def config(self) -> str:
        return read_config(HTTP_CONFIG)

    def test_each_client_is_counted_by_its_own_address(self):
        self.assert_each_client_counted_by_its_own_address()

    def test_a_forged_header_does_not_make_another_client(self):
        from framegate_harness import scrape_metrics

        self.assert_each_client_counted_by_its_own_address([("X-Forwarded-For", "192.0.2.1")])
        counted = sum(scrape_metrics(g)['framegate_gateway_forwarded_for_total{result="client"}']
                      for g in self.gateways.values())
        self.assertEqual(counted, 3)

    def test_plain_http_passes_through(self):
        with self.client_from("127.0.0.4") as client:
            response = client.request_raw(b"GET /id.txt HTTP/1.1\r\nHost: lb\r\nConnection: close\r\n\r\n")
        self.assertEqual(response.status, 200, response.describe())
        self.assertIn(response.body.decode(), self.gateways)


@unittest.skipUnless(os.environ.get("FRAMEGATE_GATEWAY_BIN"), "needs the built gateway (CTest passes it)")
class TlsTest(unittest.TestCase):
    """tls.conf: nginx terminates TLS and sends the PROXY header; the gateway echoes over wss://."""

    def setUp(self) -> None:
        from framegate_harness import GatewayProcess

        self.dir = tempfile.TemporaryDirectory(prefix="fg-nginx-tls-")
        self.addCleanup(self.dir.cleanup)
        self.cert, key = os.path.join(self.dir.name, "cert.pem"), os.path.join(self.dir.name, "key.pem")
        made = run([tool("openssl"), "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", key, "-out", self.cert])
        self.assertEqual(made.returncode, 0, made.stderr)
        self.gateway = GatewayProcess(["--proxy-protocol-from", "127.0.0.1/32", "--admin", "127.0.0.1:0"])
        self.gateway.start()
        self.addCleanup(self.gateway.stop)
        text = read_config(TLS_CONFIG)
        for shipped, ours in (("/etc/nginx/tls/cert.pem", self.cert), ("/etc/nginx/tls/key.pem", key)):
            self.assertIn(shipped, text)
            text = text.replace(shipped, ours)
        self.port = free_port()
        self.nginx = NginxRun(hermetic_copy(text, {name: self.gateway.port for name, _ in upstreams(text)}, self.port))
        self.addCleanup(self.nginx.stop)
        self.nginx.start(self.port)

    def test_wss_reaches_the_gateway_with_the_clients_address(self):
        import ssl

        from framegate_harness import OP_TEXT, WsClient, scrape_metrics

        context = ssl.create_default_context(cafile=self.cert)
        client = WsClient("127.0.0.1", self.port)
        raw = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        client.sock = context.wrap_socket(raw, server_hostname="127.0.0.1")
        self.addCleanup(client.close)
        self.assertIn(client.sock.version(), ("TLSv1.2", "TLSv1.3"))
        client.handshake("/")
        client.send_text("over TLS")
        frame = client.recv_frame()
        self.assertEqual((frame.opcode, frame.payload), (OP_TEXT, b"over TLS"))
        metrics = scrape_metrics(self.gateway)
        self.assertEqual(metrics['framegate_gateway_proxy_headers_total{result="client"}'], 1)
        self.assertEqual(metrics['framegate_gateway_proxy_headers_total{result="refused"}'], 0)

    def test_plain_http_to_the_tls_port_is_closed_unanswered(self):
        from framegate_harness import WsClient, WsConnectionClosed, scrape_metrics

        with WsClient("127.0.0.1", self.port).connect() as client, self.assertRaises(WsConnectionClosed):
            client.request_handshake("/")
        self.assertEqual(scrape_metrics(self.gateway)['framegate_gateway_connections_opened_total'], 0)


if __name__ == "__main__":
    unittest.main()
