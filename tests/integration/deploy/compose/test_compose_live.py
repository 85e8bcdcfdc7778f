"""docker-compose.yml run for real, as a user runs it, on a machine that
reaches no image registry: a Docker engine (started here if none runs),
Debian's debootstrap as the base image, framegate's image built from
deploy/Dockerfile, local stand-ins for Redis, Prometheus and nginx
(docker-compose.test.yml), and Debian's docker-compose.

One project, brought up once with 3 workers; the tests run in order on it
(their names are numbered) and the last takes it down:
  1. a room spans the workers and a publish reaches each member once;
  2. the Prometheus stand-in scrapes every gateway and worker, and
     evaluates deploy/prometheus/alerts.yml without raising anything;
  3. `--scale worker=N` up and down: the gateway follows, no client closes;
  4. kill -9 of a worker process: Docker restarts it, its clients move,
     and the FramegateFailovers alert fires;
  5. the scale-out profile: two gateways behind nginx serve one room;
  6. `docker-compose down -v` leaves nothing behind.

Needs root (or a running engine and a cached base image) and what
tools/setup.sh installs; without them it fails, it never skips. The
whole run is bounded by FRAMEGATE_COMPOSE_TEST_BUDGET seconds (default
840), below CTest's TIMEOUT, so that the cleanup still runs in time.
"""

from __future__ import annotations

import itertools
import os
import signal
import sys
import time
import unittest

import images
from compose_project import ComposeProject
from deploy_files import alert_rules
from docker_engine import Engine, docker
from probes import http_get, metrics, prometheus_api, samples, wait_until
from room_client import RoomClient

WORKERS = 3
ALERT_RULES = len(alert_rules())
ROOM = "lobby"
BUDGET_SECONDS = int(os.environ.get("FRAMEGATE_COMPOSE_TEST_BUDGET", "840"))
# The gateway's admin listener inside its container (FRAMEGATE_ADMIN).
GATEWAY_ADMIN_PORT = 9090
STARTED = time.monotonic()


def log(message: str) -> None:
    print(f"# [{time.monotonic() - STARTED:6.1f} s] {message}", file=sys.stderr, flush=True)


def over_budget(signum, frame) -> None:
    raise TimeoutError(f"the live compose test ran past its {BUDGET_SECONDS} s budget")


