"""What the containers run, run here without Docker: the gateway and a
worker started with the environment docker-compose.yml gives them (only
the addresses, the link directory and the image's paths mapped to this
machine), with a private redis-server as the compose Redis, probed by the
image's healthcheck script exactly as Docker runs it."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import tempfile
import time
import unittest

import dockerfile
from deploy_files import DOCKERFILE, HEALTHCHECK, REPO_ROOT, compose_config, free_port, tool

ADMIN_RE = re.compile(r"admin listening on [^ ]+:(\d+)")


def image_to_repo(path: str) -> str:
    """The repository path the Dockerfile copies to image path `path`."""
    with open(DOCKERFILE, encoding="utf-8") as f:
        stages = dockerfile.stages(f.read())
    for ins in stages[-1].all("COPY"):
        copy = dockerfile.copy_args(ins)
        if copy.from_stage is None and len(copy.sources) == 1 and path.startswith(copy.destination):
            return os.path.join(REPO_ROOT, copy.sources[0] + path[len(copy.destination):])
    raise AssertionError(f"the image has no {path} copied from the repository")


def healthcheck(admin: str, path: str | None = None) -> subprocess.CompletedProcess:
    argv = [tool("bash"), HEALTHCHECK] + ([path] if path else [])
    return subprocess.run(argv, env={"PATH": os.environ["PATH"], "FRAMEGATE_ADMIN": admin},
                          capture_output=True, text=True, timeout=20)


def env_options(binary: str) -> set[str]:
    """The FRAMEGATE_* variables a binary reads, from its --help (CLI11 shows `(Env:NAME)`)."""
    result = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=10)
    return set(re.findall(r"\(Env:(FRAMEGATE_\w+)\)", result.stdout))


def admin_port(process) -> int:
    """The port the process's "admin listening on" line names (waits for it)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for line in process.output_lines():
            m = ADMIN_RE.search(line)
            if m:
                return int(m[1])
        time.sleep(0.05)
    raise AssertionError(f"no 'admin listening on' line (is FRAMEGATE_ADMIN read?)\n{process.describe_tail()}")


@unittest.skipUnless(os.environ.get("FRAMEGATE_GATEWAY_BIN") and os.environ.get("FRAMEGATE_WORKER_BIN"),
                     "needs the built gateway and worker (CTest passes them)")
class ContainerProcessesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        from framegate_harness import Process

        cls.dir = tempfile.TemporaryDirectory(prefix="fg-runtime-")
        cls.services = services = compose_config("scale-out")["services"]
        cls.link_dir = os.path.join(cls.dir.name, "links")
        os.mkdir(cls.link_dir)
        local = {"FRAMEGATE_LINK_DIR": cls.link_dir, "FRAMEGATE_ADMIN": "127.0.0.1:0"}

        socket_path = os.path.join(cls.dir.name, "redis.sock")
        cls.redis = Process([tool("redis-server"), "--port", "0", "--unixsocket", socket_path, "--save", "",
                             "--appendonly", "no"], name="redis-server",
                            ready_pattern="(?i)ready to accept connections", ready_stream="stdout")
        cls.redis.start()

        gateway_env = dict(services["gateway"]["environment"], **local, FRAMEGATE_LISTEN="127.0.0.1:0")
        gateway_env["FRAMEGATE_STATIC_DIR"] = image_to_repo(gateway_env["FRAMEGATE_STATIC_DIR"])
        cls.gateway = Process([os.environ["FRAMEGATE_GATEWAY_BIN"]], name="gateway", env=gateway_env,
                              strip_env_prefixes=("FRAMEGATE_",), ready_pattern=ADMIN_RE)
        cls.gateway.start()
        cls.gateway_admin = f"127.0.0.1:{int(cls.gateway.ready_match[1])}"

        # Before any worker: alive, not ready.
        cls.alive_alone = healthcheck(cls.gateway_admin)
        cls.ready_alone = healthcheck(cls.gateway_admin, "/readyz")

        worker_env = dict(services["worker"]["environment"], **local, FRAMEGATE_REDIS=f"unix://{socket_path}")
        cls.worker = Process([os.environ["FRAMEGATE_WORKER_BIN"]], name="worker", env=worker_env,
                             strip_env_prefixes=("FRAMEGATE_",))
        cls.worker.start()

    @classmethod
    def tearDownClass(cls) -> None:
        for process in (cls.worker, cls.gateway, cls.redis):
            if process:
                process.stop()
        cls.dir.cleanup()

    def wait_healthy(self, admin: str, path: str) -> subprocess.CompletedProcess:
        deadline = time.monotonic() + 15
        while True:
            result = healthcheck(admin, path)
            if result.returncode == 0 or time.monotonic() > deadline:
                return result
            time.sleep(0.2)

    def test_gateway_alive_at_once_ready_with_a_worker(self):
        self.assertEqual(self.alive_alone.returncode, 0, f"the default probe, /healthz: {self.alive_alone.stderr}")
        self.assertEqual(self.ready_alone.returncode, 1, "ready with no worker")
        self.assertIn("503", self.ready_alone.stderr)
        ready = self.wait_healthy(self.gateway_admin, "/readyz")
        self.assertEqual(ready.returncode, 0, f"{ready.stderr}\n{self.gateway.describe_tail()}")

    def test_worker_ready_with_its_links_and_redis(self):
        admin = f"127.0.0.1:{admin_port(self.worker)}"
        result = self.wait_healthy(admin, "/readyz")
        self.assertEqual(result.returncode, 0, f"{result.stderr}\n{self.worker.describe_tail()}")
        self.assertEqual(healthcheck(admin, "/healthz").returncode, 0)

    def test_compose_sets_only_variables_the_binaries_read(self):
        """A misspelt or unsupported FRAMEGATE_* variable is silently ignored by the binary."""
        binaries = {"framegate-gateway": os.environ["FRAMEGATE_GATEWAY_BIN"],
                    "framegate-worker": os.environ["FRAMEGATE_WORKER_BIN"]}
        for name, service in self.services.items():
            binary = binaries.get((service.get("command") or [None])[0])
            if binary:
                with self.subTest(service=name):
                    unknown = {k for k in service["environment"] if k.startswith("FRAMEGATE_")} - env_options(binary)
                    self.assertEqual(unknown, set(), f"{os.path.basename(binary)} does not read these")

    def test_gateway_serves_the_demo_from_the_image_path(self):
        port = int(re.search(r"listening on [^ ]+:(\d+)", "\n".join(self.gateway.output_lines()))[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            head = s.recv(200)
        self.assertTrue(head.startswith(b"HTTP/1.1 200"), head)

    def test_probe_fails_on_a_wrong_answer_or_no_listener(self):
        self.assertEqual(healthcheck(self.gateway_admin, "/no-such-path").returncode, 1)
        silent = healthcheck(f"127.0.0.1:{free_port()}")
        self.assertEqual(silent.returncode, 1)
        self.assertIn("nothing listens", silent.stderr)
        self.assertEqual(healthcheck("off").returncode, 1)


if __name__ == "__main__":
    unittest.main()
