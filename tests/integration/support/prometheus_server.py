"""A real Prometheus (Debian's `prometheus`, from tools/setup.sh) for a test:
static targets by job, optional rule files, one-second scrapes and rule
evaluations, its HTTP API on a free 127.0.0.1 port. stop() ends the process
it started and leaves nothing but its files under the caller's directory.

    with PrometheusServer(tmp, {"framegate-gateway": ["127.0.0.1:9090"]}, rule_files=[...]) as prom:
        prom.query("up == 1")        # the instant vector's samples
        prom.api("alerts")           # the `data` of /api/v1/alerts

Only Python 3.11 standard library modules are used.
"""

from __future__ import annotations

import json
import os
import shutil
import urllib.error
import urllib.parse
import urllib.request
from typing import Mapping, Sequence

from framegate_harness import Process
from local_cluster import free_port


def available() -> bool:
    return shutil.which("prometheus") is not None


class PrometheusServer:
    def __init__(self, directory: str, jobs: Mapping[str, Sequence[str]], rule_files: Sequence[str] = (),
                 interval: str = "1s"):
        self.directory = directory
        self.port = free_port()
        self.config = os.path.join(directory, "prometheus.yml")
        lines = ["global:", f"  scrape_interval: {interval}", f"  scrape_timeout: {interval}",
                 f"  evaluation_interval: {interval}"]
        if rule_files:
            lines += ["rule_files:"] + [f"  - {json.dumps(path)}" for path in rule_files]
        lines.append("scrape_configs:")
        for job, targets in jobs.items():
            lines += [f"  - job_name: {json.dumps(job)}", "    static_configs:",
                      f"      - targets: {json.dumps(list(targets))}"]
        with open(self.config, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        self.process = Process(["prometheus", f"--config.file={self.config}",
                                f"--storage.tsdb.path={os.path.join(directory, 'tsdb')}",
                                f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
                               name="prometheus", ready_pattern=None)

    def start(self) -> "PrometheusServer":
        self.process.start()
        return self

    def __enter__(self) -> "PrometheusServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        self.process.stop()

    def api(self, path: str, **params) -> dict | list | None:
        """The `data` of GET /api/v1/<path>, or None while Prometheus does not answer."""
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return json.loads(r.read())["data"]
        except (urllib.error.URLError, ConnectionError):
            return None

    def query(self, promql: str) -> list[dict]:
        """The samples of an instant query ([] while Prometheus does not answer)."""
        data = self.api("query", query=promql)
        return data["result"] if data else []