class ComposeLiveTest(unittest.TestCase):
    maxDiff = None
    engine: Engine
    project: ComposeProject | None
    members: list[RoomClient]

    @classmethod
    def setUpClass(cls) -> None:
        cls.failed = True  # until setUpClass returns; then set by a failing test (run below)
        cls.engine = Engine()
        cls.project = None
        cls.members = []
        cls.counter = itertools.count()
        cls.addClassCleanup(cls.clean_up)  # also when setUpClass fails
        signal.signal(signal.SIGALRM, over_budget)
        signal.alarm(BUDGET_SECONDS)
        cls.engine.start()
        log("Docker engine: " + ("started here" if cls.engine.process else "already running"))
        images.make_all(log)
        cls.project = ComposeProject(WORKERS)
        log(f"up: project {cls.project.name}, {WORKERS} workers")
        cls.project.up()
        cls.wait_workers(WORKERS)
        log("up and ready")
        cls.failed = False

    @classmethod
    def clean_up(cls) -> None:
        """Whatever state the run is in: clients closed, the project down, a daemon started here stopped."""
        signal.alarm(0)  # the budget never interrupts the cleanup
        try:
            cls.close_members()
            if cls.project is not None:
                if cls.failed:
                    log(f"the containers' last log lines:\n{cls.project.logs()}")
                cls.project.cleanup()
        finally:
            cls.engine.stop()

    def run(self, result=None):
        result = super().run(result)
        if result is not None and not result.wasSuccessful():
            type(self).failed = True
        return result

    def setUp(self) -> None:
        # Past the budget, the remaining steps fail at once and the cleanup starts.
        if time.monotonic() - STARTED > BUDGET_SECONDS:
            self.fail(f"not run: the {BUDGET_SECONDS} s budget is spent")

    @classmethod
    def close_members(cls) -> None:
        for client in cls.members:
            client.close()
        cls.members.clear()

    # --- the deployment as the host sees it --------------------------------

    @classmethod
    def gateway_admin(cls) -> str:
        return f"127.0.0.1:{cls.project.ports['admin']}"

    @classmethod
    def readyz(cls, admin: str) -> tuple[int, str]:
        return http_get(f"http://{admin}/readyz")

    @classmethod
    def wait_workers(cls, count: int, admin: str | None = None, timeout: float = 90) -> None:
        """Until the gateway's /readyz counts `count` workers."""
        want = (200, f"ready: {count} worker(s)")

        def ready() -> tuple[bool, tuple[int, str]]:
            seen = cls.readyz(admin or cls.gateway_admin())
            return seen == want, seen

        wait_until(ready, timeout, f"the gateway's /readyz answering {want}")

    def worker_connections(self) -> dict[str, float]:
        """worker id -> client connections the gateway routes to it now (ids of gone workers left out)."""
        text = metrics(self.gateway_admin())
        result: dict[str, float] = {}
        for labels, value in samples(text, "framegate_gateway_worker_connections"):
            result[labels["worker"]] = result.get(labels["worker"], 0) + value
        live = {labels["worker"] for labels, value in samples(text, "framegate_gateway_worker_links") if value > 0}
        return {worker: n for worker, n in result.items() if worker in live}

    def worker_container(self, worker_id: str) -> str:
        """The container a worker id (`<container hostname>-<pid>`) runs in."""
        hostname = worker_id.rsplit("-", 1)[0]
        for container in self.project.containers("worker"):
            if container.startswith(hostname):
                return container
        self.fail(f"no worker container has hostname {hostname}")

    def failovers(self) -> float:
        return sum(v for _, v in samples(metrics(self.gateway_admin()), "framegate_gateway_failovers_total"))

    # --- rooms -------------------------------------------------------------

    def connect(self, port: int, name: str, room: str = ROOM) -> RoomClient:
        client = RoomClient(name, "127.0.0.1", port)
        client.join(room)
        return client

    def settle(self, clients: list[RoomClient], room: str, publishers: list[RoomClient]) -> None:
        """Until a publish from each publisher reaches every member: each worker's Redis subscription
        to the room is made after its first member joins, and /rooms does not acknowledge a join."""
        for publisher in publishers:
            token = f"settle-{next(self.counter)}"

            def reached_all() -> tuple[bool, list[str]]:
                publisher.publish(room, {"settle": token})
                missing = [c.name for c in clients if not c.wait_for(lambda m: token in m, 0.3)]
                return not missing, missing

            wait_until(reached_all, 30, f"a publish from {publisher.name} reaching every member of {room}", 0.2)

    def assert_delivered_once(self, clients: list[RoomClient], room: str, publishers: list[RoomClient]) -> None:
        """A publish from each publisher reaches every member, and no member gets one twice."""
        messages = [p.publish(room, {"n": next(self.counter), "from": p.name}) for p in publishers]
        for message in messages:
            missing = [c.name for c in clients if not c.wait_for(lambda m: m == message, 10)]
            self.assertEqual(missing, [], f"{message} did not reach them")
        time.sleep(0.5)  # time for a duplicate to show up
        twice = {(c.name, m): c.count(m) for c in clients for m in messages if c.count(m) != 1}
        self.assertEqual(twice, {}, "received more than once")
        # Through Redis with history (the default), each delivery carries its offset.
        unnumbered = [c.name for c in clients if any(c.offsets[c.messages.index(m)] is None for m in messages)]
        self.assertEqual(unnumbered, [], "deliveries without their offset")

    def assert_open(self, clients: list[RoomClient]) -> None:
        self.assertEqual({c.name: c.closed for c in clients if c.closed}, {}, "clients were closed")

    # --- the tests, in order ------------------------------------------------

    def test_1_a_room_across_workers_reaches_each_member_once(self):
        port = self.project.ports["gateway"]
        # Rendezvous hashing spreads connections; more clients until two workers hold some.
        while len(self.members) < 6 or len(self.worker_connections()) < 2:
            self.assertLess(len(self.members), 16, f"every client on one worker: {self.worker_connections()}")
            self.members.append(self.connect(port, f"member-{len(self.members)}"))
        placement = self.worker_connections()
        log(f"{len(self.members)} members on workers {placement}")
        self.settle(self.members, ROOM, [self.members[0]])
        self.assert_delivered_once(self.members, ROOM, [self.members[0], self.members[-1]])
        self.assert_open(self.members)

    def assert_prometheus_sees(self, workers: int) -> None:
        """Every target up (one gateway, `workers` workers) and the gateway's worker gauge at `workers`."""
        address = f"127.0.0.1:{self.project.ports['prometheus']}"

        def targets() -> tuple[bool, dict]:
            active = prometheus_api(address, "targets", state="active")["activeTargets"]
            seen = {"framegate-gateway": [], "framegate-worker": []}
            for target in active:
                seen.setdefault(target["labels"]["job"], []).append(target["health"])
            want = {"framegate-gateway": ["up"], "framegate-worker": ["up"] * workers}
            return seen == want, seen

        wait_until(targets, 60, f"Prometheus scraping 1 gateway and {workers} workers, all up")

        def gauge() -> tuple[bool, list]:
            result = prometheus_api(address, "query", query="framegate_gateway_workers")["result"]
            values = [float(r["value"][1]) for r in result]
            return values == [workers], values

        wait_until(gauge, 30, f"Prometheus's framegate_gateway_workers at {workers}")

    def test_2_prometheus_scrapes_every_gateway_and_worker(self):
        self.assert_prometheus_sees(WORKERS)
        address = f"127.0.0.1:{self.project.ports['prometheus']}"

        def rules_evaluated() -> tuple[bool, list]:
            rules = [r for g in prometheus_api(address, "rules", type="alert")["groups"] for r in g["rules"]]
            seen = [(r["name"], r["health"]) for r in rules
                    if r["health"] != "ok" or r["lastEvaluation"].startswith("0001-")]  # never evaluated
            return len(rules) == ALERT_RULES and not seen, seen or len(rules)

        wait_until(rules_evaluated, 30, f"Prometheus evaluating the {ALERT_RULES} rules of alerts.yml")
        # A healthy deployment raises nothing, not even pending: what the start-up window raised clears.
        wait_until(lambda: (not (a := prometheus_api(address, "alerts")["alerts"]), a), 30, "no alert raised")

    def gateway_alert(self, name: str) -> tuple[str, float] | None:
        """(state, value) of Prometheus's alert `name` for the gateway container, or None."""
        address = f"127.0.0.1:{self.project.ports['prometheus']}"
        instance = f"{self.project.address(self.project.containers('gateway')[0])}:{GATEWAY_ADMIN_PORT}"
        for alert in prometheus_api(address, "alerts")["alerts"]:
            if alert["labels"]["alertname"] == name and alert["labels"].get("instance") == instance:
                return alert["state"], float(alert["value"])
        return None

    def test_3_workers_scale_up_and_down_under_open_clients(self):
        self.assertTrue(self.members, "test_1 opened no clients")
        for workers in (5, 2):
            started = time.monotonic()
            self.project.up("--scale", f"worker={workers}")
            self.wait_workers(workers)
            self.assertEqual(len(self.project.containers("worker")), workers)
            log(f"scaled to {workers} workers in {time.monotonic() - started:.0f} s: {self.worker_connections()}")
            self.assert_open(self.members)
            self.assert_delivered_once(self.members, ROOM, [self.members[0]])
        self.assert_prometheus_sees(2)
        self.assert_open(self.members)

    def test_4_a_worker_killed_with_sigkill_restarts_and_its_clients_move(self):
        self.assertTrue(self.members, "test_1 opened no clients")
        workers = len(self.project.containers("worker"))
        placement = self.worker_connections()
        victim_id = max(placement, key=placement.get)
        container = self.worker_container(victim_id)
        restarts = self.project.inspect(container)["RestartCount"]
        failovers = self.failovers()
        # The scale-down above may have raised it already: then its value (the moves in ten minutes) must rise.
        before = self.gateway_alert("FramegateFailovers")
        # Under docker-init (init: true) the worker is not PID 1: find it by name, as a user would.
        docker("exec", container, "bash", "-c",
               "for p in /proc/[0-9]*; do [[ $(<$p/comm) == framegate-work* ]] && kill -9 ${p#/proc/}; done; true")
        log(f"kill -9 of worker {victim_id} ({placement[victim_id]:.0f} of our clients)")

        def moved() -> tuple[bool, float]:
            now = self.failovers()
            return now >= failovers + placement[victim_id], now

        after = wait_until(moved, 30, "the gateway moving the killed worker's connections")
        log(f"failovers_total {failovers:.0f} -> {after:.0f}")

        def alert_counts_the_kill() -> tuple[bool, tuple | None]:
            now = self.gateway_alert("FramegateFailovers")
            return now is not None and now[0] == "firing" and now[1] > (before[1] if before else 0), now

        seen = wait_until(alert_counts_the_kill, 30, f"FramegateFailovers firing above {before}")
        log(f"FramegateFailovers for the gateway: {before} -> {seen}")
        # The members that were on the killed worker are answered at once by the other one.
        self.assert_delivered_once(self.members, ROOM, self.members)

        def restarted() -> tuple[bool, tuple]:
            state = self.project.inspect(container)
            seen = (state["RestartCount"], state["State"]["Status"], state["State"].get("Health", {}).get("Status"))
            return seen[0] > restarts and seen[1:] == ("running", "healthy"), seen

        wait_until(restarted, 60, "Docker restarting the worker's container (restart: unless-stopped)")
        self.wait_workers(workers)
        log(f"worker container restarted and healthy: {self.worker_connections()}")
        self.assert_open(self.members)
        self.assert_delivered_once(self.members, ROOM, self.members)

    def test_5_scale_out_profile_two_gateways_behind_nginx_serve_one_room(self):
        project = self.project
        project.profiles = ["scale-out"]
        started = time.monotonic()
        project.up("--scale", "worker=2", "--scale", "worker-b=2")
        gateway_b = project.containers("gateway-b")
        self.assertEqual(len(gateway_b), 1)
        admin_b = f"{project.address(gateway_b[0])}:{GATEWAY_ADMIN_PORT}"
        self.wait_workers(2, admin_b)
        log(f"scale-out profile up in {time.monotonic() - started:.0f} s")
        # Every service up now: nothing is published beyond this host.
        published = project.published()
        self.assertEqual({a for addresses in published.values() for a in addresses}, {"127.0.0.1"}, published)
        self.assertEqual(set(published), {"gateway", "gateway-b", "lb", "prometheus"})

        def active(admin: str) -> float:
            return sum(v for _, v in samples(metrics(admin), "framegate_gateway_connections_active"))

        admins = {"gateway": self.gateway_admin(), "gateway-b": admin_b}
        room = "across-hosts"
        a = self.connect(project.ports["gateway"], "on-gateway", room)
        b = self.connect(project.ports["gateway-b"], "on-gateway-b", room)
        clients = [a, b]

        def close_clients() -> None:
            for client in clients:
                client.close()

        self.addCleanup(close_clients)
        before = {name: active(admin) for name, admin in admins.items()}
        via_lb = self.connect(project.ports["lb"], "via-nginx", room)
        clients.append(via_lb)
        grew = [name for name, admin in admins.items() if active(admin) == before[name] + 1]
        self.assertEqual(len(grew), 1, f"the nginx client should be on one gateway: {before} -> {grew}")
        log(f"nginx sent its client to {grew[0]}")
        self.settle(clients, room, clients)
        self.assert_delivered_once(clients, room, clients)

        # nginx balances over both: with the one it chose stopped, a new client reaches the other.
        chosen, other = grew[0], next(n for n in admins if n != grew[0])
        project.compose("stop", "--timeout", "5", chosen)
        survivor = clients[0] if other == "gateway" else clients[1]
        before_other = active(admins[other])
        late = self.connect(project.ports["lb"], "via-nginx-after-stop", room)
        clients.append(late)
        self.assertEqual(active(admins[other]), before_other + 1, f"nginx should have sent it to {other}")
        self.settle([survivor, late], room, [late])
        self.assert_delivered_once([survivor, late], room, [survivor, late])

    def test_6_down_leaves_no_container_network_or_volume(self):
        self.close_members()
        started = time.monotonic()
        self.project.down()
        log(f"down -v in {time.monotonic() - started:.0f} s")
        self.assertEqual(self.project.leftovers(), {"containers": [], "networks": [], "volumes": []})


if __name__ == "__main__":
    unittest.main()
