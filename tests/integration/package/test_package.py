"""The Debian package as an operator meets it: `cpack -G DEB` from the build
directory, its contents and control fields checked, then `apt-get install
./framegate_*.deb` into a throw-away Debian 12 root (a copy of a cached
`debootstrap --variant=minbase bookworm` root): there the binaries run, a
whole cluster answers a WebSocket client, and the systemd units pass Debian
12's own `systemd-analyze verify`.

Needs root (debootstrap, chroot, mounting /proc) and the Debian mirror of
/etc/apt/sources.list*. Without them the test fails, saying why: a package
check that skips itself would hide a broken package. The cached root is made
once (about a minute) under $FRAMEGATE_TEST_ROOTFS_CACHE.

Run by hand (after building in build/), as root:
    FRAMEGATE_BUILD_DIR=build PYTHONPATH=tests/integration/support \
        /usr/bin/python3 -m unittest -v tests/integration/package/test_package.py
"""

import asyncio
import fcntl
import functools
import glob
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import websockets

from framegate_harness import ProcessError, run_checked, spawn, wait_for_up

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD_DIR = os.path.abspath(
    os.environ.get("FRAMEGATE_BUILD_DIR", os.path.join(HERE, "..", "..", "..", "build")))
CACHE_DIR = os.environ.get("FRAMEGATE_TEST_ROOTFS_CACHE", "/var/cache/framegate-test")
SUITE = "bookworm"
CACHED_ROOT = os.path.join(CACHE_DIR, f"{SUITE}-minbase")
DEFAULT_MIRROR = "http://deb.debian.org/debian"
SLOW = 900  # debootstrap on a slow mirror
START_TIMEOUT = 20
STOP_TIMEOUT = 15

EXPECTED_FILES = [
    "./usr/bin/framegate", "./usr/bin/framegate-gateway", "./usr/bin/framegate-worker",
    "./usr/include/framegate/worker/app.hpp", "./usr/include/framegate/worker/run.hpp",
    "./usr/include/framegate/worker/runtime/app_registry.hpp",
    "./usr/lib/libframegate_worker.a", "./usr/lib/cmake/framegate/framegateConfig.cmake",
    "./usr/lib/cmake/framegate/framegateTargets.cmake", "./usr/lib/pkgconfig/framegate.pc",
    "./usr/share/framegate/demo/index.html", "./usr/share/framegate/demo/app.js",
    "./usr/lib/systemd/system/framegate-gateway.service", "./usr/lib/systemd/system/framegate-worker@.service",
    "./etc/framegate/gateway.env", "./etc/framegate/worker.env",
    "./usr/share/doc/framegate/DEPLOY.md", "./usr/share/doc/framegate/SDK.md", "./usr/share/doc/framegate/LINK.md",
    "./usr/share/doc/framegate/METRICS.md", "./usr/share/doc/framegate/ALERTS.md",
    "./usr/share/framegate/prometheus/alerts.yml",
    "./usr/share/doc/framegate/examples/hello-app/main.cpp",
]
UNITS = ["framegate-gateway.service", "framegate-worker@.service"]


run = functools.partial(run_checked, timeout=SLOW)


def debian_mirror():
    """The first Debian (not security) URI of the host's apt sources."""
    for path in ["/etc/apt/sources.list", *sorted(glob.glob("/etc/apt/sources.list.d/*"))]:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError:
            continue
        for uri in re.findall(r"(?:^URIs:\s*|^deb\s+(?:\[[^\]]*\]\s+)?)(\S+)", text, re.M):
            if "security" not in uri:
                return uri
    return DEFAULT_MIRROR


