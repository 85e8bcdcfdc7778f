"""The worker SDK as a user meets it: framegate installed into a fresh prefix
(`cmake --install`), examples/hello-app configured and built from that prefix
alone in a fresh build directory, and the resulting worker run under the
installed `framegate up --worker-bin`, answering /hello over a real WebSocket.

Run by hand (after building everything in build/):
    FRAMEGATE_BUILD_DIR=build PYTHONPATH=tests/integration/support \
        /usr/bin/python3 -m unittest -v tests/integration/sdk/test_sdk.py
"""

import asyncio
import functools
import os
import shutil
import tempfile
import unittest

import websockets

from framegate_harness import ProcessError, run_checked, spawn, wait_for_up

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
BUILD_DIR = os.path.abspath(os.environ.get("FRAMEGATE_BUILD_DIR", os.path.join(SOURCE_DIR, "build")))
EXAMPLE_DIR = os.path.join(SOURCE_DIR, "examples", "hello-app")
BUILD_TIMEOUT = 300  # one file to compile, but the machine may be busy
START_TIMEOUT = 20
STOP_TIMEOUT = 15


run = functools.partial(run_checked, timeout=BUILD_TIMEOUT)


def build_setting(name):
    """A CMAKE_* entry of framegate's build cache, or None when empty."""
    with open(os.path.join(BUILD_DIR, "CMakeCache.txt"), encoding="utf-8") as f:
        for line in f:
            if line.startswith(name + ":"):
                return line.strip().split("=", 1)[1] or None
    return None


def compiler_launcher():
    """ccache when the build used it, so a rerun compiles nothing."""
    return build_setting("CMAKE_CXX_COMPILER_LAUNCHER")


def compiler():
    """The compiler framegate was built with: a user builds an app with the
    toolchain of the library, and a sanitized library (clang's ASan in CI)
    links only with that compiler's sanitizer runtimes."""
    return build_setting("CMAKE_CXX_COMPILER") or "c++"


class InstalledSdkTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="framegate-sdk-")
        cls.prefix = os.path.join(cls.tmp, "prefix")
        run(["cmake", "--install", BUILD_DIR, "--prefix", cls.prefix])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def build_example(self):
        build = os.path.join(self.tmp, "hello-build")
        cmd = ["cmake", "-S", EXAMPLE_DIR, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
               f"-DCMAKE_PREFIX_PATH={self.prefix}", f"-DCMAKE_CXX_COMPILER={compiler()}"]
        launcher = compiler_launcher()
        if launcher:
            cmd.append(f"-DCMAKE_CXX_COMPILER_LAUNCHER={launcher}")
        run(cmd)
        run(["cmake", "--build", build])
        return build

    def test_installed_files(self):
        p = self.prefix
        for rel in ["bin/framegate", "bin/framegate-gateway", "bin/framegate-worker",
                    "include/framegate/worker/app.hpp", "include/framegate/worker/run.hpp",
                    "include/framegate/worker/runtime/app_registry.hpp",
                    "lib/cmake/framegate/framegateConfig.cmake", "lib/cmake/framegate/framegateConfigVersion.cmake",
                    "lib/pkgconfig/framegate.pc", "lib/libframegate_worker.a",
                    "share/framegate/demo/index.html", "etc/framegate/gateway.env",
                    "lib/systemd/system/framegate-gateway.service", "lib/systemd/system/framegate-worker@.service"]:
            self.assertTrue(os.path.exists(os.path.join(p, rel)), f"not installed: {rel}")
        # Nothing internal: the app API, the registry and the entry point only.
        headers = sorted(os.path.relpath(os.path.join(d, f), os.path.join(p, "include"))
                         for d, _, files in os.walk(os.path.join(p, "include")) for f in files)
        self.assertEqual(headers, ["framegate/worker/app.hpp", "framegate/worker/run.hpp",
                                   "framegate/worker/runtime/app_registry.hpp"])

    def test_pkg_config(self):
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(self.prefix, "lib", "pkgconfig"))
        flags = run(["pkg-config", "--cflags", "--libs", "framegate"], env=env).split()
        includes = [os.path.normpath(f[2:]) for f in flags if f.startswith("-I")]
        self.assertIn(os.path.join(self.prefix, "include"), includes)
        self.assertIn("-lframegate_worker", flags)
        # The same example, compiled with the pkg-config flags alone.
        exe = os.path.join(self.tmp, "hello-pc")
        command = [c for c in [compiler_launcher(), compiler()] if c]
        run([*command, "-O1", "-o", exe, os.path.join(EXAMPLE_DIR, "main.cpp"), *flags])
        out = run([exe, "--help"])
        self.assertIn("--link-dir", out)

    def test_hello_app_under_framegate_up(self):
        build = self.build_example()
        with open(os.path.join(build, "CMakeCache.txt"), encoding="utf-8") as f:
            cache = f.read()
        self.assertIn(f"framegate_DIR:PATH={self.prefix}/lib/cmake/framegate", cache)
        with open(os.path.join(build, "build.ninja"), encoding="utf-8") as f:
            self.assertNotIn(SOURCE_DIR + "/worker", f.read(), "the example must not see framegate's source tree")
        worker = os.path.join(build, "hello-worker")

        # The SDK's command line: framegate-worker's, minus the built-in apps' options.
        help_text = run([worker, "--help"])
        self.assertIn("hello-worker: runs the business logic", help_text)
        self.assertIn("--link-dir", help_text)
        self.assertNotIn("--enable-test-apps", help_text)

        cluster = spawn([os.path.join(self.prefix, "bin", "framegate"), "up", "--worker-bin", worker, "--no-redis",
                         "--workers", "2", "--listen", "127.0.0.1:0", "--link-dir", os.path.join(self.tmp, "links"),
                         "--worker-admin", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--no-demo"], "framegate up")
        try:
            try:
                port = wait_for_up(cluster, 2, START_TIMEOUT)
            except ProcessError as exc:
                self.fail(f"the hello workers did not register within {START_TIMEOUT}s:\n{exc}")
            answers = asyncio.run(self.talk(port))
            self.assertEqual(answers, ["hello, world", "hello, framegate", "hello, "])
        finally:
            code = cluster.stop(STOP_TIMEOUT)
            if cluster.killed:
                raise AssertionError(f"framegate up did not stop on SIGTERM:\n{cluster.describe_tail()}")
        self.assertEqual(code, 0, cluster.describe_tail())

    async def talk(self, port):
        answers = []
        async with websockets.connect(f"ws://127.0.0.1:{port}/hello", open_timeout=5, close_timeout=5) as ws:
            for text in ["world", "framegate", ""]:
                await ws.send(text)
                answers.append(await asyncio.wait_for(ws.recv(), 5))
        # A path no worker serves is refused at the handshake.
        with self.assertRaises(websockets.exceptions.InvalidStatusCode) as refused:
            await websockets.connect(f"ws://127.0.0.1:{port}/echo", open_timeout=5)
        self.assertEqual(refused.exception.status_code, 404)
        return answers


if __name__ == "__main__":
    unittest.main(verbosity=2)
