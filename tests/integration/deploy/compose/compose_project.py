"""One Compose project of the live test: docker-compose.yml with the test's
override, under a project name of its own, every published port on
loopback, and what Docker holds of it (containers, networks, volumes)
found by the labels Compose puts on each."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import unittest
import uuid

from deploy_files import COMPOSE_FILE, REPO_ROOT, compose_env, free_port, tool
from docker_engine import docker, fail
from images import FRAMEGATE_IMAGE

OVERRIDE_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "docker-compose.test.yml")
PROJECT_LABEL = "com.docker.compose.project"
SERVICE_LABEL = "com.docker.compose.service"


class ComposeProject:
    def __init__(self, workers: int) -> None:
        self.name = f"fgcomposetest{uuid.uuid4().hex[:10]}"
        self.dir = tempfile.TemporaryDirectory(prefix="fg-compose-live-")
        # An empty env file: a developer's .env must not change what is tested.
        self.env_file = os.path.join(self.dir.name, "empty.env")
        open(self.env_file, "w", encoding="utf-8").close()
        self.ports = {name: free_port() for name in ("gateway", "admin", "prometheus", "gateway-b", "lb")}
        # The file's own port variables, each given a loopback address.
        self.env = compose_env({
            "FRAMEGATE_PORT": f"127.0.0.1:{self.ports['gateway']}",
            "FRAMEGATE_OPS_BIND": "127.0.0.1",
            "FRAMEGATE_ADMIN_PORT": str(self.ports["admin"]),
            "PROMETHEUS_PORT": str(self.ports["prometheus"]),
            "FRAMEGATE_PORT_B": f"127.0.0.1:{self.ports['gateway-b']}",
            "FRAMEGATE_LB_PORT": f"127.0.0.1:{self.ports['lb']}",
            "FRAMEGATE_GATEWAY_IMAGE": FRAMEGATE_IMAGE,
            "FRAMEGATE_WORKER_IMAGE": FRAMEGATE_IMAGE,
            "FRAMEGATE_WORKERS": str(workers),
        })
        self.profiles: list[str] = []

    def compose(self, *args: str, timeout: float = 300) -> str:
        argv = [tool("docker-compose"), "--env-file", self.env_file, "--project-name", self.name,
                "--file", COMPOSE_FILE, "--file", OVERRIDE_FILE]
        for profile in self.profiles:
            argv += ["--profile", profile]
        result = subprocess.run(argv + list(args), cwd=REPO_ROOT, env=self.env, capture_output=True, text=True,
                                timeout=timeout)
        if result.returncode != 0:
            fail(f"docker-compose {' '.join(args)} exited {result.returncode}:\n{result.stderr[-4000:]}")
        return result.stdout

    def up(self, *args: str) -> None:
        # The images are built beforehand (images.py): never pulled, never built here.
        self.compose("up", "--detach", "--no-build", *args)

    def containers(self, service: str | None = None, everything: bool = False) -> list[str]:
        """IDs of the project's running containers (of one service), or of all of them with `everything`."""
        argv = ["ps", "--quiet", "--no-trunc", "--filter", f"label={PROJECT_LABEL}={self.name}"]
        if service:
            argv += ["--filter", f"label={SERVICE_LABEL}={service}"]
        if everything:
            argv.append("--all")
        return docker(*argv).stdout.split()

    def inspect(self, container: str) -> dict:
        return json.loads(docker("inspect", container).stdout)[0]

    def address(self, container: str) -> str:
        """The container's address on the project's network, which this host routes to directly."""
        networks = self.inspect(container)["NetworkSettings"]["Networks"]
        return next(iter(networks.values()))["IPAddress"]

    def published(self) -> dict[str, list[str]]:
        """Service -> the host addresses its containers' ports are published on, as Docker bound them."""
        result = {}
        for container in self.containers():
            state = self.inspect(container)
            ports = state["NetworkSettings"]["Ports"] or {}
            addresses = [b["HostIp"] for bindings in ports.values() if bindings for b in bindings]
            if addresses:
                result.setdefault(state["Config"]["Labels"][SERVICE_LABEL], []).extend(addresses)
        return result

    def leftovers(self) -> dict[str, list[str]]:
        """What Docker still holds of this project: containers, networks, volumes."""
        label = f"label={PROJECT_LABEL}={self.name}"
        return {
            "containers": self.containers(everything=True),
            "networks": docker("network", "ls", "--quiet", "--filter", label).stdout.split(),
            "volumes": docker("volume", "ls", "--quiet", "--filter", label).stdout.split(),
        }

    def logs(self, lines: int = 40) -> str:
        try:
            return self.compose("logs", "--no-color", "--tail", str(lines), timeout=60)
        except (unittest.TestCase.failureException, subprocess.TimeoutExpired) as exc:
            return f"(no logs: {exc})"

    def down(self) -> None:
        # With every profile: Compose v2 leaves the containers of a service whose profile is not
        # enabled (docker/compose#13647); 1.29 removes them anyway.
        self.profiles = ["scale-out", "cluster"]
        self.compose("down", "--volumes", "--remove-orphans", "--timeout", "20", timeout=240)

    def cleanup(self) -> None:
        """down -v, whatever state the project is in; the scratch directory goes too."""
        try:
            if any(self.leftovers().values()):
                self.down()
        finally:
            self.dir.cleanup()