def ensure_cached_root():
    """The cached minbase root, made once (under a lock: ctest -j may race)."""
    os.makedirs(CACHE_DIR, exist_ok=True)
    with open(os.path.join(CACHE_DIR, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.isfile(os.path.join(CACHED_ROOT, "etc", "debian_version")):
            return
        if shutil.which("debootstrap") is None:
            raise AssertionError("debootstrap is not installed (tools/setup.sh installs it)")
        partial = CACHED_ROOT + ".partial"
        shutil.rmtree(partial, ignore_errors=True)
        run(["debootstrap", "--variant=minbase", SUITE, partial, debian_mirror()])
        os.rename(partial, CACHED_ROOT)


class DebianPackageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0:
            raise AssertionError("the package test needs root (debootstrap, chroot); run it as root or leave "
                                 "out the label: ctest -LE package")
        cls.tmp = tempfile.mkdtemp(prefix="framegate-deb-")
        cls.root = os.path.join(cls.tmp, "root")
        cls.proc_mounted = False
        try:
            run(["cpack", "-G", "DEB", "-B", os.path.join(cls.tmp, "cpack")], cwd=BUILD_DIR)
            debs = glob.glob(os.path.join(cls.tmp, "cpack", "framegate_*.deb"))
            if len(debs) != 1:
                raise AssertionError(f"cpack made {debs}, expected one framegate_*.deb")
            cls.deb = debs[0]
            cls.contents = run(["dpkg-deb", "-c", cls.deb])
            cls.install_into_root()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def install_into_root(cls):
        ensure_cached_root()
        run(["cp", "-a", CACHED_ROOT, cls.root])
        shutil.copy("/etc/resolv.conf", os.path.join(cls.root, "etc", "resolv.conf"))
        shutil.copy(cls.deb, os.path.join(cls.root, "tmp"))
        run(["mount", "-t", "proc", "proc", os.path.join(cls.root, "proc")])
        cls.proc_mounted = True
        # apt resolves the package's Depends from the mirror; systemd is what a
        # VM has, and brings Debian 12's systemd-analyze.
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        run(["chroot", cls.root, "apt-get", "update", "-qq"], env=env)
        run(["chroot", cls.root, "apt-get", "install", "-y", "-qq", "--no-install-recommends",
             "/tmp/" + os.path.basename(cls.deb), "systemd"], env=env)
        # What apt downloaded is kept in the cache: the next run fetches only what changed.
        archives = os.path.join(CACHED_ROOT, "var", "cache", "apt", "archives")
        for deb in glob.glob(os.path.join(cls.root, "var", "cache", "apt", "archives", "*.deb")):
            if not os.path.exists(os.path.join(archives, os.path.basename(deb))):
                shutil.copy(deb, archives)

    @classmethod
    def tearDownClass(cls):
        if cls.proc_mounted:
            subprocess.run(["umount", "-l", os.path.join(cls.root, "proc")], check=False)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def chroot(self, *cmd):
        return run(["chroot", self.root, *cmd], timeout=60)

    def test_contents(self):
        listed = {line.split()[-1] for line in self.contents.splitlines() if line.strip()}
        missing = [f for f in EXPECTED_FILES if f not in listed]
        self.assertEqual(missing, [], f"not in the package:\n{self.contents}")
        stray = [f for f in listed if not re.match(r"\./(usr|etc)/", f) and f != "./"]
        self.assertEqual(stray, [], "files outside /usr and /etc")

    def test_control(self):
        fields = run(["dpkg-deb", "-f", self.deb, "Package", "Version", "Architecture", "Depends"])
        self.assertIn("Package: framegate", fields)
        self.assertRegex(fields, r"Version: \d+\.\d+\.\d+")
        # dpkg-shlibdeps found the shared libraries the binaries load.
        for lib in ["libprotobuf", "libspdlog", "libhiredis", "libprometheus-cpp-core", "zlib1g", "libstdc++6"]:
            self.assertIn(lib, fields.split("Depends:", 1)[1], f"{lib} missing from Depends")
        conffiles = run(["dpkg-deb", "-I", self.deb, "conffiles"]).split()
        self.assertEqual(sorted(conffiles), ["/etc/framegate/gateway.env", "/etc/framegate/worker.env"])

    def test_binaries_run(self):
        self.assertRegex(self.chroot("framegate", "--version"), r"^framegate \d+\.\d+\.\d+")
        self.assertRegex(self.chroot("framegate-worker", "--version"), r"^framegate-worker \(framegate \d")
        self.assertIn("--link-dir", self.chroot("framegate-gateway", "--help"))
        self.assertIn("--link-dir", self.chroot("framegate-worker", "--help"))
        self.assertIn("--worker-bin", self.chroot("framegate", "up", "--help"))

    def test_cluster_serves_echo(self):
        # `framegate up` inside the root (same network: the host's client reaches it).
        cluster = spawn(["chroot", self.root, "framegate", "up", "--no-redis", "--workers", "2",
                         "--listen", "127.0.0.1:0", "--link-dir", "/tmp/framegate-links", "--admin", "127.0.0.1:0",
                         "--worker-admin", "127.0.0.1:0"], "framegate up")
        try:
            try:
                port = wait_for_up(cluster, 2, START_TIMEOUT)
            except ProcessError as exc:
                self.fail(f"the packaged cluster did not come up within {START_TIMEOUT}s:\n{exc}")
            self.assertEqual(asyncio.run(self.echo(port, "from the package")), "from the package")
        finally:
            code = cluster.stop(STOP_TIMEOUT)
        self.assertEqual(code, 0, cluster.describe_tail())

    async def echo(self, port, text):
        async with websockets.connect(f"ws://127.0.0.1:{port}/echo", open_timeout=5, close_timeout=5) as ws:
            await ws.send(text)
            return await asyncio.wait_for(ws.recv(), 5)

    def test_units_verify(self):
        for unit in [*UNITS, "framegate-worker@1.service"]:
            with self.subTest(unit=unit):
                arg = unit if unit.endswith("@1.service") else f"/usr/lib/systemd/system/{unit}"
                # Debian 12's systemd: a unit it warns about fails here too.
                self.assertEqual(self.chroot("systemd-analyze", "verify", arg), "")

    def test_units_are_hardened(self):
        for unit in UNITS:
            with self.subTest(unit=unit):
                path = os.path.join(self.root, "usr", "lib", "systemd", "system", unit)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                for setting in ["DynamicUser=yes", "User=framegate", "PrivateTmp=yes", "RuntimeDirectory=framegate",
                                "RuntimeDirectoryPreserve=yes", "ProtectSystem=strict", "NoNewPrivileges=yes",
                                "ExecStart=/usr/bin/"]:
                    self.assertIn(setting, text)
                report = self.chroot("systemd-analyze", "security", "--offline=yes", "--no-pager",
                                     f"/usr/lib/systemd/system/{unit}")
                m = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", report)
                self.assertIsNotNone(m, report)
                self.assertLessEqual(float(m.group(1)), 2.0, report)


if __name__ == "__main__":
    unittest.main(verbosity=2)
