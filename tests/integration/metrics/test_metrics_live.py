"""/metrics of a running cluster: one gateway (two I/O threads, --deflate)
and two workers sharing a real redis-server, after known traffic.

Checks that every metric docs/METRICS.md documents is served and that
nothing undocumented is; that the values follow the traffic (connections up
and down, messages by opcode and app, compression each way, a protocol
error by kind, a refusal by status, broker publishes); that every metric
the Grafana dashboard queries is served; and that a real Prometheus scrapes every process
and answers PromQL about them.
"""

from __future__ import annotations

import json
import os
import sys
import unittest
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, os.path.join(HERE, "..", "deploy"))
sys.path.insert(0, HERE)

from deflate_client import Deflate, json_text  # noqa: E402
from exposition import Family, scrape  # noqa: E402
from metric_refs import dashboard_metric_names, metrics_md_table  # noqa: E402
from framegate_harness import OP_BINARY, OP_CLOSE, OP_TEXT, REPO_ROOT, RSV1, WsClient, build_frame  # noqa: E402
from local_cluster import LocalCluster, until  # noqa: E402
import prometheus_server  # noqa: E402

TOKEN = "metrics-test-token"
TEXT_ECHOES, BINARY_ECHOES = 5, 3
DEFLATE_OFFER = "permessage-deflate; client_max_window_bits"
DEFLATE_BIG, DEFLATE_SMALL = 4096, 100  # above and below --deflate-threshold 1024


