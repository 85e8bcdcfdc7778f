"""docker-compose.yml, validated by Debian's docker-compose (`config`, as
`up` would read it) in every profile, then checked for what the issue
asks of it: workers that scale with no edit, one link volume per gateway,
healthchecks and restart policies everywhere, variables with defaults, and
a cluster profile whose workers use a Redis Cluster that a one-shot job
creates."""

from __future__ import annotations

import os
import re
import unittest

from deploy_files import (COMPOSE_FILE, PROFILES, REDIS_CLUSTER_NODE_CONF, compose_command, compose_config,
                          compose_env, ports, run, volumes)

FRAMEGATE_IMAGE_SERVICES = {"gateway": "framegate-gateway", "worker": "framegate-worker",
                            "gateway-b": "framegate-gateway", "worker-b": "framegate-worker",
                            "gateway-cluster": "framegate-gateway", "worker-cluster": "framegate-worker"}
DEFAULT_SERVICES = {"redis", "gateway", "worker", "prometheus", "grafana"}
REDIS_NODES = [f"redis-node-{i}" for i in range(1, 7)]
PROFILE_SERVICES = {
    "scale-out": {"gateway-b", "worker-b", "lb"},
    "cluster": {*REDIS_NODES, "redis-cluster-init", "gateway-cluster", "worker-cluster"},
}
# Services that run once and exit: no healthcheck, never restarted.
ONE_SHOT = {"redis-cluster-init"}
# Each gateway with the workers that share its link directory.
HOSTS = {"gateway": "worker", "gateway-b": "worker-b", "gateway-cluster": "worker-cluster"}
# The workers on the single Redis (the others are on the Redis Cluster).
REDIS_WORKERS = ("worker", "worker-b")


def link_volume(service: dict) -> str:
    link_dir = service["environment"]["FRAMEGATE_LINK_DIR"]
    mounts = [v for v in volumes(service) if v["target"] == link_dir]
    assert len(mounts) == 1, f"no single volume on {link_dir}: {service.get('volumes')}"
    assert mounts[0]["type"] == "volume", f"{link_dir} should be a named volume, not {mounts[0]['type']}"
    return mounts[0]["source"]


class ComposeFileTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.config = compose_config("scale-out")
        cls.services = cls.config["services"]

    def test_valid_in_every_profile(self):
        for profile in PROFILES:
            with self.subTest(profile=profile):
                result = run(compose_command(profile, "config", "-q"), env=compose_env())
                self.assertEqual(result.returncode, 0, result.stderr)
                # An unset variable without a default is only a warning to Compose.
                self.assertNotIn("variable is not set", result.stderr)

    def test_every_variable_has_a_default(self):
        with open(COMPOSE_FILE, encoding="utf-8") as f:
            text = f.read()
        bare = re.findall(r"\$\{(\w+)\}|\$(\w+)", text)
        self.assertEqual(bare, [], "a variable without :-default makes `docker compose up` depend on the shell")

    def test_variables_reach_the_services(self):
        config = compose_config(overrides={"FRAMEGATE_WORKERS": "5", "FRAMEGATE_PORT": "18080",
                                           "FRAMEGATE_STICKY_KEY": "ip", "FRAMEGATE_REDIS": "redis://elsewhere:6380"})
        services = config["services"]
        self.assertEqual(services["worker"]["scale"], 5)
        self.assertIn((None, 18080, 8080), ports(services["gateway"]))
        self.assertEqual(services["gateway"]["environment"]["FRAMEGATE_STICKY_KEY"], "ip")
        self.assertEqual(services["worker"]["environment"]["FRAMEGATE_REDIS"], "redis://elsewhere:6380")

    def test_services_and_profiles(self):
        self.assertEqual(set(self.services), DEFAULT_SERVICES.union(*PROFILE_SERVICES.values()))
        for name, service in self.services.items():
            with self.subTest(service=name):
                expected = [p for p, names in PROFILE_SERVICES.items() if name in names] or None
                self.assertEqual(service.get("profiles"), expected)

    def test_a_service_depends_only_on_services_it_starts_with(self):
        """A default service that waits for a profile's service would change a plain `up`."""
        for name, service in self.services.items():
            profiles = set(service.get("profiles") or [])
            for dependency in service.get("depends_on", {}):
                with self.subTest(service=name, dependency=dependency):
                    theirs = set(self.services[dependency].get("profiles") or [])
                    self.assertLessEqual(theirs, profiles)

    def test_healthchecks_and_restart_policies(self):
        for name, service in self.services.items():
            with self.subTest(service=name):
                if name in ONE_SHOT:
                    self.assertIn(service.get("restart"), (None, "no"))
                    self.assertNotIn("healthcheck", service)
                    continue
                self.assertIn(service.get("restart"), ("always", "unless-stopped"))
                test = service.get("healthcheck", {}).get("test")
                self.assertTrue(test and test[0] in ("CMD", "CMD-SHELL"), f"no healthcheck command: {test}")

    def test_framegate_services_run_the_image_binaries(self):
        for name, binary in FRAMEGATE_IMAGE_SERVICES.items():
            with self.subTest(service=name):
                service = self.services[name]
                self.assertEqual(service["command"], [binary])
                self.assertEqual(service["build"]["dockerfile"], "deploy/Dockerfile")
                self.assertEqual(os.path.realpath(service["build"]["context"]), os.path.dirname(COMPOSE_FILE))
                probe = "/healthz" if binary == "framegate-gateway" else "/readyz"
                self.assertEqual(service["healthcheck"]["test"], ["CMD", "framegate-healthcheck", probe])
                self.assertRegex(service["environment"]["FRAMEGATE_ADMIN"], r"^0\.0\.0\.0:\d+$",
                                 "Prometheus scrapes the admin listener from another container")

    def test_workers_scale_without_configuration(self):
        for name in HOSTS.values():
            with self.subTest(service=name):
                worker = self.services[name]
                self.assertNotIn("container_name", worker, "a fixed name allows one container")
                self.assertNotIn("ports", worker, "a fixed host port allows one container")
                self.assertNotIn("FRAMEGATE_ID", worker["environment"], "each replica needs its own id")
                self.assertGreaterEqual(worker.get("scale", 1), 1)

    def test_each_gateway_shares_its_own_link_volume_with_its_workers(self):
        volumes = {}
        for gateway, worker in HOSTS.items():
            with self.subTest(gateway=gateway):
                volumes[gateway] = link_volume(self.services[gateway])
                self.assertEqual(link_volume(self.services[worker]), volumes[gateway])
                self.assertEqual(self.services[worker]["environment"]["FRAMEGATE_LINK_DIR"],
                                 self.services[gateway]["environment"]["FRAMEGATE_LINK_DIR"])
        self.assertEqual(len(set(volumes.values())), len(HOSTS), "two gateways on one link directory")

    def test_one_redis_for_every_worker(self):
        for worker in REDIS_WORKERS:
            self.assertEqual(self.services[worker]["environment"]["FRAMEGATE_REDIS"], "redis://redis:6379")
            self.assertEqual(self.services[worker]["depends_on"]["redis"], {"condition": "service_healthy"})

    def test_gateway_publishes_8080(self):
        self.assertIn((None, 8080, 8080), ports(self.services["gateway"]))

    def test_bind_mounts_exist(self):
        for name, service in self.services.items():
            for volume in volumes(service):
                if volume["type"] == "bind":
                    with self.subTest(service=name, source=volume["source"]):
                        self.assertTrue(os.path.exists(volume["source"]))
                        self.assertTrue(volume.get("read_only"), "configuration is mounted read-only")


