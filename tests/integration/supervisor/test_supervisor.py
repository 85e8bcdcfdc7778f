"""`framegate up`: the supervisor binary, run for real against stand-in children.

The stand-ins (fake_gateway.py, fake_worker.py) are passed with --gateway-bin /
--worker-bin and record their argv, FRAMEGATE_* environment and parent pid in
JSON files, so every check reads facts, never timings. Every wait is bounded,
and every process is stopped by its PID in tearDown, whatever the outcome.

FRAMEGATE_BIN names the binary (CTest sets it); the default is build/bin/framegate.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
import unittest

from fake_records import pid_alive, proc_stat_fields, read_records

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
FRAMEGATE_BIN = os.environ.get("FRAMEGATE_BIN", os.path.join(REPO_ROOT, "build", "bin", "framegate"))
FAKES = ("fake_records.py", "fake_common.py", "fake_gateway.py", "fake_worker.py", "fake_redis.py")

WAIT = 15.0  # bound of every wait for something that should take well under a second


def proc_ppid(pid: int) -> int:
    return int(proc_stat_fields(pid)[1])


def proc_cmdline(pid: int) -> list[str]:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return [a.decode() for a in f.read().split(b"\0") if a]


def wait_until(predicate, what: str, timeout: float = WAIT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class Supervisor:
    """One `framegate up` process; its stderr is collected by a thread."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [FRAMEGATE_BIN, "up", *args], env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines: list[str] = []
        self.stdout = ""
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._drain_stderr, daemon=True),
                         threading.Thread(target=self._drain_stdout, daemon=True)]
        for t in self._threads:
            t.start()

    def _drain_stderr(self) -> None:
        for raw in self.proc.stderr:
            with self._lock:
                self.lines.append(raw.decode(errors="replace").rstrip("\n"))

    def _drain_stdout(self) -> None:
        self.stdout = self.proc.stdout.read().decode(errors="replace")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def output(self) -> str:
        with self._lock:
            return "\n".join(self.lines)

    def wait_for_line(self, pattern: str, what: str, count: int = 1) -> None:
        regex = re.compile(pattern)
        try:
            wait_until(lambda: len([l for l in list(self.lines) if regex.search(l)]) >= count, what)
        except AssertionError as e:
            raise AssertionError(f"{e}\n--- supervisor stderr ---\n{self.output()}") from None

    def wait_exit(self, timeout: float = WAIT) -> int:
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"supervisor still running after {timeout} s\n{self.output()}") from None
        self.close()
        return code

    def close(self) -> None:
        for t in self._threads:
            t.join(WAIT)
        self.proc.stdout.close()
        self.proc.stderr.close()

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)


