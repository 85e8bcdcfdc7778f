"""HTTP probes of the running deployment (admin listeners, Prometheus's
API) and waiting for a condition with a bound."""

from __future__ import annotations

import json
import re
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

SAMPLE = re.compile(r"^(\w+)(?:\{([^}]*)\})?\s+(\S+)", re.MULTILINE)
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def http_get(url: str, timeout: float = 5) -> tuple[int, str]:
    """(status, body); (0, reason) when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode().strip()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace").strip()
    except (urllib.error.URLError, OSError) as exc:
        return 0, str(exc)


def samples(metrics_text: str, name: str) -> list[tuple[dict[str, str], float]]:
    """(labels, value) of each sample of metric `name` in Prometheus text exposition."""
    return [(dict(LABEL.findall(m[2] or "")), float(m[3])) for m in SAMPLE.finditer(metrics_text) if m[1] == name]


def metrics(admin: str) -> str:
    status, body = http_get(f"http://{admin}/metrics")
    if status != 200:
        raise unittest.TestCase.failureException(f"GET http://{admin}/metrics: {status} {body[:200]}")
    return body


def prometheus_api(address: str, path: str, **query) -> dict | list:
    """The `data` of a Prometheus HTTP API answer."""
    url = f"http://{address}/api/v1/{path}" + (f"?{urllib.parse.urlencode(query)}" if query else "")
    status, body = http_get(url)
    if status != 200:
        raise unittest.TestCase.failureException(f"GET {url}: {status} {body[:200]}")
    return json.loads(body)["data"]


def wait_until(condition, timeout: float, what: str, interval: float = 0.5):
    """Poll `condition()` until it returns something true, and return that; fail naming `what` and
    what the last poll saw. `condition` may return (ok, seen) to say what it saw."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        ok, seen = result if isinstance(result, tuple) else (result, result)
        if ok:
            return seen
        if time.monotonic() > deadline:
            raise unittest.TestCase.failureException(f"{what}: not within {timeout:.0f} s (last seen: {seen})")
        time.sleep(interval)
