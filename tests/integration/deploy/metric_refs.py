"""Which metrics docs/METRICS.md documents, and which the Grafana dashboard's
and the alerting rules' PromQL refers to. Importable by any test (stdlib only):

    metrics_md_table(path)      {name: Metric(name, type, labels)} from the doc's tables
    metrics_md_names(path)      the documented names
    promql_refs(expr)           the series names a PromQL expression selects, as written
    Expression(expr, table)     one query's series, with the documented metric, labels and
                                rate() use of each (the dashboard's and the alerts' tests)
    dashboard_queries(path)     every (panel title, target) of a dashboard JSON, rows included
    dashboard_metric_names(path)  the framegate_* names the dashboard queries, histogram
                                suffixes (_bucket, _sum, _count) removed: comparable with
                                metrics_md_names() and with the names of a live /metrics scrape
"""

from __future__ import annotations

import dataclasses
import json
import re

HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
PREFIX = "framegate_"

# A METRICS.md table row: | `name` | type | `label`, `label` | meaning |
_ROW = re.compile(r"^\|\s*`(?P<name>framegate_\w+)`\s*\|\s*(?P<type>\w+)\s*\|(?P<labels>[^|]*)\|")
_LABEL = re.compile(r"`(\w+)`")


@dataclasses.dataclass(frozen=True)
class Metric:
    name: str
    type: str  # counter, gauge, histogram
    labels: frozenset[str]


def metrics_md_table(path: str) -> dict[str, Metric]:
    table: dict[str, Metric] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = _ROW.match(line.strip())
            if m:
                name = m["name"]
                table[name] = Metric(name, m["type"], frozenset(_LABEL.findall(m["labels"])))
    return table


def metrics_md_names(path: str) -> set[str]:
    return set(metrics_md_table(path))


# --- PromQL -------------------------------------------------------------------
#
# A small lexer, enough to tell series names from functions, keywords and
# label names: strings, label matchers {...}, ranges [...] and the label
# lists of by/without/on/ignoring/group_left/group_right are single tokens.

_TOKEN = re.compile(
    r"""(?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
      |(?P<matchers>\{[^}]*\})
      |(?P<range>\[[^\]]*\])
      |(?P<variable>\$\{?\w+\}?)
      |(?P<duration>\d+(?:ms|[smhdwy])\b)
      |(?P<number>\d+(?:\.\d+)?(?:e[+-]?\d+)?)
      |(?P<ident>[A-Za-z_:][A-Za-z0-9_:]*)
      |(?P<punct>==|!=|>=|<=|=~|!~|[(),+\-*/%^=<>])
      |(?P<space>\s+)""",
    re.VERBOSE,
)
_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset",
             "and", "or", "unless", "atan2", "inf", "nan"}
_LABEL_LIST_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right"}


@dataclasses.dataclass(frozen=True)
class Token:
    kind: str
    text: str


def tokenize(expr: str) -> list[Token]:
    tokens: list[Token] = []
    pos = 0
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if not m:
            raise ValueError(f"cannot read PromQL at {expr[pos:pos + 20]!r} in {expr!r}")
        pos = m.end()
        if m.lastgroup != "space":
            tokens.append(Token(m.lastgroup, m.group()))
    return tokens


def label_lists(tokens: list[Token]) -> list[tuple[str, list[str]]]:
    """Each by/without/on/... clause as (keyword, [labels])."""
    clauses = []
    for i, t in enumerate(tokens):
        if t.kind == "ident" and t.text in _LABEL_LIST_KEYWORDS and i + 1 < len(tokens) \
                and tokens[i + 1].text == "(":
            labels = []
            for u in tokens[i + 2:]:
                if u.text == ")":
                    break
                if u.kind == "ident":
                    labels.append(u.text)
            clauses.append((t.text, labels))
    return clauses


