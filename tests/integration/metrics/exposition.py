"""A strict reader of the Prometheus text format (version 0.0.4), enough to
check what framegate's /metrics serve: every sample belongs to a family
announced by # HELP and # TYPE, names and label sets are well formed, and a
family is announced once."""

from __future__ import annotations

import re
import urllib.request
from dataclasses import dataclass, field

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
SAMPLE_RE = re.compile(rf"^({NAME})(?:\{{(.*)\}})? (\S+)$")
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)')
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


@dataclass
class Family:
    name: str
    type: str = ""
    help: str = ""
    samples: list[tuple[str, dict[str, str], float]] = field(default_factory=list)

    def value(self, **labels: str) -> float:
        """The one sample (of the family's own name) whose labels include `labels`."""
        found = [v for n, ls, v in self.samples if n == self.name and all(ls.get(k) == x for k, x in labels.items())]
        if len(found) != 1:
            raise AssertionError(f"{self.name}{labels}: {len(found)} matching samples in {self.samples}")
        return found[0]

    def total(self, **labels: str) -> float:
        """The sum over every sample (of the family's own name) whose labels include `labels`."""
        return sum(v for n, ls, v in self.samples if n == self.name and all(ls.get(k) == x for k, x in labels.items()))

    def bucket(self, le: float, **labels: str) -> float:
        """A histogram's cumulative bucket `le` (summed over label sets matching `labels`)."""
        return sum(v for n, ls, v in self.samples
                   if n == self.name + "_bucket" and float(ls.get("le", "nan")) == le
                   and all(ls.get(k) == x for k, x in labels.items()))

    def count(self, **labels: str) -> float:
        """A histogram's _count (summed over label sets matching `labels`)."""
        return sum(v for n, ls, v in self.samples
                   if n == self.name + "_count" and all(ls.get(k) == x for k, x in labels.items()))


def parse_labels(text: str) -> dict[str, str]:
    labels: dict[str, str] = {}
    pos = 0
    while pos < len(text):
        m = LABEL_RE.match(text, pos)
        if not m:
            raise ValueError(f"bad label set {{{text}}}")
        labels[m.group(1)] = re.sub(r"\\(.)", lambda e: "\n" if e.group(1) == "n" else e.group(1), m.group(2))
        pos = m.end()
    return labels


def parse(text: str) -> dict[str, Family]:
    families: dict[str, Family] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line:
            continue
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            _, kind, name, rest = (line.split(" ", 3) + [""])[:4]
            fam = families.setdefault(name, Family(name))
            if kind == "HELP":
                if fam.help:
                    raise ValueError(f"line {number}: {name} announced twice")
                fam.help = rest
            else:
                fam.type = rest
            continue
        if line.startswith("#"):
            continue
        m = SAMPLE_RE.match(line)
        if not m:
            raise ValueError(f"line {number}: not a sample: {line!r}")
        name, labels, value = m.group(1), parse_labels(m.group(2) or ""), float(m.group(3))
        owner = name
        if name not in families:
            for suffix in HISTOGRAM_SUFFIXES:
                if name.endswith(suffix) and name[: -len(suffix)] in families:
                    owner = name[: -len(suffix)]
        if owner not in families:
            raise ValueError(f"line {number}: sample {name} of no announced family")
        families[owner].samples.append((name, labels, value))
    for fam in families.values():
        if not fam.help or fam.type not in ("counter", "gauge", "histogram"):
            raise ValueError(f"{fam.name}: help {fam.help!r}, type {fam.type!r}")
    return families


def scrape(port: int, host: str = "127.0.0.1") -> dict[str, Family]:
    with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=5) as response:
        assert response.status == 200, response.status
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4"), response.headers
        return parse(response.read().decode("utf-8"))

