"""deploy/prometheus/alerts.yml: Prometheus accepts it and each alert
behaves as its promtool unit tests (alerts_test.yml) say; every alert has
such tests, one where it fires and one where it stays quiet; each queries
only metrics docs/METRICS.md documents, as their types allow, with labels
they have; each has a severity, a summary, a description and a section of
docs/ALERTS.md; and Prometheus's config and docker-compose.yml load it."""

from __future__ import annotations

import os
import re
import unittest

import metric_refs
from deploy_files import (METRICS_MD, PROMETHEUS_ALERTS as ALERTS, PROMETHEUS_CONFIG, REPO_ROOT, alert_rules,
                          compose_config, load_yaml, run, tool, volumes)

ALERTS_TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "alerts_test.yml")
ALERTS_MD = os.path.join(REPO_ROOT, "docs", "ALERTS.md")
SEVERITIES = {"critical", "warning", "info"}
ANNOTATIONS = {"summary", "description", "runbook"}
# Where compose's Prometheus reads its config (docker-compose.yml's --config.file).
CONTAINER_CONFIG_DIR = "/etc/prometheus"


class AlertRulesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.rules = alert_rules()
        cls.table = metric_refs.metrics_md_table(METRICS_MD)

    def test_promtool_accepts_the_rules(self):
        result = run([tool("promtool"), "check", "rules", ALERTS])
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertGreaterEqual(len(self.rules), 20, "alerts.yml was not read")

    def test_promtool_unit_tests_pass(self):
        result = run([tool("promtool"), "test", "rules", ALERTS_TESTS])
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_every_alert_has_a_firing_and_a_quiet_case(self):
        firing, quiet = set(), set()
        for group in load_yaml(ALERTS_TESTS)["tests"]:
            for case in group.get("alert_rule_test", []):
                (firing if case.get("exp_alerts") else quiet).add(case["alertname"])
        names = {rule["alert"] for rule in self.rules}
        self.assertEqual(names - firing, set(), "alerts no test sees firing")
        self.assertEqual(names - quiet, set(), "alerts no test sees quiet")
        self.assertEqual((firing | quiet) - names, set(), "tests of alerts that do not exist")

    def test_names_are_unique_and_each_has_a_severity_and_its_annotations(self):
        names = [rule["alert"] for rule in self.rules]
        self.assertEqual(len(names), len(set(names)), "an alert name repeats")
        for rule in self.rules:
            with self.subTest(alert=rule["alert"]):
                self.assertRegex(rule["alert"], r"^Framegate[A-Z][A-Za-z]+$")
                self.assertIn(rule.get("labels", {}).get("severity"), SEVERITIES)
                self.assertEqual(set(rule.get("annotations", {})), ANNOTATIONS)
                self.assertEqual(rule["annotations"]["runbook"], f"docs/ALERTS.md#{rule['alert'].lower()}")

    def test_docs_have_a_section_for_every_alert_and_no_other(self):
        with open(ALERTS_MD, encoding="utf-8") as f:
            sections = set(re.findall(r"^### (Framegate\w+)\s*$", f.read(), re.MULTILINE))
        self.assertEqual(sections, {rule["alert"] for rule in self.rules})

    def test_queries_documented_metrics_as_their_types_allow(self):
        for rule in self.rules:
            e = metric_refs.Expression(rule["expr"], self.table)
            with self.subTest(alert=rule["alert"]):
                self.assertTrue(e.names(), "the rule selects no series")
                for position in e.positions:
                    name = e.tokens[position].text
                    if name in metric_refs.PROMETHEUS_SERIES:
                        continue
                    metric = e.metric(name)
                    self.assertIsNotNone(metric, f"{name} is not in docs/METRICS.md")
                    self.assertEqual(e.matcher_labels(position) - e.labels_of(name), set(),
                                     f"{name} is matched on labels it does not have")
                    if metric.type == "gauge":
                        self.assertFalse(e.in_rate(position), f"rate() of the gauge {name}")
                    else:
                        self.assertTrue(e.in_rate(position), f"the counter or histogram {name} outside rate()")
                    if name.endswith("_bucket"):
                        self.assertIn("histogram_quantile", e.expr)

    def test_grouping_and_templates_name_labels_the_series_have(self):
        for rule in self.rules:
            e = metric_refs.Expression(rule["expr"], self.table)
            available = set.intersection(*(e.labels_of(n) for n in e.names()))
            with self.subTest(alert=rule["alert"]):
                for keyword, labels in e.clauses:
                    self.assertEqual(set(labels) - available, set(), f"{keyword} (...) names labels the series lack")
                used = {label for text in rule["annotations"].values()
                        for label in re.findall(r"\$labels\.(\w+)", text)}
                self.assertEqual(used - e.output_labels(available), set(), "annotations name labels the alert lacks")


class RulesLoadedTest(unittest.TestCase):
    def test_prometheus_config_names_the_rules_beside_it(self):
        files = load_yaml(PROMETHEUS_CONFIG)["rule_files"]
        here = os.path.dirname(PROMETHEUS_CONFIG)
        self.assertEqual([os.path.join(here, f) for f in files], [ALERTS])
        result = run([tool("promtool"), "check", "config", PROMETHEUS_CONFIG])
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("1 rule files found", result.stdout + result.stderr)

    def test_compose_mounts_the_rules_where_the_config_looks(self):
        prometheus = compose_config()["services"]["prometheus"]
        config = next(a for a in prometheus["command"] if a.startswith("--config.file="))
        self.assertEqual(os.path.dirname(config.split("=", 1)[1]), CONTAINER_CONFIG_DIR)
        mounts = {v["target"]: v["source"] for v in volumes(prometheus)}
        for name in load_yaml(PROMETHEUS_CONFIG)["rule_files"]:
            target = os.path.join(CONTAINER_CONFIG_DIR, name)
            self.assertEqual(mounts.get(target), ALERTS, f"{target} is not mounted from alerts.yml")


if __name__ == "__main__":
    unittest.main()
