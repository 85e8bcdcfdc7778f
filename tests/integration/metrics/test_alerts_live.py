"""deploy/prometheus/alerts.yml in a real Prometheus that scrapes a real
cluster: one gateway and two workers sharing a redis-server, with clients
on both workers.

The rules' promtool tests (deploy group) feed them series written by hand;
this one checks that the rules read what the processes really serve:

  1. a healthy cluster: every rule evaluates without an error and no alert
     is pending or firing;
  2. Redis stopped: FramegateBrokerDown becomes pending for both workers,
     with the worker's instance and `broker="redis"` (its `for` is a
     minute: pending is the expression matching), and the dashboard's
     "Alerts raised now" panel lists them;
  3. a worker killed with SIGKILL: FramegateFailovers fires at the gateway,
     counting at least the clients that were on it, and
     FramegateTargetDown becomes pending for the dead worker's instance only.
"""

from __future__ import annotations

import os
import signal
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, os.path.join(HERE, "..", "deploy"))
sys.path.insert(0, HERE)

from exposition import scrape  # noqa: E402
from framegate_harness import WsClient  # noqa: E402
from deploy_files import DASHBOARD, PROMETHEUS_ALERTS as ALERTS, alert_rules  # noqa: E402
from local_cluster import LocalCluster, until  # noqa: E402
from metric_refs import dashboard_queries  # noqa: E402
import prometheus_server  # noqa: E402

# The job names of deploy/prometheus/prometheus.yml, which the rules match.
GATEWAY_JOB, WORKER_JOB = "framegate-gateway", "framegate-worker"
WORKERS = ("w1", "w2")


@unittest.skipUnless(prometheus_server.available(), "prometheus is not installed (tools/setup.sh installs it)")
class AlertsLiveTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.cluster = LocalCluster(redis=True, prefix="fg-alerts-live-", workers=WORKERS,
                                   gateway_args=["--admin", "127.0.0.1:0"], worker_args=["--admin", "127.0.0.1:0"])
        cls.clients: list[WsClient] = []
        cls.prom = None
        try:
            cls.cluster.start()
            cls.gateway = f"127.0.0.1:{cls.cluster.admin}"
            cls.workers = {name: f"127.0.0.1:{port}" for name, port in zip(WORKERS, cls.cluster.worker_admins)}
            cls.connect_clients_on_every_worker()
            cls.prom = prometheus_server.PrometheusServer(
                cls.cluster.tmp, {GATEWAY_JOB: [cls.gateway], WORKER_JOB: list(cls.workers.values())},
                rule_files=[ALERTS])
            cls.prom.start()
            until("Prometheus scraping the gateway and both workers",
                  lambda: len(cls.prom.query("up == 1")) == 3, timeout=60)
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls) -> None:
        for client in cls.clients:
            client.close()
        if cls.prom is not None:
            cls.prom.stop()
        cls.cluster.stop()

    @classmethod
    def placement(cls) -> dict[str, float]:
        family = scrape(cls.cluster.admin)["framegate_gateway_worker_connections"]
        return {labels["worker"]: value for _, labels, value in family.samples}

    @classmethod
    def connect_clients_on_every_worker(cls) -> None:
        # Connections spread by a hash of their id: open until both workers hold some.
        while len(cls.clients) < 4 or min(cls.placement().get(w, 0) for w in WORKERS) == 0:
            if len(cls.clients) >= 32:
                raise AssertionError(f"every client on one worker: {cls.placement()}")
            client = WsClient("127.0.0.1", cls.cluster.port)
            client.connect()
            client.handshake("/echo")
            cls.clients.append(client)

    def alerts(self, name: str) -> list[dict]:
        data = self.prom.api("alerts") or {"alerts": []}
        return [a for a in data["alerts"] if a["labels"]["alertname"] == name]

    def rule_groups(self) -> list[dict]:
        return (self.prom.api("rules", type="alert") or {"groups": []})["groups"]

    def test_1_a_healthy_cluster_raises_nothing(self):
        groups = self.rule_groups()
        self.assertEqual(sorted(r["name"] for g in groups for r in g["rules"]),
                         sorted(r["alert"] for r in alert_rules()), "alerts.yml not loaded whole")
        first = {g["name"]: g["lastEvaluation"] for g in groups}

        # Three evaluations of every group after all targets were up.
        def evaluated_again() -> bool:
            seen = {g["name"]: g["lastEvaluation"] for g in self.rule_groups()}
            return all(seen[name] != when for name, when in first.items())

        for _ in range(3):
            until("another round of rule evaluations", evaluated_again, timeout=30)
            first = {g["name"]: g["lastEvaluation"] for g in self.rule_groups()}
        unhealthy = [(r["name"], r.get("lastError")) for g in self.rule_groups() for r in g["rules"]
                     if r["health"] != "ok"]
        self.assertEqual(unhealthy, [], "rules that failed to evaluate")
        self.assertEqual(self.prom.api("alerts")["alerts"], [], "alerts raised by a healthy cluster")

    def test_2_redis_stopped_makes_broker_down_pending_on_both_workers(self):
        self.cluster.redis.stop()

        def pending() -> list[dict]:
            raised = self.alerts("FramegateBrokerDown")
            return raised if len(raised) == len(WORKERS) else []

        raised = until("FramegateBrokerDown for both workers", pending, timeout=30)
        self.assertEqual(sorted(a["labels"]["instance"] for a in raised), sorted(self.workers.values()))
        for alert in raised:
            self.assertEqual(alert["state"], "pending")  # `for: 1m`
            self.assertEqual(alert["labels"]["broker"], "redis")
            self.assertEqual(alert["labels"]["severity"], "critical")
            self.assertEqual(alert["labels"]["job"], WORKER_JOB)
        # What the dashboard shows of them, with its own query.
        expr = next(t["expr"] for title, t in dashboard_queries(DASHBOARD) if title == "Alerts raised now")
        rows = {(r["metric"]["alertname"], r["metric"]["alertstate"], r["metric"]["instance"])
                for r in self.prom.query(expr)}
        self.assertEqual(rows, {("FramegateBrokerDown", "pending", worker) for worker in self.workers.values()})

    def test_3_a_killed_worker_fires_failovers_and_makes_its_target_down_pending(self):
        placement = self.placement()
        victim = max(WORKERS, key=lambda w: placement.get(w, 0))
        moved = placement[victim]
        self.assertGreater(moved, 0)
        self.cluster.workers[WORKERS.index(victim)].stop(sig=signal.SIGKILL)

        failovers = until("FramegateFailovers firing", lambda: [a for a in self.alerts("FramegateFailovers")
                                                                  if a["state"] == "firing"], timeout=30)
        self.assertEqual([a["labels"]["instance"] for a in failovers], [self.gateway])
        self.assertGreaterEqual(float(failovers[0]["value"]), moved)
        self.assertEqual(failovers[0]["labels"]["severity"], "info")

        down = until("FramegateTargetDown for the killed worker", lambda: self.alerts("FramegateTargetDown"),
                     timeout=30)
        self.assertEqual([(a["labels"]["instance"], a["state"]) for a in down], [(self.workers[victim], "pending")])
        self.assertEqual(self.alerts("FramegateWorkerLinkCut"), [], "a dead worker's link is not a cut one")


if __name__ == "__main__":
    unittest.main()
