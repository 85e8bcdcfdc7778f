"""`framegate up` with the real gateway and worker: secrets and start-up failures.

Unlike test_supervisor.py (stand-in children), these run framegate-gateway and
framegate-worker from beside the framegate binary, because what is checked is
what the real children print, bind and are given on their command lines.
Every server listens on loopback, on free ports; every process is stopped by
its pid at the end, whatever the outcome.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import unittest
import urllib.error
import urllib.request

from test_supervisor import FRAMEGATE_BIN, WAIT, Supervisor, proc_cmdline, wait_until
from fake_records import pid_alive

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from framegate_harness import WsClient  # noqa: E402

BIN_DIR = os.path.dirname(FRAMEGATE_BIN)
GATEWAY_BIN = os.path.join(BIN_DIR, "framegate-gateway")
PASSWORD = "Pw-4c9e1f7d-never-print-me"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_port_pair() -> int:
    """A port P with P+1 free too, for two workers' admin listeners (--worker-admin P)."""
    for _ in range(50):
        with socket.socket() as a:
            a.bind(("127.0.0.1", 0))
            port = a.getsockname()[1]
            if port >= 65535:
                continue
            with socket.socket() as b:
                try:
                    b.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
                return port
    raise AssertionError("no two consecutive free ports")


def http_status(url: str, data: bytes | None = None, headers: dict[str, str] | None = None) -> int:
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return 0