def http(method: str, url: str, body: bytes | None = None, headers: dict | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except (urllib.error.URLError, ConnectionError):
        return 0, b""  # not listening (yet)


def merged(*scrapes: dict[str, Family]) -> dict[str, str]:
    names: dict[str, str] = {}
    for s in scrapes:
        names.update({name: fam.type for name, fam in s.items()})
    return names


class LiveMetricsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.cluster = LocalCluster(
            redis=True, gateway_threads=2, prefix="fg-metrics-",
            gateway_args=["--admin", "127.0.0.1:0", "--api-token", TOKEN, "--link-ping", "0.2", "--deflate",
                          "--deflate-threshold", "1024"],
            workers=("w1", "w2"), worker_args=["--admin", "127.0.0.1:0"])
        cls.tmp = cls.cluster.tmp
        try:
            cls.start_cluster()
            cls.make_traffic()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls) -> None:
        cls.cluster.stop()

    @classmethod
    def start_cluster(cls) -> None:
        cls.cluster.start()
        cls.gateway = cls.cluster.gateway
        cls.gateway_admin = cls.cluster.admin
        cls.worker_admins = cls.cluster.worker_admins
        for port in cls.worker_admins:
            until("a ready worker", lambda port=port: http("GET", f"http://127.0.0.1:{port}/readyz")[0] == 200)
        until("both workers on both gateway threads", lambda: all(
            scrape(cls.gateway_admin)["framegate_gateway_worker_links"].value(worker=w) == 2 for w in ("w1", "w2")))
        until("a link ping answered", lambda: scrape(cls.gateway_admin)[
            "framegate_gateway_worker_link_rtt_seconds"].count() > 0)

    @classmethod
    def client(cls, path: str) -> WsClient:
        c = WsClient("127.0.0.1", cls.gateway.port)
        c.connect()
        c.handshake(path)
        return c

    @classmethod
    def make_traffic(cls) -> None:
        echo = cls.client("/echo")
        for i in range(TEXT_ECHOES):
            echo.send_text(f"text {i}")
            assert echo.recv_frame().payload == f"text {i}".encode()
        for i in range(BINARY_ECHOES):
            echo.send_binary(bytes([i]) * 300)
            assert echo.recv_frame().opcode == OP_BINARY

        # A compressed echo each way; the small reply goes out uncompressed (below the threshold).
        squeezed = WsClient("127.0.0.1", cls.gateway.port)
        squeezed.connect()
        deflate = Deflate(DEFLATE_OFFER, squeezed.handshake("/echo", headers={
            "Sec-WebSocket-Extensions": DEFLATE_OFFER}).header("Sec-WebSocket-Extensions"))
        for size, compressed in ((DEFLATE_BIG, True), (DEFLATE_SMALL, False)):
            payload = json_text(size)
            squeezed.send_raw(deflate.frames(OP_TEXT, payload))
            frame = squeezed.recv_frame()
            assert (frame.rsv == RSV1) == compressed, frame.describe()
            assert (deflate.inflate(frame.payload) if compressed else frame.payload) == payload

        cls.members = [cls.client("/rooms"), cls.client("/rooms")]
        for m in cls.members:
            m.send_text('{"op":"join","room":"metrics"}')
        until("both members' workers subscribed", lambda: sum(
            scrape(p)["framegate_worker_rooms"].value() for p in cls.worker_admins) >= 1 and all(
            scrape(p)["framegate_worker_broker_subscriptions"].value() == scrape(p)["framegate_worker_rooms"].value()
            for p in cls.worker_admins))
        cls.workers_with_members = sum(1 for p in cls.worker_admins if scrape(p)["framegate_worker_rooms"].value() > 0)
        cls.members[0].send_text('{"op":"publish","room":"metrics","data":1}')
        for m in cls.members:
            assert m.recv_frame().payload == b'{"room":"metrics","data":1,"offset":1}'
        status, _ = http("POST", f"http://127.0.0.1:{cls.gateway_admin}/api/publish",
                         b'{"room":"metrics","data":2}', {"Authorization": f"Bearer {TOKEN}"})
        assert status == 200, status
        for m in cls.members:
            assert m.recv_frame().payload == b'{"room":"metrics","data":2,"offset":2}'
        # A member asks for its position: one history read.
        cls.members[1].send_text('{"op":"join","room":"metrics","recover":true}')
        answer = json.loads(cls.members[1].recv_frame().payload)
        assert answer["joined"] == "metrics" and answer["offset"] == 2, answer

        bad = cls.client("/echo")
        bad.send_raw(build_frame(OP_TEXT, b"unmasked", mask=False))
        frame = bad.recv_frame()
        assert frame.opcode == OP_CLOSE and frame.close_code == 1002, frame.describe()
        bad.close()
        refused = WsClient("127.0.0.1", cls.gateway.port)
        refused.connect()
        assert refused.request_handshake("/nowhere").status == 404
        refused.close()

        # While three connections are open...
        until("the failed connection counted as closed", lambda: scrape(cls.gateway_admin)[
            "framegate_gateway_connections_closed_total"].value(code="1002") == 1)
        cls.gateway_open = scrape(cls.gateway_admin)
        cls.workers_open = [scrape(p) for p in cls.worker_admins]
        # ...and after every client said goodbye.
        for c in (echo, squeezed, *cls.members):
            c.send_raw(build_frame(OP_CLOSE, b"\x03\xe8"))
            c.recv_until_close(2.0)
            c.close()
        until("every connection closed", lambda: scrape(cls.gateway_admin)[
            "framegate_gateway_connections_active"].value() == 0)
        cls.gateway_after = scrape(cls.gateway_admin)
        cls.workers_after = [scrape(p) for p in cls.worker_admins]

    # ------------------------------------------------------------ names

    def test_every_documented_metric_is_served_and_nothing_else(self):
        documented = {m.name: m.type for m in metrics_md_table(os.path.join(REPO_ROOT, "docs", "METRICS.md")).values()}
        self.assertGreater(len(documented), 50, "docs/METRICS.md tables not found")
        served = merged(self.gateway_after, *self.workers_after)
        missing = sorted(set(documented) - set(served))
        undocumented = sorted(set(served) - set(documented))
        self.assertEqual(missing, [], "documented in docs/METRICS.md but not served")
        self.assertEqual(undocumented, [], "served but not documented in docs/METRICS.md")
        wrong_type = {n: (documented[n], served[n]) for n in documented if served.get(n) != documented[n]}
        self.assertEqual(wrong_type, {}, "type in docs/METRICS.md differs from the scrape")
        for name in served:
            if served[name] == "counter":
                self.assertTrue(name.endswith("_total"), name)

    def test_every_metric_the_dashboard_shows_is_served(self):
        names = dashboard_metric_names(os.path.join(REPO_ROOT, "deploy", "grafana", "dashboards", "framegate.json"))
        self.assertGreater(len(names), 30, "no queries found in the dashboard")
        served = merged(self.gateway_after, *self.workers_after)
        self.assertEqual(sorted(names - set(served)), [], "the dashboard queries metrics no process serves")

    # ------------------------------------------------------------ values

    def test_connections_go_up_and_down(self):
        g, after = self.gateway_open, self.gateway_after
        self.assertEqual(g["framegate_gateway_connections_opened_total"].value(), 5)
        self.assertEqual(g["framegate_gateway_connections_active"].value(), 4)
        self.assertEqual(g["framegate_gateway_worker_connections"].total(), 4)
        self.assertEqual(sum(w["framegate_worker_connections"].value() for w in self.workers_open), 4)
        self.assertEqual(g["framegate_gateway_deflate_connections"].value(), 1)
        self.assertEqual(after["framegate_gateway_connections_active"].value(), 0)
        self.assertEqual(after["framegate_gateway_deflate_connections"].value(), 0)
        self.assertEqual(after["framegate_gateway_connections_closed_total"].value(code="1000"), 4)
        self.assertEqual(after["framegate_gateway_connections_closed_total"].value(code="1002"), 1)
        self.assertEqual(after["framegate_gateway_worker_connections"].total(), 0)
        self.assertEqual(sum(w["framegate_worker_connections"].value() for w in self.workers_after), 0)
        self.assertEqual(after["framegate_gateway_worker_connections_routed_total"].total(), 5)

    def test_messages_are_counted_by_opcode_and_app(self):
        g = self.gateway_after
        rooms_in = 4  # two joins, one publish, one join asking for its position
        text_echoes = TEXT_ECHOES + 2  # and the two of the deflate connection (DEFLATE_BIG, DEFLATE_SMALL)
        self.assertEqual(g["framegate_gateway_messages_received_total"].value(opcode="text"), text_echoes + rooms_in)
        self.assertEqual(g["framegate_gateway_messages_received_total"].value(opcode="binary"), BINARY_ECHOES)
        self.assertEqual(g["framegate_gateway_received_payload_bytes_total"].value(opcode="binary"), 300 * BINARY_ECHOES)
        # Each of the two publishes reaches both members; one join is answered.
        self.assertEqual(g["framegate_gateway_messages_sent_total"].value(opcode="text"), text_echoes + 4 + 1)
        self.assertEqual(g["framegate_gateway_messages_sent_total"].value(opcode="binary"), BINARY_ECHOES)
        self.assertEqual(g["framegate_gateway_message_size_bytes"].count(), text_echoes + rooms_in + BINARY_ECHOES)
        self.assertGreater(g["framegate_gateway_socket_read_bytes_total"].value(), 300 * BINARY_ECHOES)
        self.assertGreater(g["framegate_gateway_socket_written_bytes_total"].value(), 300 * BINARY_ECHOES)
        self.assertGreater(g["framegate_gateway_frames_per_read"].count(), 0)
        # Every read of client data is one turn, and the kernel stamped it.
        self.assertGreaterEqual(g["framegate_gateway_client_turn_seconds"].count(), g["framegate_gateway_frames_per_read"].count())
        # Stamped reads are a subset of the turns: the kernel starts stamping a
        # moment after the first socket asks, so the first reads may have none
        # (the stamps themselves are checked in TimestampedRead).
        self.assertLessEqual(g["framegate_gateway_receive_wait_seconds"].count(),
                             g["framegate_gateway_client_turn_seconds"].count())
        self.assertGreater(g["framegate_gateway_link_turn_seconds"].count(), 0)
        self.assertGreater(g["framegate_gateway_worker_roundtrip_seconds"].count(), 0)
        self.assertGreater(g["framegate_gateway_worker_link_rtt_seconds"].count(), 0)
        self.assertGreater(g["framegate_gateway_link_envelopes_per_write"].count(), 0)
        self.assertGreaterEqual(g["framegate_gateway_broadcast_recipients"].count(), 2)
        # Each echo waited for the one before: one send at least per reply.
        self.assertGreaterEqual(g["framegate_gateway_socket_writes_total"].value(), text_echoes + BINARY_ECHOES)
        workers = self.workers_after
        handled = lambda path: sum(w["framegate_worker_messages_handled_total"].value(path=path) for w in workers)
        self.assertEqual(handled("/echo"), text_echoes + BINARY_ECHOES)
        self.assertEqual(handled("/rooms"), rooms_in)
        self.assertEqual(sum(w["framegate_worker_handler_seconds"].count(path="/echo") for w in workers),
                         text_echoes + BINARY_ECHOES)
        self.assertEqual(sum(w["framegate_worker_connections_opened_total"].value(path="/echo") for w in workers), 3)
        self.assertEqual(sum(w["framegate_worker_connections_opened_total"].value(path="/rooms") for w in workers), 2)

    def test_deflate_is_counted_each_way(self):
        g = self.gateway_after
        messages = g["framegate_gateway_deflate_messages_total"]
        self.assertEqual(messages.value(direction="in"), 2)  # the client compressed both
        self.assertEqual(messages.value(direction="out"), 1)  # the gateway only the one above the threshold
        self.assertEqual(g["framegate_gateway_deflate_skipped_total"].value(), 1)
        raw = g["framegate_gateway_deflate_uncompressed_bytes_total"]
        wire = g["framegate_gateway_deflate_compressed_bytes_total"]
        self.assertEqual(raw.value(direction="in"), DEFLATE_BIG + DEFLATE_SMALL)
        self.assertEqual(raw.value(direction="out"), DEFLATE_BIG)
        self.assertLess(wire.value(direction="out"), DEFLATE_BIG / 2, "JSON should compress well")
        self.assertGreater(wire.value(direction="in"), 0)

    def test_errors_and_refusals_are_counted_by_kind_and_status(self):
        g = self.gateway_after
        self.assertEqual(g["framegate_gateway_protocol_errors_total"].value(kind="unmasked_frame"), 1)
        self.assertEqual(g["framegate_gateway_protocol_errors_total"].total(), 1)
        self.assertEqual(g["framegate_gateway_handshakes_refused_total"].value(status="404"), 1)
        self.assertEqual(g["framegate_gateway_handshakes_refused_total"].total(), 1)
        self.assertEqual(g["framegate_gateway_api_publishes_total"].value(status="200"), 1)
        self.assertEqual(g["framegate_gateway_backpressure_events_total"].total(), 0)

    def test_broker_publishes_and_deliveries(self):
        workers = self.workers_after
        total = lambda name: sum(w[name].value() for w in workers)
        # One from a client, one from the API, and the presence events of two
        # joins and two closes (published to the rooms' event channels).
        self.assertEqual(total("framegate_worker_broker_publishes_total"), 2 + 4)
        # Every worker with members gets each publish once, through Redis
        # (nobody listens to presence events).
        self.assertEqual(total("framegate_worker_broker_deliveries_total"), 2 * self.workers_with_members)
        self.assertEqual(sum(w["framegate_worker_broker_publish_seconds"].count() for w in workers), 2 + 4)
        self.assertEqual(sum(w["framegate_worker_presence_connections"].value() for w in self.workers_open), 2)
        # Two numbered messages in the room, as each subscribed worker saw them; none once unsubscribed.
        self.assertEqual(sum(w["framegate_worker_history_messages"].value() for w in self.workers_open),
                         2 * self.workers_with_members)
        self.assertEqual(sum(w["framegate_worker_history_messages"].value() for w in workers), 0)
        self.assertEqual(sum(w["framegate_worker_presence_connections"].value() for w in workers), 0)
        for w in workers:
            self.assertEqual(w["framegate_worker_broker_up"].value(broker="redis"), 1)
            self.assertEqual(w["framegate_worker_broker_dropped_total"].value(), 0)
            self.assertEqual(w["framegate_worker_broker_outbox"].value(), 0)
        self.assertEqual(sum(w["framegate_worker_rooms"].value() for w in self.workers_open), self.workers_with_members)
        history = lambda outcome: sum(w["framegate_worker_history_requests_total"].value(outcome=outcome) for w in workers)
        self.assertEqual(history("current"), 1)
        self.assertEqual(history("recovered"), 0)
        for w in workers:
            self.assertGreater(w["framegate_process_resident_memory_bytes"].value(), 1 << 20)
            self.assertGreater(w["framegate_process_open_fds"].value(), 3)
            self.assertEqual(w["framegate_build_info"].value(component="worker"), 1)

    # ------------------------------------------------------------ Prometheus

    @unittest.skipUnless(prometheus_server.available(), "prometheus is not installed (tools/setup.sh installs it)")
    def test_a_real_prometheus_scrapes_every_process(self):
        jobs = {"gateway": [f"127.0.0.1:{self.gateway_admin}"],
                "worker": [f"127.0.0.1:{p}" for p in self.worker_admins]}
        with prometheus_server.PrometheusServer(self.tmp, jobs) as prom:
            up = until("three healthy targets",
                       lambda: (r := prom.query("up == 1")) and len(r) == 3 and r, timeout=60)
            self.assertEqual(sorted(x["metric"]["job"] for x in up), ["gateway", "worker", "worker"])
            binary = prom.query('framegate_gateway_messages_received_total{opcode="binary"}')
            self.assertEqual([(x["metric"]["job"], float(x["value"][1])) for x in binary], [("gateway", BINARY_ECHOES)])
            echo = prom.query('sum(framegate_worker_messages_handled_total{path="/echo"})')
            self.assertEqual(float(echo[0]["value"][1]), TEXT_ECHOES + 2 + BINARY_ECHOES)
            buckets = prom.query("count(framegate_gateway_worker_roundtrip_seconds_bucket)")
            self.assertEqual(float(buckets[0]["value"][1]), 18)  # 17 bounds and +Inf

if __name__ == "__main__":
    unittest.main()