class SupervisorTest(unittest.TestCase):
    def setUp(self) -> None:
        self.assertTrue(os.access(FRAMEGATE_BIN, os.X_OK), f"framegate binary not found: {FRAMEGATE_BIN}")
        self.tmp = tempfile.mkdtemp(prefix="fg-sup-test-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.state = os.path.join(self.tmp, "state")
        self.runtime = os.path.join(self.tmp, "runtime")
        fakes = os.path.join(self.tmp, "fakes")
        for d in (self.state, self.runtime, fakes):
            os.mkdir(d, 0o700)
        # Copies, made executable here, so the test never depends on file modes in git.
        for name in FAKES:
            shutil.copy(os.path.join(HERE, name), fakes)
            os.chmod(os.path.join(fakes, name), 0o755)
        self.gateway_bin = os.path.join(fakes, "fake_gateway.py")
        self.worker_bin = os.path.join(fakes, "fake_worker.py")
        self.redis_bin = os.path.join(fakes, "fake_redis.py")
        self.supervisors: list[Supervisor] = []
        self.addCleanup(self.kill_everything)

    def kill_everything(self) -> None:
        """Whatever a failed test left running goes, by PID."""
        for sup in self.supervisors:
            if sup.proc.poll() is None:
                sup.proc.kill()
                sup.proc.wait(WAIT)
            if not sup.proc.stderr.closed:
                sup.close()
        for rec in self.records():
            if pid_alive(rec["pid"]):
                os.kill(rec["pid"], signal.SIGKILL)

    # -- helpers ----------------------------------------------------------

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FRAMEGATE_", "FAKE_"))}
        env.update(FAKE_STATE_DIR=self.state, XDG_RUNTIME_DIR=self.runtime)
        env.update(extra)
        return env

    def start(self, *args: str, env: dict[str, str] | None = None, bins: bool = True) -> Supervisor:
        argv = list(args)
        if bins:
            argv += ["--gateway-bin", self.gateway_bin, "--worker-bin", self.worker_bin,
                     "--redis-server-bin", self.redis_bin]
        sup = Supervisor(argv, env if env is not None else self.env())
        self.supervisors.append(sup)
        return sup

    def run_cli(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([FRAMEGATE_BIN, *args], env=env if env is not None else self.env(),
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=WAIT)

    def records(self, role: str | None = None, name: str | None = None) -> list[dict]:
        return read_records(self.state, role, name)

    def live(self, name: str) -> dict | None:
        """The record of the running instance of child `name`, if there is one."""
        alive = [r for r in self.records(name=name) if pid_alive(r["pid"])]
        return alive[-1] if alive else None

    def start_cluster(self, workers: int = 2, *args: str, env: dict[str, str] | None = None) -> Supervisor:
        sup = self.start("--listen", "127.0.0.1:0", "--workers", str(workers), *args, env=env)
        sup.wait_for_line(r"^\[gateway\] .*listening on 127\.0\.0\.1:0", "the relayed gateway ready line")
        for k in range(1, workers + 1):
            wait_until(lambda: self.live(f"w{k}"), f"worker w{k} running")
            sup.wait_for_line(rf"^\[w{k}\] fake worker w{k}: ready", f"w{k}'s relayed output")
        return sup

    def stop_cleanly(self, sup: Supervisor, sig: int = signal.SIGTERM) -> None:
        pids = [r["pid"] for r in self.records()]
        sup.signal(sig)
        code = sup.wait_exit()
        self.assertEqual(code, 0, sup.output())
        for pid in pids:
            self.assertFalse(pid_alive(pid), f"child {pid} outlived the supervisor\n{sup.output()}")

    def link_dir(self) -> str:
        return self.records("gateway")[0]["link_dir"]

    # -- start, supervise, stop --------------------------------------------

    def test_starts_gateway_then_workers_and_sigterm_stops_all_in_order(self):
        sup = self.start_cluster(2)
        gateway, w1, w2 = self.live("gateway"), self.live("w1"), self.live("w2")
        link_dir = gateway["link_dir"]
        for rec in (gateway, w1, w2):
            self.assertEqual(proc_ppid(rec["pid"]), sup.pid, rec)
        self.assertEqual(proc_cmdline(gateway["pid"])[-4:], ["--listen", "127.0.0.1:0", "--link-dir", link_dir])
        for k, rec in ((1, w1), (2, w2)):
            # Worker k's admin listener: --worker-admin's port (9091 by default) + k - 1.
            self.assertEqual(proc_cmdline(rec["pid"])[-6:],
                             ["--id", f"w{k}", "--link-dir", link_dir, "--admin", f"127.0.0.1:{9090 + k}"])
        # A fresh private directory under $XDG_RUNTIME_DIR, shared by all children.
        self.assertEqual(os.path.dirname(link_dir), self.runtime)
        self.assertEqual(stat.S_IMODE(os.stat(link_dir).st_mode), 0o700)
        self.assertEqual({w1["link_dir"], w2["link_dir"]}, {link_dir})
        self.assertLess(gateway["started"], min(w1["started"], w2["started"]))

        self.stop_cleanly(sup)
        self.assertFalse(os.path.exists(link_dir), "link directory left behind")
        # The gateway was stopped first, while both workers still ran ...
        final_gateway = self.records("gateway")[-1]
        self.assertTrue(final_gateway.get("term_received"), sup.output())
        self.assertEqual(sorted(final_gateway["workers_alive_at_term"]), sorted([w1["pid"], w2["pid"]]))
        # ... and the workers only after the gateway had exited.
        for name in ("w1", "w2"):
            rec = self.records(name=name)[-1]
            self.assertTrue(rec.get("term_received"), sup.output())
            self.assertEqual(rec["gateways_alive_at_term"], [], sup.output())

    def test_sigint_stops_cleanly_too(self):
        sup = self.start_cluster(1)
        link_dir = self.link_dir()
        self.stop_cleanly(sup, signal.SIGINT)
        self.assertFalse(os.path.exists(link_dir))

    def test_children_get_sigterm_when_the_supervisor_is_killed(self):
        # A SIGKILLed supervisor stops nobody in order; the kernel's parent-death
        # signal must still end every child, or the cluster lives on orphaned.
        sup = self.start_cluster(2)
        children = {name: self.live(name)["pid"] for name in ("redis", "gateway", "w1", "w2")}
        sup.proc.kill()
        self.assertEqual(sup.wait_exit(), -signal.SIGKILL)
        for name, pid in children.items():
            wait_until(lambda: not pid_alive(pid), f"{name} (pid {pid}) ending with its supervisor")
            self.assertTrue(self.records(name=name)[-1].get("term_received"), f"{name} was not sent SIGTERM")

    def test_killed_worker_is_restarted_under_the_same_id(self):
        sup = self.start_cluster(2)
        old_w1, w2 = self.live("w1"), self.live("w2")
        os.kill(old_w1["pid"], signal.SIGKILL)
        new_w1 = wait_until(lambda: (r := self.live("w1")) and r["pid"] != old_w1["pid"] and r,
                            "a new w1 process")
        self.assertEqual(proc_cmdline(new_w1["pid"])[-6:],
                         ["--id", "w1", "--link-dir", old_w1["link_dir"], "--admin", "127.0.0.1:9091"])
        self.assertEqual(proc_ppid(new_w1["pid"]), sup.pid)
        sup.wait_for_line(rf"w1 \(pid {old_w1['pid']}\) killed by signal 9", "the crash logged with its signal")
        self.assertEqual(self.live("w2")["pid"], w2["pid"], "w2 must not be touched")
        self.stop_cleanly(sup)

    def test_crashing_worker_is_restarted_with_doubling_backoff(self):
        sup = self.start_cluster(1)
        for attempt, delay in enumerate((200, 400), start=1):
            before = self.live("w1")["pid"]
            open(os.path.join(self.state, "crash-w1"), "w").close()
            sup.wait_for_line(rf"w1 \(pid {before}\) exited with status 7", "the crash logged with its status")
            sup.wait_for_line(rf"restarting w1 in {delay} ms", f"restart delay {delay} ms", count=1)
            wait_until(lambda: (r := self.live("w1")) and r["pid"] != before, f"w1 restart {attempt}")
        self.stop_cleanly(sup)

    def test_killed_gateway_is_restarted_and_workers_are_kept(self):
        sup = self.start_cluster(2)
        old_gateway = self.live("gateway")
        workers = {name: self.live(name)["pid"] for name in ("w1", "w2")}
        os.kill(old_gateway["pid"], signal.SIGKILL)
        new_gateway = wait_until(lambda: (r := self.live("gateway")) and r["pid"] != old_gateway["pid"] and r,
                                 "a new gateway process")
        self.assertEqual(proc_cmdline(new_gateway["pid"])[-4:],
                         ["--listen", "127.0.0.1:0", "--link-dir", old_gateway["link_dir"]])
        sup.wait_for_line(r"\[gateway\] .*listening on", "the restarted gateway's ready line", count=2)
        self.assertEqual({name: self.live(name)["pid"] for name in ("w1", "w2")}, workers)
        self.stop_cleanly(sup)

    def test_child_ignoring_sigterm_is_killed_after_stop_timeout(self):
        sup = self.start_cluster(1, "--stop-timeout", "1", env=self.env(FAKE_WORKER_MODE="stubborn"))
        link_dir = self.link_dir()
        self.stop_cleanly(sup)
        self.assertIn("sending SIGKILL", sup.output())
        # The killed worker could not remove its socket; the directory goes anyway.
        self.assertFalse(os.path.exists(link_dir))

    # -- the private Redis ---------------------------------------------------

    def test_private_redis_starts_first_stops_last_and_reaches_every_child(self):
        sup = self.start_cluster(2)
        redis, gateway = self.live("redis"), self.live("gateway")
        link_dir = gateway["link_dir"]
        socket_path = os.path.join(link_dir, "redis.sock")
        self.assertEqual(proc_ppid(redis["pid"]), sup.pid)
        self.assertEqual(redis["argv"], ["--port", "0", "--unixsocket", socket_path, "--unixsocketperm", "700",
                                         "--save", "", "--appendonly", "no", "--dir", link_dir])
        self.assertTrue(stat.S_ISSOCK(os.stat(socket_path).st_mode))
        self.assertLess(redis["started"], gateway["started"])
        sup.wait_for_line(r"^\[redis\] .*ready to accept connections", "the relayed redis ready line")
        for name in ("gateway", "w1", "w2"):
            self.assertEqual(self.live(name)["env"].get("FRAMEGATE_REDIS"), f"unix://{socket_path}", name)

        self.stop_cleanly(sup)
        final = self.records("redis")[-1]
        self.assertTrue(final.get("term_received"), sup.output())
        self.assertEqual(final["gateways_alive_at_term"], [], "redis stopped before the gateway")
        self.assertEqual(final["workers_alive_at_term"], [], "redis stopped before the workers")
        self.assertFalse(os.path.exists(link_dir))

    def test_private_redis_socket_is_removed_from_a_user_link_dir(self):
        link_dir = os.path.join(self.tmp, "links")
        os.mkdir(link_dir, 0o700)
        sup = self.start_cluster(1, "--link-dir", link_dir)
        self.assertTrue(os.path.exists(os.path.join(link_dir, "redis.sock")))
        redis = self.live("redis")
        self.stop_cleanly(sup)
        self.assertFalse(pid_alive(redis["pid"]))
        self.assertTrue(os.path.isdir(link_dir), "a directory the user made must stay")
        self.assertEqual(os.listdir(link_dir), [])

    def test_crashed_redis_is_restarted_and_other_children_are_kept(self):
        sup = self.start_cluster(1)
        old = self.live("redis")
        others = {name: self.live(name)["pid"] for name in ("gateway", "w1")}
        open(os.path.join(self.state, "crash-redis"), "w").close()
        sup.wait_for_line(rf"redis \(pid {old['pid']}\) exited with status 9", "the crash logged")
        sup.wait_for_line(r"restarting redis in 200 ms", "the restart with backoff")
        new = wait_until(lambda: (r := self.live("redis")) and r["pid"] != old["pid"] and r, "a new redis process")
        self.assertEqual(new["argv"], old["argv"])
        self.assertEqual({name: self.live(name)["pid"] for name in others}, others)
        self.stop_cleanly(sup)

    def test_redis_url_is_passed_on_and_starts_no_redis(self):
        url = "redis://127.0.0.1:6399/0"
        sup = self.start_cluster(2, "--redis", url)
        self.assertEqual(self.records("redis"), [])
        for name in ("gateway", "w1", "w2"):
            self.assertEqual(self.live(name)["env"].get("FRAMEGATE_REDIS"), url, name)
        self.stop_cleanly(sup)
        # The environment variable works the same way.
        sup = self.start_cluster(1, env=self.env(FRAMEGATE_REDIS=url))
        self.assertEqual(self.records("redis"), [])
        self.assertEqual(self.live("w1")["env"].get("FRAMEGATE_REDIS"), url)
        self.stop_cleanly(sup)

    def test_redis_cluster_seeds_are_passed_on_and_start_no_redis(self):
        seeds = "127.0.0.1:7000,127.0.0.1:7001"
        sup = self.start_cluster(2, "--redis-cluster", seeds)
        self.assertEqual(self.records("redis"), [])
        for name in ("gateway", "w1", "w2"):
            env = self.live(name)["env"]
            self.assertEqual(env.get("FRAMEGATE_REDIS_CLUSTER"), seeds, name)
            self.assertNotIn("FRAMEGATE_REDIS", env, name)
        self.stop_cleanly(sup)

    def test_redis_cluster_excludes_redis_and_no_redis(self):
        for other in (["--redis", "redis://127.0.0.1:6399"], ["--no-redis"]):
            with self.subTest(other=other[0]):
                sup = self.start("--listen", "127.0.0.1:0", "--redis-cluster", "127.0.0.1:7000", *other)
                self.assertEqual(sup.wait_exit(), 2, sup.output())
                self.assertIn("--redis-cluster", sup.output())

    def test_no_redis_starts_none_and_passes_none(self):
        sup = self.start_cluster(2, "--no-redis")
        self.assertEqual(self.records("redis"), [])
        for name in ("gateway", "w1", "w2"):
            self.assertNotIn("FRAMEGATE_REDIS", self.live(name)["env"], name)
        self.stop_cleanly(sup)

    def test_redis_failing_at_start_up_starts_nothing_else(self):
        sup = self.start("--listen", "127.0.0.1:0", "--workers", "1", env=self.env(FAKE_REDIS_MODE="fail"))
        self.assertEqual(sup.wait_exit(), 1, sup.output())
        self.assertIn("redis-server exited during start-up", sup.output())
        self.assertEqual([r["role"] for r in self.records()], ["redis"])

    def test_redis_options_conflict_and_missing_redis_server(self):
        both = self.run_cli("up", "--redis", "redis://127.0.0.1:1", "--no-redis")
        self.assertEqual(both.returncode, 2, both.stderr)
        missing = self.run_cli("up", "--gateway-bin", self.gateway_bin, "--worker-bin", self.worker_bin,
                               "--redis-server-bin", os.path.join(self.tmp, "no-redis-here"))
        self.assertEqual(missing.returncode, 2, missing.stderr)
        self.assertIn("--no-redis", missing.stderr)
        self.assertEqual(os.listdir(self.state), [])

    # -- start-up failures ----------------------------------------------------

    def test_gateway_failing_at_start_up_ends_the_supervisor_without_workers(self):
        for mode, expected in (("exit", 1), ("usage", 2)):
            with self.subTest(mode=mode):
                # Records stay (tearDown kills by them); each round looks only at its own.
                earlier = {r["pid"] for r in self.records()}
                sup = self.start("--listen", "127.0.0.1:0", "--workers", "2",
                                 env=self.env(FAKE_GATEWAY_MODE=mode))
                self.assertEqual(sup.wait_exit(), expected, sup.output())
                self.assertIn("exited during start-up", sup.output())
                mine = [r for r in self.records() if r["pid"] not in earlier and r["role"] != "redis"]
                self.assertEqual([r["name"] for r in mine], ["gateway"], "workers started before the gateway was ready")
                self.assertFalse(os.path.exists(mine[0]["link_dir"]))

    def test_gateway_never_ready_is_bounded_by_start_timeout(self):
        sup = self.start("--listen", "127.0.0.1:0", "--start-timeout", "1",
                         env=self.env(FAKE_GATEWAY_MODE="silent"))
        self.assertEqual(sup.wait_exit(), 1, sup.output())
        self.assertIn("did not print 'listening on HOST:PORT'", sup.output())
        gateway = self.records("gateway")[0]
        self.assertFalse(pid_alive(gateway["pid"]))
        self.assertEqual(self.records("worker"), [])
        self.assertFalse(os.path.exists(gateway["link_dir"]))

    def test_worker_rejecting_its_configuration_is_not_restarted(self):
        sup = self.start("--listen", "127.0.0.1:0", "--workers", "1", env=self.env(FAKE_WORKER_MODE="usage"))
        self.assertEqual(sup.wait_exit(), 2, sup.output())
        self.assertIn("rejected its configuration", sup.output())
        self.assertEqual(len(self.records(name="w1")), 1, "a usage error must not be retried")
        self.assertFalse(pid_alive(self.records("gateway")[0]["pid"]))

    def test_missing_child_binary_is_reported_at_once(self):
        result = self.run_cli("up", "--gateway-bin", os.path.join(self.tmp, "nope"), "--worker-bin", self.worker_bin)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("gateway executable not found", result.stderr)

    # -- options -------------------------------------------------------------

    def test_unknown_options_reach_both_children_as_environment(self):
        sup = self.start_cluster(1, "--max-message-size", "65536", "--slow-ms=10", "--verbose",
                                 "--log-level", "debug", "--mode", "-1")
        expected = {"FRAMEGATE_MAX_MESSAGE_SIZE": "65536", "FRAMEGATE_SLOW_MS": "10", "FRAMEGATE_VERBOSE": "true",
                    "FRAMEGATE_LOG_LEVEL": "debug", "FRAMEGATE_MODE": "-1"}
        for name in ("gateway", "w1"):
            env = self.live(name)["env"]
            self.assertEqual({k: env.get(k) for k in expected}, expected, name)
        self.stop_cleanly(sup)

    def test_the_gateway_gets_half_the_cores_unless_threads_is_chosen(self):
        half = str(max(1, (os.cpu_count() or 1) // 2))
        sup = self.start_cluster(1)
        self.assertEqual(self.live("gateway")["env"].get("FRAMEGATE_THREADS"), half)
        self.assertIsNone(self.live("w1")["env"].get("FRAMEGATE_THREADS"), "not the workers' to read")
        sup.wait_for_line(rf"{half} I/O thread\(s\): half the cores", "the start line naming the default")
        self.stop_cleanly(sup)
        # A choice by flag or by environment reaches the gateway only.
        for args, env in ((("--threads", "3"), self.env()), ((), self.env(FRAMEGATE_THREADS="5"))):
            with self.subTest(args=args, env=env.get("FRAMEGATE_THREADS")):
                sup = self.start_cluster(1, *args, env=env)
                self.assertEqual(self.live("gateway")["env"].get("FRAMEGATE_THREADS"), "3" if args else "5")
                self.assertEqual(self.live("w1")["env"].get("FRAMEGATE_THREADS"), None if args else "5",
                                 "the environment is every child's; a flag is the gateway's")
                self.stop_cleanly(sup)
                self.assertNotIn("half the cores", sup.output())

    def test_worker_admin_ports_follow_the_worker_index_or_are_off(self):
        for option, expected in (("127.0.0.1:9500", ["127.0.0.1:9500", "127.0.0.1:9501"]),
                                 ("[::1]:0", ["[::1]:0", "[::1]:0"]), ("off", ["off", "off"])):
            with self.subTest(option=option):
                sup = self.start_cluster(2, "--worker-admin", option)
                for k in (1, 2):
                    cmdline = proc_cmdline(self.live(f"w{k}")["pid"])
                    self.assertEqual(cmdline[cmdline.index("--admin") + 1], expected[k - 1])
                self.stop_cleanly(sup)

    def test_json_log_format_reaches_the_children_and_every_line_is_one_object(self):
        sup = self.start("--listen", "127.0.0.1:0", "--workers", "1", "--log-format", "json")
        sup.wait_for_line(r'^\{"child":"gateway","msg":".*listening on 127\.0\.0\.1:0', "the gateway's line as JSON")
        sup.wait_for_line(r'^\{"child":"w1","msg":"fake worker w1: ready"\}$', "w1's line as JSON")
        for name in ("gateway", "w1"):
            self.assertEqual(self.live(name)["env"].get("FRAMEGATE_LOG_FORMAT"), "json", name)
        self.stop_cleanly(sup)
        for line in sup.lines:
            entry = json.loads(line)  # raises on any line that is not one JSON object
            self.assertTrue("child" in entry or entry.get("component") == "supervisor", line)

    def test_print_config_shows_effective_values_and_starts_nothing(self):
        result = self.run_cli("up", "--print-config", "--workers", "3", "--listen", "127.0.0.1:9000",
                              "--stop-timeout", "2.5", "--slow-ms", "10", "--verbose",
                              env=self.env(FRAMEGATE_LINK_DIR="/run/fg-test"))
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = [l for l in result.stdout.splitlines() if l and not l.startswith("#")]
        config = dict(l.split(" = ", 1) for l in lines)
        self.assertEqual(config["listen"], "127.0.0.1:9000")
        self.assertEqual(config["workers"], "3")
        self.assertEqual(config["threads"], str(max(1, (os.cpu_count() or 1) // 2)))
        self.assertEqual(config["link-dir"], "/run/fg-test")
        self.assertEqual(config["stop-timeout"], "2.5")
        self.assertEqual(config["slow-ms"], "10")
        self.assertEqual(config["verbose"], "true")
        self.assertEqual(config["redis-server-bin"], "redis-server")
        self.assertTrue(config["gateway-bin"].endswith("/framegate-gateway"), config)
        self.assertEqual(os.listdir(self.state), [])
        self.assertFalse(os.path.exists("/run/fg-test"))

    def test_deflate_with_the_private_redis_turns_on_publish_deflate(self):
        # Every worker on the private Redis is this version: room messages are
        # compressed once, at their publisher, at the gateway's threshold and level.
        sup = self.start_cluster(1, "--deflate", "--deflate-threshold", "300", "--deflate-level", "4")
        for name in ("gateway", "w1"):
            env = self.live(name)["env"]
            self.assertEqual({k: env.get(k) for k in ("FRAMEGATE_PUBLISH_DEFLATE", "FRAMEGATE_PUBLISH_DEFLATE_THRESHOLD",
                                                      "FRAMEGATE_PUBLISH_DEFLATE_LEVEL")},
                             {"FRAMEGATE_PUBLISH_DEFLATE": "true", "FRAMEGATE_PUBLISH_DEFLATE_THRESHOLD": "300",
                              "FRAMEGATE_PUBLISH_DEFLATE_LEVEL": "4"}, name)
        sup.wait_for_line(r"workers compress room messages once, at their publisher", "the start line saying so")
        self.stop_cleanly(sup)

        def config(*args: str, env: dict[str, str] | None = None) -> tuple[dict[str, str], str]:
            result = self.run_cli("up", "--print-config", *args, env=env)
            self.assertEqual(result.returncode, 0, result.stderr)
            lines = [l for l in result.stdout.splitlines() if l and not l.startswith("#")]
            return dict(l.split(" = ", 1) for l in lines), result.stdout

        for args, env in ((("--deflate",), None), ((), self.env(FRAMEGATE_DEFLATE="1")),
                          (("--deflate", "--deflate-takeover", "client"), None), (("--deflate", "--no-redis"), None)):
            with self.subTest(args=args, env=env and env.get("FRAMEGATE_DEFLATE")):
                values, text = config(*args, env=env)
                # Shown, not set: a file saved from it implies it again only where it applies.
                self.assertNotIn("publish-deflate", values, text)
                self.assertIn("# publish-deflate: implied by deflate", text)
                self.assertIn("\n# publish-deflate = true\n", text)
        # The printed configuration saved and used with another's Redis: not on there.
        values, text = config("--deflate", "--deflate-threshold", "300")
        self.assertIn("\n# publish-deflate-threshold = 300\n", text)
        saved = os.path.join(self.tmp, "saved.conf")
        with open(saved, "w", encoding="utf-8") as f:
            f.write(text)
        values, text = config("--config", saved, "--redis", "redis://127.0.0.1:1")
        self.assertEqual(values.get("deflate"), "true", text)
        self.assertNotIn("publish-deflate", values, text)
        self.assertNotIn("implied", text)
        # Not where another Redis may hold older workers, nor where members keep
        # a compression context of their own, nor against the user's choice.
        for args in (("--deflate", "--redis", "redis://127.0.0.1:1"),
                     ("--deflate", "--deflate-takeover", "server"), ("--deflate", "--publish-deflate=false"),
                     ("--deflate=false",)):
            with self.subTest(args=args):
                values, text = config(*args)
                self.assertNotEqual(values.get("publish-deflate"), "true", text)
                self.assertNotIn("implied", text)

    def test_own_flag_followed_by_passthrough_option(self):
        # A flag of the supervisor's takes no value: the option after it must pass through.
        result = self.run_cli("up", "--print-config", "--slow-ms", "10", "--no-redis", "--max-fragments", "8")
        self.assertEqual(result.returncode, 0, result.stderr)
        config = dict(l.split(" = ", 1) for l in result.stdout.splitlines() if l and not l.startswith("#"))
        self.assertEqual(config["slow-ms"], "10")
        self.assertEqual(config["max-fragments"], "8")

    def test_config_file_is_overridden_by_flags_and_environment(self):
        path = os.path.join(self.tmp, "framegate.conf")
        with open(path, "w") as f:
            f.write("# a comment\n\nworkers = 3\nlisten = 127.0.0.1:7000\nstop-timeout = 4\n"
                    "slow-ms = 5\nmax-message-size = 1000\nsubprotocol = \"chat, v2\"\n")
        result = self.run_cli("up", "--config", path, "--print-config", "--workers", "2", "--slow-ms", "7",
                              env=self.env(FRAMEGATE_STOP_TIMEOUT="6", FRAMEGATE_MAX_MESSAGE_SIZE="2000"))
        self.assertEqual(result.returncode, 0, result.stderr)
        config = dict(l.split(" = ", 1) for l in result.stdout.splitlines() if l and not l.startswith("#"))
        self.assertEqual(config["workers"], "2")  # flag over file
        self.assertEqual(config["listen"], "127.0.0.1:7000")  # file over default
        self.assertEqual(config["stop-timeout"], "6")  # environment over file
        self.assertEqual(config["slow-ms"], "7")  # flag over file, pass-through
        self.assertEqual(config["max-message-size"], "2000")  # environment over file, pass-through
        self.assertEqual(config["subprotocol"], "chat, v2")

    def test_config_file_values_reach_the_children(self):
        path = os.path.join(self.tmp, "framegate.conf")
        with open(path, "w") as f:
            f.write("workers = 2\nslow-ms = 5\n")
        sup = self.start_cluster(2, "--config", path)
        self.assertIsNone(self.live("w3"))
        for name in ("gateway", "w1", "w2"):
            self.assertEqual(self.live(name)["env"].get("FRAMEGATE_SLOW_MS"), "5", name)
        self.stop_cleanly(sup)

    def test_bad_config_file_line_is_a_usage_error(self):
        path = os.path.join(self.tmp, "bad.conf")
        with open(path, "w") as f:
            f.write("workers = 2\njust words\n")
        result = self.run_cli("up", "--config", path)
        self.assertEqual(result.returncode, 2)
        self.assertIn("bad.conf:2:", result.stderr)

    def test_bad_own_option_values_are_usage_errors(self):
        for args in (["--workers", "0"], ["--listen", "nonsense"], ["--stop-timeout", "-1"], ["-x"],
                     ["--worker-admin", "nowhere"], ["--worker-admin", "127.0.0.1:65535", "--workers", "2"],
                     ["--log-format", "xml"]):
            with self.subTest(args=args):
                result = self.run_cli("up", *args)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)

    # -- the command itself ----------------------------------------------------

    def test_help_version_and_unknown_command(self):
        help_text = self.run_cli("--help")
        self.assertEqual(help_text.returncode, 0)
        self.assertIn("framegate up", help_text.stdout)
        self.assertIn("FRAMEGATE_<NAME>", help_text.stdout)  # pass-through is documented
        up_help = self.run_cli("up", "--help")
        self.assertEqual(up_help.returncode, 0)
        for option in ("--listen", "--workers", "--link-dir", "--config", "--print-config", "--stop-timeout"):
            self.assertIn(option, up_help.stdout)
        version = self.run_cli("--version")
        self.assertEqual(version.returncode, 0)
        self.assertRegex(version.stdout, r"^framegate \d+\.\d+\.\d+\n$")
        up_version = self.run_cli("up", "--version")  # answered, not passed through to a started cluster
        self.assertEqual((up_version.returncode, up_version.stdout), (0, version.stdout))
        self.assertEqual(os.listdir(self.state), [])
        unknown = self.run_cli("launch")
        self.assertEqual(unknown.returncode, 2)
        self.assertEqual(len(unknown.stderr.strip().splitlines()), 1, unknown.stderr)
        self.assertIn("launch", unknown.stderr)


if __name__ == "__main__":
    unittest.main()