def series_positions(tokens: list[Token]) -> list[int]:
    """Indexes of the tokens that name a series (not a function, keyword or label)."""
    inside_label_list = False
    positions = []
    for i, t in enumerate(tokens):
        if inside_label_list:
            inside_label_list = t.text != ")"
            continue
        if t.kind != "ident" or t.text.lower() in _KEYWORDS:
            if t.kind == "ident" and t.text in _LABEL_LIST_KEYWORDS:
                inside_label_list = True
            continue
        # A function call, or an aggregation written `sum by (...) (...)`.
        following = tokens[i + 1].text if i + 1 < len(tokens) else ""
        is_call = following == "(" or following in ("by", "without")
        if not is_call:
            positions.append(i)
    return positions


def promql_refs(expr: str) -> list[str]:
    tokens = tokenize(expr)
    return [tokens[i].text for i in series_positions(tokens)]


def base_name(name: str) -> str:
    for suffix in HISTOGRAM_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


# --- one expression against the documented table -------------------------------

# Series Prometheus itself keeps: `up` for every scrape, ALERTS for every pending
# or firing alert (with the alert's own labels; framegate's rules add `severity`).
PROMETHEUS_SERIES = {"up": frozenset(), "ALERTS": frozenset({"alertname", "alertstate", "severity"})}
# Labels every target has: Prometheus's own, and `host`, which deploy/multihost's
# file-based service discovery gives each gateway and worker (the Hosts row).
TARGET_LABELS = {"instance", "job", "host"}
RATE_FUNCTIONS = {"rate", "irate", "increase"}


class Expression:
    """One PromQL query with the documented metric behind each series it selects."""

    def __init__(self, expr: str, table: dict[str, Metric]):
        self.expr = expr
        self.tokens = tokenize(expr)
        self.positions = series_positions(self.tokens)
        self.clauses = label_lists(self.tokens)
        self.table = table

    def names(self) -> list[str]:
        return [self.tokens[i].text for i in self.positions]

    def metric(self, name: str) -> Metric | None:
        base = base_name(name)
        if name in self.table and self.table[name].type != "histogram":
            return self.table[name]
        if base != name and base in self.table and self.table[base].type == "histogram":
            return self.table[base]
        return None

    def labels_of(self, name: str) -> set[str]:
        if name in PROMETHEUS_SERIES:
            return set(PROMETHEUS_SERIES[name]) | TARGET_LABELS
        labels = set(self.metric(name).labels) | TARGET_LABELS
        return labels | {"le"} if name.endswith("_bucket") else labels

    def in_rate(self, position: int) -> bool:
        """Whether the series at `position` is the range-vector argument of rate/irate/increase."""
        t = self.tokens
        after = position + 1
        if after < len(t) and t[after].kind == "matchers":
            after += 1
        return (position >= 2 and t[position - 1].text == "(" and t[position - 2].text in RATE_FUNCTIONS
                and after < len(t) and t[after].kind == "range")

    def matcher_labels(self, position: int) -> set[str]:
        """The label names of the `{...}` matchers written right after the series at `position`."""
        following = self.tokens[position + 1] if position + 1 < len(self.tokens) else None
        if following is None or following.kind != "matchers":
            return set()
        return set(re.findall(r"(\w+)\s*(?:=~|!~|!=|=)", following.text[1:-1]))

    def output_labels(self, available: set[str]) -> set[str]:
        grouped = {label for keyword, labels in self.clauses if keyword == "by" for label in labels}
        return (grouped - {"le"}) if grouped else available


# --- the dashboard ------------------------------------------------------------


def dashboard_panels(dashboard: dict) -> list[dict]:
    """Every panel, rows and the panels inside collapsed rows included."""
    panels = []
    for panel in dashboard.get("panels", []):
        panels.append(panel)
        panels.extend(panel.get("panels", []))
    return panels


def dashboard_queries(path: str) -> list[tuple[str, dict]]:
    with open(path, encoding="utf-8") as f:
        dashboard = json.load(f)
    return [(panel.get("title", ""), target)
            for panel in dashboard_panels(dashboard)
            for target in panel.get("targets", [])]


def dashboard_metric_names(path: str) -> set[str]:
    names = set()
    for _, target in dashboard_queries(path):
        names.update(base_name(n) for n in promql_refs(target.get("expr", "")) if n.startswith(PREFIX))
    return names
