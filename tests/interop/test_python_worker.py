"""docs/LINK.md checked against the code: the `websockets` echo suite
(test_python_websockets.EchoTest) against a real framegate-gateway whose only
worker is python_worker.py, a worker written from the document alone.

Run (from tests/interop):
    FRAMEGATE_GATEWAY_BIN=../../build/bin/framegate-gateway PYTHONPATH=../integration/support \
        /usr/bin/python3 -B -m unittest -v test_python_worker

link_pb2.py is generated from proto/framegate/link.proto with protoc into a
temporary directory, as a user of another language would.
"""

import os
import shutil
import subprocess
import sys
import tempfile

import test_python_websockets as base
from framegate_harness import LISTEN_RE, spawn

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.abspath(os.path.join(HERE, "..", "..", "proto"))
STARTUP_TIMEOUT = 15.0
STOP_TIMEOUT = 10.0


class PythonWorkerCluster:
    """A gateway with two I/O threads (two links) and python_worker.py behind it. Its
    credit window is small, so the suite's 1000 messages in a row only pass if the
    worker's Acks return the credits as LINK.md says."""

    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="framegate-pyworker-")
        gen = os.path.join(self.tmp, "gen")
        os.makedirs(gen)
        subprocess.run(["protoc", f"-I{PROTO_DIR}", f"--python_out={gen}", "framegate/link.proto"], check=True)
        links = os.path.join(self.tmp, "links")
        self.gateway = spawn([base.GATEWAY_BIN, "--listen", "127.0.0.1:0", "--threads", "2", "--link-dir", links,
                              "--admin", "127.0.0.1:0", "--credit-window", "16"], "gateway")
        self.worker = None
        try:
            port = int(self.gateway.wait_for(LISTEN_RE, timeout=STARTUP_TIMEOUT)[0].group(1))
            self.worker = spawn([sys.executable, "-B", os.path.join(HERE, "python_worker.py"), "--link-dir", links,
                                 "--id", "py1"], "python_worker.py", env={"PYTHONPATH": gen})
            self.worker.wait_for(r"ready: 2 link\(s\) registered", timeout=STARTUP_TIMEOUT)
            self.gateway.wait_for(r"worker 'py1' \(pid \d+, 0\.1\.0\) registered, serving 1 path",
                                  timeout=STARTUP_TIMEOUT)
        except BaseException:
            self.stop()
            raise
        self.uri = f"ws://127.0.0.1:{port}/echo"

    def stop(self):
        codes = (self.gateway.stop(STOP_TIMEOUT), self.worker.stop(STOP_TIMEOUT) if self.worker else 0)
        shutil.rmtree(self.tmp, ignore_errors=True)
        return codes

    def output(self):
        return f"{self.gateway.describe_tail()}\n{self.worker.describe_tail() if self.worker else ''}"


class PythonWorkerEchoTest(base.EchoTest):
    """Every echo case of the websockets suite, each message through the Python worker."""

    @classmethod
    def setUpClass(cls):
        cls.gateway = PythonWorkerCluster()

    @classmethod
    def tearDownClass(cls):
        gateway_code, worker_code = cls.gateway.stop()
        if gateway_code != 0 or worker_code != 0:
            raise AssertionError(f"exit codes after SIGTERM: gateway {gateway_code}, worker {worker_code} "
                                 f"(expected 0, 0)\n{cls.gateway.output()}")


if __name__ == "__main__":
    import unittest

    unittest.main(verbosity=2)
