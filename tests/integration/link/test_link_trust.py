"""The link directory and the link's peers, tried as another local user would.

Anyone who can create the link sockets can stand in for the gateway, and
anyone who can connect to them can stand in for a worker. Before this was
checked, a directory pre-created by another user let that user receive a
worker's Register (its apps) and its clients. Tests that need a second
user run as root (CI does) and act as `nobody` in a child process.
"""

import os
import shutil
import socket
import subprocess
import tempfile
import textwrap
import time
import unittest

from framegate_harness import DEFAULT_WORKER_BIN, LISTEN_RE, Process, gateway_binary  # noqa: F401

NOBODY = 65534
WORKER_BIN = os.environ.get("FRAMEGATE_WORKER_BIN") or DEFAULT_WORKER_BIN
needs_root = unittest.skipUnless(os.geteuid() == 0, "needs root to act as a second user")
# The system's interpreter: one under root's home is out of `nobody`'s reach.
SYSTEM_PYTHON = "/usr/bin/python3"


def run_to_exit(argv: list[str], timeout: float = 15.0) -> tuple[int, str]:
    """Runs a binary that is expected to stop by itself; its exit code and output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRAMEGATE_")}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    return done.returncode, done.stdout + done.stderr


def as_nobody() -> None:
    os.setgid(NOBODY)
    os.setuid(NOBODY)


# A fake gateway run as `nobody`: listens on `path`, accepts one link, and
# prints how many bytes the worker sent it (its Register) within two seconds.
FAKE_GATEWAY = textwrap.dedent("""
    import socket, sys
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(sys.argv[1]); s.listen(4)
    print("ready", flush=True)
    s.settimeout(20)
    try:
        c, _ = s.accept()
    except socket.timeout:
        print("no connection", flush=True); sys.exit(0)
    c.settimeout(2)
    got = 0
    try:
        while True:
            chunk = c.recv(65536)
            if not chunk: break
            got += len(chunk)
    except socket.timeout:
        pass
    print(f"received {got}", flush=True)
""")


class LinkTrustTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="fg-link-trust-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        os.chmod(self.dir, 0o711)  # `nobody` may pass through to what a test lets it reach
        self.link_dir = os.path.join(self.dir, "links")

    def gateway_argv(self) -> list[str]:
        return [gateway_binary(), "--listen", "127.0.0.1:0", "--threads", "1", "--admin", "off",
                "--link-dir", self.link_dir]

    def start_fake_gateway(self, path: str) -> subprocess.Popen:
        fake = subprocess.Popen([SYSTEM_PYTHON, "-c", FAKE_GATEWAY, path], stdout=subprocess.PIPE, text=True,
                                preexec_fn=as_nobody)
        self.addCleanup(fake.kill)
        self.assertEqual(fake.stdout.readline().strip(), "ready")
        return fake

    # -- the directory ------------------------------------------------------

    def test_gateway_refuses_a_directory_writable_by_others(self):
        os.mkdir(self.link_dir)
        os.chmod(self.link_dir, 0o777)
        code, out = run_to_exit(self.gateway_argv())
        self.assertNotEqual(code, 0, out)
        self.assertIn("cannot be trusted", out)
        self.assertIn("writable by its group or others (mode 0777)", out)

    def test_gateway_creates_a_missing_directory_private(self):
        gateway = Process(self.gateway_argv(), name="gateway", strip_env_prefixes=("FRAMEGATE_",),
                          ready_pattern=LISTEN_RE)
        self.addCleanup(gateway.stop)
        gateway.start()
        self.assertEqual(os.stat(self.link_dir).st_mode & 0o777, 0o700)

    @needs_root
    def test_gateway_refuses_a_directory_of_another_user(self):
        os.mkdir(self.link_dir, 0o700)
        os.chown(self.link_dir, NOBODY, NOBODY)
        code, out = run_to_exit(self.gateway_argv())
        self.assertNotEqual(code, 0, out)
        self.assertIn(f"owned by uid {NOBODY}", out)

    @needs_root
    def test_worker_never_registers_with_a_gateway_in_another_users_directory(self):
        # The reproduction: another user made the directory and listens in it.
        os.mkdir(self.link_dir, 0o755)
        os.chown(self.link_dir, NOBODY, NOBODY)
        fake = self.start_fake_gateway(os.path.join(self.link_dir, "link-0.sock"))
        code, out = run_to_exit([WORKER_BIN, "--id", "w1", "--link-dir", self.link_dir, "--admin", "off"])
        self.assertNotEqual(code, 0, out)
        self.assertIn("cannot be trusted", out)
        fake.kill()
        self.assertNotIn("received", fake.stdout.read())

    @needs_root
    def test_worker_refuses_a_gateway_socket_of_another_user(self):
        # A trusted directory, but the socket in it belongs to another user's
        # process (bound elsewhere, then moved in): SO_PEERCRED tells.
        os.mkdir(self.link_dir, 0o700)
        elsewhere = os.path.join(self.dir, "nobody")
        os.mkdir(elsewhere, 0o700)
        os.chown(elsewhere, NOBODY, NOBODY)
        fake = self.start_fake_gateway(os.path.join(elsewhere, "link-0.sock"))
        os.rename(os.path.join(elsewhere, "link-0.sock"), os.path.join(self.link_dir, "link-0.sock"))
        worker = Process([WORKER_BIN, "--id", "w1", "--link-dir", self.link_dir, "--admin", "off"], name="worker",
                         strip_env_prefixes=("FRAMEGATE_",), ready_pattern=r"owner is uid 65534")
        self.addCleanup(worker.stop)
        worker.start(timeout=10)
        self.assertEqual(fake.wait(timeout=10), 0)
        self.assertEqual(fake.stdout.read().strip(), "received 0", "the worker sent its Register to a stranger")

    @needs_root
    def test_gateway_refuses_a_link_from_another_user(self):
        os.mkdir(self.link_dir, 0o711)  # reachable, not writable: only the socket's mode stands between
        gateway = Process(self.gateway_argv(), name="gateway", strip_env_prefixes=("FRAMEGATE_",),
                          ready_pattern=LISTEN_RE)
        self.addCleanup(gateway.stop)
        gateway.start()
        sock_path = os.path.join(self.link_dir, "link-0.sock")
        os.chmod(sock_path, 0o666)
        probe = textwrap.dedent("""
            import socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sys.argv[1]); s.settimeout(5)
            try:
                s.sendall(b"FG\\x01\\x00\\x00\\x00\\x00\\x04\\x0a\\x02w9")  # Register{worker_id:"w9"}
                print("closed" if s.recv(1024) == b"" else "answered", flush=True)
            except (ConnectionResetError, BrokenPipeError):
                print("closed", flush=True)  # refused before it read what we sent
        """)
        done = subprocess.run([SYSTEM_PYTHON, "-c", probe, sock_path], capture_output=True, text=True, timeout=15,
                              preexec_fn=as_nobody)
        self.assertEqual(done.stdout.strip(), "closed", done.stderr)
        deadline = time.monotonic() + 5
        while not any("refused a link" in line for line in gateway.output_lines()):
            self.assertLess(time.monotonic(), deadline, gateway.describe_tail())
            time.sleep(0.05)
        self.assertFalse(any("registered" in line for line in gateway.output_lines()))


if __name__ == "__main__":
    unittest.main()
