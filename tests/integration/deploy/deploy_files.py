"""Where the deployment files are, and the tools that read them as Docker,
Prometheus and nginx would (Debian's docker-compose, promtool, nginx).

YAML is read with PyYAML (Debian python3-yaml, which docker-compose itself
depends on); everything else is the standard library.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import socket
import subprocess
import tempfile
import unittest

import yaml

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
COMPOSE_FILE = os.path.join(REPO_ROOT, "docker-compose.yml")
DOCKERFILE = os.path.join(REPO_ROOT, "deploy", "Dockerfile")
DOCKERIGNORE = os.path.join(REPO_ROOT, ".dockerignore")
PROMETHEUS_CONFIG = os.path.join(REPO_ROOT, "deploy", "prometheus", "prometheus.yml")
PROMETHEUS_ALERTS = os.path.join(REPO_ROOT, "deploy", "prometheus", "alerts.yml")
REDIS_CLUSTER_NODE_CONF = os.path.join(REPO_ROOT, "deploy", "redis", "cluster-node.conf")
REDIS_CLUSTER_INIT = os.path.join(REPO_ROOT, "deploy", "redis", "cluster-init.sh")
NGINX_CONFIG = os.path.join(REPO_ROOT, "deploy", "nginx", "nginx.conf")
GRAFANA_DIR = os.path.join(REPO_ROOT, "deploy", "grafana")
DASHBOARD = os.path.join(GRAFANA_DIR, "dashboards", "framegate.json")
DASHBOARD_GENERATOR = os.path.join(GRAFANA_DIR, "generate_dashboard.py")
DATASOURCES = os.path.join(GRAFANA_DIR, "provisioning", "datasources", "prometheus.yml")
DASHBOARD_PROVIDERS = os.path.join(GRAFANA_DIR, "provisioning", "dashboards", "framegate.yml")
HEALTHCHECK = os.path.join(REPO_ROOT, "deploy", "healthcheck.sh")
METRICS_MD = os.path.join(REPO_ROOT, "docs", "METRICS.md")
SETUP_SH = os.path.join(REPO_ROOT, "tools", "setup.sh")

# The profiles docker-compose.yml defines; None is the default set.
PROFILES = (None, "scale-out", "cluster")


def tool(name: str) -> str:
    """The path of a command the deploy tests need; a missing one fails the test (never skips it)."""
    path = shutil.which(name)
    if path is None:
        raise unittest.TestCase.failureException(f"{name} is not installed: run tools/setup.sh (as root)")
    return path


def run(argv: list[str], env: dict | None = None, cwd: str = REPO_ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def compose_env(overrides: dict | None = None) -> dict:
    """The environment docker-compose interpolates from: this one without any
    variable the file reads (so the file's own defaults are what is tested),
    plus `overrides`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("FRAMEGATE_", "PROMETHEUS_", "GRAFANA_", "REDIS_", "NGINX_", "COMPOSE_"))}
    env.update(overrides or {})
    return env


@functools.cache
def _empty_env_file() -> str:
    fd, path = tempfile.mkstemp(prefix="fg-compose-", suffix=".env")
    os.close(fd)
    atexit.register(os.remove, path)
    return path


def compose_command(profile: str | None, *args: str) -> list[str]:
    # An empty --env-file: a developer's .env must not change what is tested
    # (docker-compose wants a regular file, not /dev/null).
    argv = [tool("docker-compose"), "--env-file", _empty_env_file(), "-f", COMPOSE_FILE]
    if profile:
        argv += ["--profile", profile]
    return argv + list(args)


def compose_config(profile: str | None = None, overrides: dict | None = None) -> dict:
    """The file as Compose resolves it (anchors merged, variables
    interpolated, relative paths made absolute), parsed."""
    result = run(compose_command(profile, "config"), env=compose_env(overrides))
    if result.returncode != 0:
        raise unittest.TestCase.failureException(f"docker-compose config failed:\n{result.stderr}")
    return yaml.safe_load(result.stdout)


def load_yaml(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def alert_rules() -> list[dict]:
    """The alerting rules of deploy/prometheus/alerts.yml, every group's."""
    return [rule for group in load_yaml(PROMETHEUS_ALERTS)["groups"] for rule in group["rules"] if "alert" in rule]


def admin_port(service: dict) -> int:
    """The port of a framegate service's FRAMEGATE_ADMIN (HOST:PORT)."""
    return int(service["environment"]["FRAMEGATE_ADMIN"].rsplit(":", 1)[1])


# `docker-compose config` prints ports and volumes in the long form or the
# short one depending on the Compose version and the entry: read both.


def ports(service: dict) -> list[tuple[str | None, int, int]]:
    """(host address or None, published port, container port) of each published port."""
    result = []
    for port in service.get("ports", []):
        if isinstance(port, dict):
            result.append((port.get("host_ip"), int(port["published"]), int(port["target"])))
            continue
        fields = str(port).split("/")[0].rsplit(":", 2)
        host = fields[0] if len(fields) == 3 else None
        result.append((host, int(fields[-2]), int(fields[-1])))
    return result


def volumes(service: dict) -> list[dict]:
    """Each mount as {type: bind|volume, source, target, read_only}."""
    result = []
    for volume in service.get("volumes", []):
        if isinstance(volume, dict):
            result.append({"type": volume["type"], "source": volume["source"], "target": volume["target"],
                           "read_only": bool(volume.get("read_only"))})
            continue
        source, target, *mode = volume.split(":")
        kind = "bind" if source.startswith(("/", ".")) else "volume"
        result.append({"type": kind, "source": source, "target": target, "read_only": "ro" in mode})
    return result


def dns_names(service_name: str, service: dict) -> set[str]:
    """The names Docker's DNS answers with this service's containers: its own and its network aliases."""
    names = {service_name}
    for network in (service.get("networks") or {}).values():
        names.update((network or {}).get("aliases", []))
    return names


def services_answering(name: str, services: dict) -> set[str]:
    """The compose services whose containers Docker's DNS returns for `name`."""
    return {s for s, service in services.items() if name in dns_names(s, service)}


def free_port() -> int:
    """A loopback TCP port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