class RealChildrenTest(unittest.TestCase):
    def setUp(self) -> None:
        for binary in (FRAMEGATE_BIN, GATEWAY_BIN, os.path.join(BIN_DIR, "framegate-worker")):
            self.assertTrue(os.access(binary, os.X_OK), f"not built: {binary}")
        self.tmp = tempfile.mkdtemp(prefix="fg-real-test-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.runtime = os.path.join(self.tmp, "runtime")
        os.mkdir(self.runtime, 0o700)
        self.supervisors: list[Supervisor] = []
        self.processes: list[subprocess.Popen] = []
        self.addCleanup(self.kill_everything)

    def kill_everything(self) -> None:
        for sup in self.supervisors:
            children = self.child_pids(sup)
            if sup.proc.poll() is None:
                sup.proc.kill()
                sup.proc.wait(WAIT)
            if not sup.proc.stderr.closed:
                sup.close()
            for pid in children:
                if pid_alive(pid):
                    os.kill(pid, signal.SIGKILL)
        for proc in self.processes:
            if proc.poll() is None:
                proc.kill()
            proc.communicate(timeout=WAIT)

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("FRAMEGATE_")}
        env["XDG_RUNTIME_DIR"] = self.runtime
        return env

    def up(self, *args: str) -> Supervisor:
        # --admin goes through to the gateway: a free port, never the shared default 9090.
        sup = Supervisor(["--admin", "127.0.0.1:0", *args], self.env())
        self.supervisors.append(sup)
        return sup

    @staticmethod
    def child_pids(sup: Supervisor) -> list[int]:
        return [int(m.group(1)) for m in re.finditer(r"started \S+ \(pid (\d+)\)", sup.output())]

    def secret_file(self, name: str, content: str) -> str:
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(content)
        os.chmod(path, 0o600)
        return path

    # -- secrets ---------------------------------------------------------------

    def redis_with_password(self) -> int:
        """A real redis-server on a free port that requires PASSWORD (from its config file, not its argv)."""
        port = free_port()
        conf = self.secret_file("redis.conf", f"port {port}\nbind 127.0.0.1\nrequirepass {PASSWORD}\n"
                                              f"save \"\"\nappendonly no\ndir {self.tmp}\n")
        proc = subprocess.Popen([shutil.which("redis-server") or "redis-server", conf], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.processes.append(proc)

        def accepts() -> bool:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return True
            except OSError:
                return False

        wait_until(accepts, "redis-server accepting connections")
        return port

    def assert_password_hidden(self, sup: Supervisor, workers: int) -> None:
        sup.wait_for_line(r"^\[gateway\] .*listening on 127\.0\.0\.1:", "the gateway ready")
        for k in range(1, workers + 1):
            # Connected (AUTH accepted) on both connections: the password did arrive.
            sup.wait_for_line(rf"^\[w{k}\] .*\bconnected to ", f"w{k} connected to Redis", count=2)
        children = self.child_pids(sup)
        self.assertEqual(len(children), 1 + workers, sup.output())
        for pid in children:
            cmdline = " ".join(proc_cmdline(pid))
            self.assertNotIn(PASSWORD, cmdline, f"the password on the command line of pid {pid}")
        sup.signal(signal.SIGTERM)
        self.assertEqual(sup.wait_exit(), 0, sup.output())
        self.assertNotIn(PASSWORD, sup.output(), "the password in a log line")
        self.assertNotIn(PASSWORD, sup.stdout)
        # Redacted, not dropped: the logs still say where and as whom.
        for k in range(1, workers + 1):
            self.assertRegex(sup.output(), rf"\[w{k}\] .*connected to redis://default:\*\*\*@127\.0\.0\.1:")

    def test_redis_password_in_the_url_reaches_no_log_line_and_no_command_line(self):
        url = f"redis://default:{PASSWORD}@127.0.0.1:{self.redis_with_password()}"
        sup = self.up("--listen", f"127.0.0.1:{free_port()}", "--workers", "2", "--worker-admin", "127.0.0.1:0",
                      "--redis", url)
        self.assert_password_hidden(sup, 2)
        self.assertIn("Redis redis://default:***@127.0.0.1:", sup.output(), "the supervisor's redacted Redis URL")

    def test_redis_password_file_is_passed_on_by_name(self):
        path = self.secret_file("redis-password", PASSWORD + "\n")
        sup = self.up("--listen", f"127.0.0.1:{free_port()}", "--workers", "1", "--worker-admin", "127.0.0.1:0",
                      "--redis", f"redis://default@127.0.0.1:{self.redis_with_password()}",
                      "--redis-password-file", path)
        self.assert_password_hidden(sup, 1)

    def test_print_config_hides_the_redis_password_and_the_api_token(self):
        result = subprocess.run(
            [FRAMEGATE_BIN, "up", "--print-config", "--redis", f"redis://:{PASSWORD}@127.0.0.1:1",
             "--api-token", PASSWORD], env=self.env(), capture_output=True, text=True, timeout=WAIT)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertNotIn(PASSWORD, result.stdout + result.stderr)
        self.assertIn("redis = redis://:***@127.0.0.1:1", result.stdout)

    def test_redis_password_file_problems_stop_the_start(self):
        missing = os.path.join(self.tmp, "missing")
        cases = {
            "missing": (["--redis", "redis://127.0.0.1:1", "--redis-password-file", missing], "cannot read"),
            "empty": (["--redis", "redis://127.0.0.1:1", "--redis-password-file", self.secret_file("e", "\n")],
                      "empty"),
            "private redis": (["--redis-password-file", self.secret_file("p", "x")], "needs --redis"),
        }
        for what, (args, message) in cases.items():
            with self.subTest(what):
                result = subprocess.run([FRAMEGATE_BIN, "up", "--listen", "127.0.0.1:0", *args], env=self.env(),
                                        capture_output=True, text=True, timeout=WAIT)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn("--redis-password-file", result.stderr)
                self.assertIn(message, result.stderr)
                self.assertEqual(os.listdir(self.runtime), [], "nothing may start")

    def gateway(self, *args: str) -> tuple[subprocess.Popen, int]:
        admin = free_port()
        proc = subprocess.Popen([GATEWAY_BIN, "--listen", "127.0.0.1:0", "--admin", f"127.0.0.1:{admin}",
                                 "--link-dir", os.path.join(self.tmp, "links"), *args],
                                env=self.env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        self.processes.append(proc)
        return proc, admin

    def test_gateway_reads_the_api_token_from_a_file(self):
        path = self.secret_file("token", PASSWORD + "\n")
        proc, admin = self.gateway("--api-token-file", path)
        url = f"http://127.0.0.1:{admin}"
        wait_until(lambda: http_status(url + "/healthz") == 200, "the gateway's admin listener")
        body = b'{"room":"lobby","data":1}'
        self.assertEqual(http_status(url + "/api/publish", body, {"Authorization": "Bearer wrong"}), 401)
        # The trailing newline is not part of the token; 503: authorised, but no worker.
        self.assertEqual(http_status(url + "/api/publish", body, {"Authorization": f"Bearer {PASSWORD}"}), 503)
        self.assertNotIn(PASSWORD, " ".join(proc_cmdline(proc.pid)))
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=WAIT)
        self.assertNotIn(PASSWORD, out + err)

    def test_gateway_refuses_a_bad_api_token_file_at_start(self):
        for content, message in ((None, "cannot read"), ("\n", "empty")):
            with self.subTest(message):
                path = os.path.join(self.tmp, "nope") if content is None else self.secret_file("t", content)
                proc, _ = self.gateway("--api-token-file", path)
                out, err = proc.communicate(timeout=WAIT)
                self.assertEqual(proc.returncode, 2, err)
                self.assertIn("--api-token-file", err)
                self.assertIn(message, err)
        proc, _ = self.gateway("--api-token-file", self.secret_file("t2", "x"), "--api-token", "y")
        _, err = proc.communicate(timeout=WAIT)
        self.assertEqual(proc.returncode, 2, err)
        self.assertIn("keep one", err)

    # -- options implied ---------------------------------------------------------

    def test_deflate_has_the_workers_compress_room_messages_at_their_publisher(self):
        # --publish-deflate implied by --deflate (the private Redis), at the
        # gateway's --deflate-threshold: a 300-byte message, under the
        # workers' own default of 1024, is compressed by the publishing worker.
        admin = free_port()
        sup = self.up("--listen", "127.0.0.1:0", "--workers", "1", "--worker-admin", f"127.0.0.1:{admin}",
                      "--deflate", "--deflate-threshold", "100")
        sup.wait_for_line(r"^\[w1\] .*\bconnected to ", "w1 connected to Redis", count=2)
        port = int(re.search(r"gateway listening on ws://127\.0\.0\.1:(\d+)/", sup.output()).group(1))
        metrics = f"http://127.0.0.1:{admin}/metrics"

        def deflated_publishes() -> int:
            with urllib.request.urlopen(metrics, timeout=5) as response:
                text = response.read().decode()
            found = re.search(r"^framegate_worker_broker_deflated_publishes_total (\S+)$", text, re.M)
            self.assertIsNotNone(found, "the worker's metric")
            return int(float(found.group(1)))

        self.assertEqual(deflated_publishes(), 0)
        data = "x" * 300
        with WsClient("127.0.0.1", port).connect() as client:
            client.handshake("/rooms")
            client.send_text(json.dumps({"op": "join", "room": "z"}))
            client.send_text(json.dumps({"op": "publish", "room": "z", "data": data}))
            delivered = None
            while delivered is None:
                message = json.loads(client.recv_frame(timeout=10).payload)
                delivered = message if message.get("room") == "z" and "data" in message else None
            self.assertEqual(delivered["data"], data)
        wait_until(lambda: deflated_publishes() == 1, "the publish counted as compressed at the worker")
        sup.signal(signal.SIGTERM)
        self.assertEqual(sup.wait_exit(), 0, sup.output())

    # -- configuration errors at start-up ---------------------------------------

    def test_gateway_listen_port_taken_is_a_configuration_error(self):
        with socket.socket() as holder:
            holder.bind(("127.0.0.1", 0))
            holder.listen()
            taken = holder.getsockname()[1]
            proc = subprocess.Popen([GATEWAY_BIN, "--listen", f"127.0.0.1:{taken}", "--admin", "off", "--link-dir",
                                     os.path.join(self.tmp, "links")], env=self.env(), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.processes.append(proc)
            _, err = proc.communicate(timeout=WAIT)
            self.assertEqual(proc.returncode, 2, err)
            self.assertIn(f"127.0.0.1:{taken}", err)
            self.assertIn("--listen", err)
            # Under framegate up: stopped at once with the gateway's reason, not after --start-timeout.
            sup = self.up("--listen", f"127.0.0.1:{taken}", "--workers", "1", "--no-redis", "--start-timeout", "60")
            self.assertEqual(sup.wait_exit(), 2, sup.output())
        self.assertRegex(sup.output(), rf"gateway failed at start-up: .*127\.0\.0\.1:{taken}.*--listen")

    def test_worker_admin_port_taken_stops_the_cluster_instead_of_a_crash_loop(self):
        with socket.socket() as holder:
            holder.bind(("127.0.0.1", 0))
            holder.listen()
            taken = holder.getsockname()[1]
            sup = self.up("--listen", f"127.0.0.1:{free_port()}", "--workers", "1", "--no-redis",
                          "--worker-admin", f"127.0.0.1:{taken}")
            self.assertEqual(sup.wait_exit(), 2, sup.output())
        out = sup.output()
        self.assertEqual(len(re.findall(r"started w1 ", out)), 1, f"w1 restarted after a config error\n{out}")
        self.assertIn("w1 rejected its configuration", out)
        self.assertRegex(out, rf"w1 failed at start-up: .*127\.0\.0\.1:{taken}.*--worker-admin")

    def test_gateway_admin_port_taken_stops_the_cluster_although_it_printed_ready(self):
        # The gateway prints "listening on" before it binds its admin listener:
        # its configuration error comes after its ready line, and must not loop.
        with socket.socket() as holder:
            holder.bind(("127.0.0.1", 0))
            holder.listen()
            taken = holder.getsockname()[1]
            sup = Supervisor(["--listen", f"127.0.0.1:{free_port()}", "--admin", f"127.0.0.1:{taken}",
                              "--workers", "1", "--no-redis", "--worker-admin", "127.0.0.1:0"], self.env())
            self.supervisors.append(sup)
            self.assertEqual(sup.wait_exit(), 2, sup.output())
        out = sup.output()
        self.assertEqual(len(re.findall(r"started gateway ", out)), 1, f"gateway restarted after a config error\n{out}")
        self.assertRegex(out, rf"gateway failed at start-up: .*127\.0\.0\.1:{taken}.*--admin")

    def test_second_cluster_on_the_same_worker_admin_ports_stops_at_once(self):
        # Two `framegate up` with the same defaults but --listen: the second's
        # workers cannot have the admin ports. It must stop and say which port
        # and option, not crash-loop behind a gateway answering 503.
        admin = free_port_pair()
        first = self.up("--listen", f"127.0.0.1:{free_port()}", "--workers", "2", "--no-redis",
                        "--worker-admin", f"127.0.0.1:{admin}")
        first_readyz = f"http://127.0.0.1:{admin}/readyz"
        wait_until(lambda: http_status(first_readyz) == 200, "the first cluster's w1 ready")

        second = self.up("--listen", f"127.0.0.1:{free_port()}", "--workers", "2", "--no-redis",
                         "--worker-admin", f"127.0.0.1:{admin}")
        self.assertEqual(second.wait_exit(), 2, second.output())
        # Either worker may fail first: w1 on port `admin`, w2 on the next.
        self.assertRegex(second.output(),
                         rf"failed at start-up: .*127\.0\.0\.1:({admin}|{admin + 1}) .*--worker-admin")

        self.assertEqual(first.proc.poll(), None, first.output())
        self.assertEqual(http_status(first_readyz), 200, "the first cluster must keep serving")
        self.assertEqual(http_status(f"http://127.0.0.1:{admin + 1}/readyz"), 200)
        first.signal(signal.SIGTERM)
        self.assertEqual(first.wait_exit(), 0, first.output())


if __name__ == "__main__":
    unittest.main()
