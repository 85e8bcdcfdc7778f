"""The Grafana dashboard and its provisioning: the JSON parses, has every
row the issue names, each panel queries only metrics docs/METRICS.md
documents and uses each as its type allows (counters through rate,
histograms through their buckets, labels the metric has), every documented
metric is shown, and the provisioning files point at what
docker-compose.yml mounts."""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import unittest

import yaml

import metric_refs
from deploy_files import (DASHBOARD, DASHBOARD_GENERATOR, DASHBOARD_PROVIDERS, DATASOURCES, METRICS_MD, compose_config,
                          load_yaml, ports, run, tool, volumes)

# The rows the issue asks for, by a word each row title must contain.
REQUIRED_ROWS = ("traffic", "latency", "backpressure", "errors", "workers", "broker", "deflate", "process")
PANEL_TYPES = {"timeseries", "table", "stat"}


class DashboardTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        with open(DASHBOARD, encoding="utf-8") as f:
            cls.dashboard = json.load(f)
        cls.panels = metric_refs.dashboard_panels(cls.dashboard)
        cls.table = metric_refs.metrics_md_table(METRICS_MD)

    def graphs(self) -> list[dict]:
        return [p for p in self.panels if p["type"] != "row"]

    def expressions(self):
        for panel in self.graphs():
            for target in panel["targets"]:
                yield panel, target, metric_refs.Expression(target["expr"], self.table)

    def test_generated_by_the_generator(self):
        result = run([sys.executable, DASHBOARD_GENERATOR, "--check"])
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_every_query_parses_as_promql(self):
        """Prometheus's own parser: each query as a recording rule for `promtool check rules`."""
        rules = [{"record": f"dashboard:query_{i}", "expr": e.expr.replace("$__rate_interval", "1m")}
                 for i, (_, _, e) in enumerate(self.expressions())]
        with tempfile.NamedTemporaryFile("w", suffix=".yml", prefix="fg-dashboard-rules-") as f:
            yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}, f)
            f.flush()
            result = run([tool("promtool"), "check", "rules", f.name])
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_metrics_md_has_the_table(self):
        self.assertGreater(len(self.table), 40, "docs/METRICS.md's tables were not read")
        self.assertEqual({m.type for m in self.table.values()}, {"counter", "gauge", "histogram"})

    def test_every_required_row_exists_and_has_panels(self):
        titles = [p["title"].lower() for p in self.dashboard["panels"] if p["type"] == "row"]
        for word in REQUIRED_ROWS:
            self.assertTrue(any(word in t for t in titles), f"no row about {word}: {titles}")
        kinds = [p["type"] for p in self.dashboard["panels"]]
        self.assertEqual(kinds[0], "row", "every panel sits under a row")
        self.assertNotIn(("row", "row"), list(zip(kinds, kinds[1:])), "a row without panels")

    def test_every_panel_has_a_query_a_description_and_the_provisioned_datasource(self):
        uid = load_yaml(DATASOURCES)["datasources"][0]["uid"]
        for panel in self.graphs():
            with self.subTest(panel=panel["title"]):
                self.assertIn(panel["type"], PANEL_TYPES)
                self.assertTrue(panel.get("description"), "say what the panel tells and what to do")
                self.assertTrue(panel["targets"], "no query")
                self.assertEqual(panel["datasource"]["uid"], uid)
                for target in panel["targets"]:
                    self.assertTrue(target.get("expr", "").strip(), "an empty query")
                    self.assertEqual(target["datasource"]["uid"], uid)

    def test_queries_select_documented_metrics_only(self):
        for panel, target, e in self.expressions():
            with self.subTest(panel=panel["title"], expr=e.expr):
                self.assertTrue(e.names(), "the query selects no series")
                for name in e.names():
                    known = name in metric_refs.PROMETHEUS_SERIES or e.metric(name) is not None
                    self.assertTrue(known, f"{name} is not in docs/METRICS.md (histograms only through "
                                           f"_bucket, _sum or _count)")

    def test_each_metric_is_used_as_its_type_allows(self):
        for panel, target, e in self.expressions():
            for position in e.positions:
                name = e.tokens[position].text
                metric = e.metric(name)
                if metric is None:
                    continue
                with self.subTest(panel=panel["title"], series=name):
                    if metric.type == "gauge":
                        self.assertFalse(e.in_rate(position), "rate() of a gauge")
                    else:
                        self.assertTrue(e.in_rate(position), "a counter or histogram series outside rate()")
                    if name.endswith("_bucket"):
                        self.assertIn("histogram_quantile", e.expr)
                        self.assertIn("le", e.labels_of(name) & {l for _, ls in e.clauses for l in ls})

    def test_grouping_and_legend_labels_exist(self):
        for panel, target, e in self.expressions():
            with self.subTest(panel=panel["title"], expr=e.expr):
                names = [n for n in e.names() if n in metric_refs.PROMETHEUS_SERIES or e.metric(n)]
                available = set.intersection(*(e.labels_of(n) for n in names)) if names else set()
                for keyword, labels in e.clauses:
                    self.assertEqual(set(labels) - available, set(), f"{keyword} (...) names labels the metrics lack")
                legend = set(re.findall(r"\{\{\s*(\w+)\s*\}\}", target.get("legendFormat", "")))
                self.assertEqual(legend - e.output_labels(available), set(), "the legend names missing labels")

    def test_every_documented_metric_is_shown(self):
        shown = metric_refs.dashboard_metric_names(DASHBOARD)
        self.assertEqual(set(self.table) - shown, set(), "documented metrics no panel shows")

    def test_hosts_row_breaks_down_by_the_host_variable(self):
        """deploy/multihost labels targets with `host`: a variable picks hosts, the Hosts row splits by them."""
        variables = {v["name"]: v for v in self.dashboard["templating"]["list"]}
        self.assertIn("host", variables)
        self.assertIn("label_values(", variables["host"]["definition"])
        rows = [p for p in self.dashboard["panels"] if p["type"] == "row"]
        hosts_row = next(r for r in rows if "host" in r["title"].lower())
        after = self.dashboard["panels"][self.dashboard["panels"].index(hosts_row) + 1:]
        row_panels = after[:next((i for i, p in enumerate(after) if p["type"] == "row"), len(after))]
        self.assertTrue(row_panels)
        for panel in row_panels:
            for target in panel["targets"]:
                with self.subTest(panel=panel["title"]):
                    self.assertIn("by (host)", target["expr"])
                    self.assertIn('host=~"$host"', target["expr"])

    def test_layout(self):
        ids = [p["id"] for p in self.panels]
        self.assertEqual(len(ids), len(set(ids)), "panel ids repeat")
        cells = set()
        for panel in self.panels:
            g = panel["gridPos"]
            with self.subTest(panel=panel["title"]):
                self.assertLessEqual(g["x"] + g["w"], 24)
                area = {(x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])}
                self.assertFalse(area & cells, "overlaps another panel")
                cells |= area


class ProvisioningTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.services = compose_config()["services"]
        cls.grafana = cls.services["grafana"]
        cls.mounts = {m["source"]: m["target"] for m in volumes(cls.grafana)}

    def test_datasource_is_the_compose_prometheus(self):
        sources = load_yaml(DATASOURCES)["datasources"]
        self.assertEqual(len(sources), 1)
        self.assertEqual(sources[0]["type"], "prometheus")
        container_ports = {target for _, _, target in ports(self.services["prometheus"])}
        self.assertIn(sources[0]["url"], {f"http://prometheus:{p}" for p in container_ports})

    def test_provisioning_and_dashboards_are_mounted_where_grafana_reads_them(self):
        provisioning = os.path.dirname(os.path.dirname(DATASOURCES))
        self.assertEqual(self.mounts.get(provisioning), "/etc/grafana/provisioning")
        providers = load_yaml(DASHBOARD_PROVIDERS)["providers"]
        dashboards_dir = os.path.dirname(DASHBOARD)
        self.assertEqual([p["options"]["path"] for p in providers], [self.mounts.get(dashboards_dir)])
        home = self.grafana["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
        self.assertEqual(home, os.path.join(self.mounts[dashboards_dir], os.path.basename(DASHBOARD)))

    def test_anonymous_viewers(self):
        env = self.grafana["environment"]
        self.assertEqual(env["GF_AUTH_ANONYMOUS_ENABLED"], "true")
        self.assertEqual(env["GF_AUTH_ANONYMOUS_ORG_ROLE"], "Viewer")


if __name__ == "__main__":
    unittest.main()
