"""deploy/prometheus/prometheus.yml: valid for a real Prometheus
(`promtool check config`), and discovering through Docker DNS exactly the
framegate containers docker-compose.yml runs, on their admin ports."""

from __future__ import annotations

import unittest

from deploy_files import (PROMETHEUS_CONFIG, admin_port, compose_config, load_yaml, run, services_answering, tool,
                          volumes)

# One job per binary, named after it (the dashboard's panels label by job).
JOBS = {"framegate-gateway", "framegate-worker"}


class PrometheusConfigTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.config = load_yaml(PROMETHEUS_CONFIG)
        cls.services = compose_config("scale-out")["services"]

    def test_promtool_accepts_it(self):
        result = run([tool("promtool"), "check", "config", PROMETHEUS_CONFIG])
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_every_framegate_container_is_scraped_on_its_admin_port(self):
        jobs = {job["job_name"]: job for job in self.config["scrape_configs"]}
        self.assertEqual(set(jobs), JOBS)
        covered = set()
        for job_name, job in jobs.items():
            self.assertEqual(job.get("metrics_path", "/metrics"), "/metrics")
            for sd in job["dns_sd_configs"]:
                self.assertEqual(sd["type"], "A")
                for name in sd["names"]:
                    matched = services_answering(name, self.services)
                    self.assertTrue(matched, f"job {job_name}: no compose service answers to {name!r}")
                    for service_name in matched:
                        with self.subTest(job=job_name, service=service_name):
                            service = self.services[service_name]
                            self.assertEqual(service.get("command", [None])[0], job_name)
                            self.assertEqual(admin_port(service), sd["port"])
                    covered |= matched
        framegate = {s for s, service in self.services.items() if service.get("command", [None])[0] in JOBS}
        self.assertEqual(framegate - covered, set(), "framegate services no job discovers")

    def test_compose_mounts_this_file_as_the_config(self):
        prometheus = self.services["prometheus"]
        flag = next(a for a in prometheus["command"] if a.startswith("--config.file="))
        target = flag.split("=", 1)[1]
        mounts = [v for v in volumes(prometheus) if v["target"] == target]
        self.assertEqual([m["source"] for m in mounts], [PROMETHEUS_CONFIG])


if __name__ == "__main__":
    unittest.main()