class ClusterProfileTest(unittest.TestCase):
    """Profile cluster: six Redis Cluster nodes reachable by service name,
    a one-shot job that joins them, and a host whose workers use them."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.services = compose_config("cluster")["services"]

    def test_nodes_run_the_redis_image_as_cluster_nodes_announcing_their_service_name(self):
        with open(REDIS_CLUSTER_NODE_CONF, encoding="utf-8") as f:
            conf = {line.split()[0]: line.split(None, 1)[1].strip() for line in f
                    if line.strip() and not line.startswith("#")}
        self.assertEqual(conf["cluster-enabled"], "yes")
        self.assertEqual(conf["cluster-preferred-endpoint-type"], "hostname")
        self.assertEqual(conf["port"], "6379")
        for name in REDIS_NODES:
            with self.subTest(node=name):
                node = self.services[name]
                self.assertEqual(node["image"], self.services["redis"]["image"])
                conf_path = node["command"][1]
                self.assertEqual(node["command"], ["redis-server", conf_path, "--cluster-announce-hostname", name])
                self.assertEqual([v["source"] for v in volumes(node) if v["target"] == conf_path],
                                 [REDIS_CLUSTER_NODE_CONF])
                self.assertNotIn("ports", node, "reachable inside the compose network only")

    def test_init_job_creates_the_cluster_of_every_node_once_all_are_up(self):
        init = self.services["redis-cluster-init"]
        self.assertEqual(init["image"], self.services["redis"]["image"])
        self.assertEqual(init["command"][2:], [f"{n}:6379" for n in REDIS_NODES])
        script = init["command"][1]
        self.assertEqual([v["source"] for v in volumes(init) if v["target"] == script],
                         [os.path.join(os.path.dirname(COMPOSE_FILE), "deploy", "redis", "cluster-init.sh")])
        self.assertEqual(init["depends_on"], {n: {"condition": "service_healthy"} for n in REDIS_NODES})

    def test_workers_use_the_cluster_once_it_exists(self):
        worker = self.services["worker-cluster"]
        env = worker["environment"]
        self.assertNotIn("FRAMEGATE_REDIS", env, "one broker per worker: the single Redis or the cluster")
        seeds = env["FRAMEGATE_REDIS_CLUSTER"].split(",")
        self.assertGreaterEqual(len(seeds), 2, "one seed down must not keep a worker from starting")
        for seed in seeds:
            host, port = seed.rsplit(":", 1)
            self.assertIn(host, REDIS_NODES)
            self.assertEqual(port, "6379")
        self.assertEqual(worker["depends_on"]["redis-cluster-init"],
                         {"condition": "service_completed_successfully"})
        self.assertNotIn("redis", worker["depends_on"])

    def test_seeds_can_be_set(self):
        env = compose_config("cluster", overrides={"FRAMEGATE_REDIS_CLUSTER": "r1:7000,r2:7000"})[
            "services"]["worker-cluster"]["environment"]
        self.assertEqual(env["FRAMEGATE_REDIS_CLUSTER"], "r1:7000,r2:7000")


if __name__ == "__main__":
    unittest.main()
