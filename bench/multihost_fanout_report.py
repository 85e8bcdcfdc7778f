#!/usr/bin/env python3
"""Combines the per-run JSON files of bench/run_multihost_fanout.sh
(framegate-loadgen --mode rooms summaries over 3 simulated hosts, annotated
by the script) into one results file and prints the single-Redis vs
Redis-Cluster table, with the cluster/single ratios, and the CPU per unit of
work seen in each run (what docs/CAPACITY.md checks its model against).

Usage: multihost_fanout_report.py --out FILE [--quick 0|1] [--duration S]
                                  [--command CMD] [--env ENV] RUN.json...
A combined results file (bench/results/multihost-fanout-*.json) is accepted
as input too, to print its tables again.
"""
import argparse
import json
import os
import platform
import sys

from report_lib import fmt_ms, fmt_rate, fmt_ratio, ratio, read_runs, row, rule, utc_now

MODES = ("single", "cluster")


def cpu_of(cpu, prefix):
    """CPU seconds (user + sys) and % of one core summed over the probes whose
    name starts with prefix ("gateway@h1", "worker@h2.0", "redis3", ...)."""
    seconds = pct = 0.0
    found = False
    for name, v in cpu.items():
        if name.startswith(prefix) and isinstance(v, dict) and "user_s" in v:
            seconds += v["user_s"] + v["sys_s"]
            pct += v.get("pct", 0.0)
            found = True
    return (seconds, pct) if found else (None, None)


def per_unit_us(seconds, count):
    return seconds / count * 1e6 if seconds is not None and count else None


def summarize(run):
    """The figures of one run, or None where the run has no JSON."""
    if "error" in run and "window" not in run:
        return None
    cpu = run.get("cpu", {})
    win = run["window"]
    d = run["delivery"]
    lat = run["latency_ms"]
    s = {
        "delivered_per_s": win["deliveries_per_s"],
        "offered_per_s": run["offered_deliveries_per_s"],
        "publishes_per_s": win["publishes_per_s"],
        "delivered_pct": d["delivered_pct"],
        "holes": d.get("holes", 0),
        "duplicates": d["duplicates"],
        "reorders": d["reorders"],
        "misrouted": d["misrouted"] + d["malformed"] + d["server_errors"] + d["unexpected"],
        "p50": lat["p50"], "p99": lat["p99"], "p999": lat["p99_9"], "max": lat["max"],
        "disturbed": run.get("disturbed", False),
        "load_before": run.get("load_before"),
        "load_after": run.get("load_after"),
        "failed": run.get("failed", True) or not run.get("server_alive", False),
    }
    redis_nodes = [v.get("pct", 0.0) for k, v in cpu.items() if k.startswith("redis") and isinstance(v, dict)]
    s["cpu_redis_busiest_pct"] = max(redis_nodes) if redis_nodes else None
    for part in ("gateway", "worker", "redis", "loadgen"):
        seconds, pct = cpu_of(cpu, part)
        s[f"cpu_{part}_s"] = seconds
        s[f"cpu_{part}_pct"] = pct
    # Per unit of work: the gateways per delivery, workers and Redis per publish.
    s["gateway_us_per_delivery"] = per_unit_us(s["cpu_gateway_s"], win["deliveries"])
    s["worker_us_per_publish"] = per_unit_us(s["cpu_worker_s"], win["publishes"])
    s["redis_us_per_publish"] = per_unit_us(s["cpu_redis_s"], win["publishes"])
    servers = [v for v in (s["cpu_gateway_s"], s["cpu_worker_s"], s["cpu_redis_s"]) if v is not None]
    s["servers_us_per_delivery"] = per_unit_us(sum(servers), win["deliveries"]) if servers else None
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", default="0")
    ap.add_argument("--duration", type=float, default=None)
    ap.add_argument("--command", default="", help="the command line that produced the runs")
    ap.add_argument("--env", default="", help="the environment settings of the run")
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args()

    runs, meta = read_runs(a.runs)
    for r in runs:
        r["summary"] = summarize(r)
    by = {(r["workload"], r["redis_mode"]): r["summary"] for r in runs}
    order = list(dict.fromkeys(r["workload"] for r in runs))
    ratios = {}
    for w in order:
        s, c = by.get((w, "single")), by.get((w, "cluster"))
        if s and c:
            ratios[w] = {k: ratio(c[k], s[k]) for k in ("delivered_per_s", "p50", "p99", "servers_us_per_delivery")}

    if meta is None:
        meta = {
            "benchmark": "multihost-fanout",
            "date": utc_now(),
            "command": a.command,
            "env": a.env,
            "quick": a.quick == "1",
            "duration_s": a.duration,
            "hosts": 3,
            "machine": {"cores": os.cpu_count(), "kernel": platform.release(),
                        "loadavg_at_report": open("/proc/loadavg").read().split()[:3]},
        }
    doc = {"meta": meta, "ratios_cluster_over_single": ratios, "runs": runs}
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")

    print(row("workload", "redis", "offered/s", "delivered/s", "delivered %", "p50", "p99", "p99.9",
              "lost (holes)", "dup / reorder / bad"))
    print(rule(10))
    for w in order:
        for mode in MODES:
            m = by.get((w, mode))
            if m is None:
                continue
            mark = " (disturbed)" if m["disturbed"] else ""
            print(f"| {w}{mark} | {mode} | {fmt_rate(m['offered_per_s'])} | {fmt_rate(m['delivered_per_s'])} | "
                  f"{m['delivered_pct']:.1f}% | {fmt_ms(m['p50'])} | {fmt_ms(m['p99'])} | {fmt_ms(m['p999'])} | "
                  f"{m['holes']} | {m['duplicates']} / {m['reorders']} / {m['misrouted']} |")
        if w in ratios:
            r = ratios[w]
            print(f"| {w} | **cluster / single** | | **{fmt_ratio(r['delivered_per_s'])}** | | "
                  f"**{fmt_ratio(r['p50'])}** | **{fmt_ratio(r['p99'])}** | | | |")
    print()
    print("CPU over the measured window, % of one core (2 cores in all), and per unit of work:")
    print()
    print(row("workload", "redis", "gateways (3)", "workers (3)", "redis (all nodes / busiest)", "loadgen",
              "gateway µs/delivery", "worker µs/publish", "redis µs/publish", "servers µs/delivery"))
    print(rule(10))

    def us(v):
        return "-" if v is None else f"{v:.2f}" if v < 10 else f"{v:.0f}"

    def pct(v):
        return "-" if v is None else f"{v:.0f}%"

    for w in order:
        for mode in MODES:
            m = by.get((w, mode))
            if m is None:
                continue
            print(f"| {w} | {mode} | {pct(m['cpu_gateway_pct'])} | {pct(m['cpu_worker_pct'])} | "
                  f"{pct(m['cpu_redis_pct'])} / {pct(m['cpu_redis_busiest_pct'])} | {pct(m['cpu_loadgen_pct'])} | "
                  f"{us(m['gateway_us_per_delivery'])} | {us(m['worker_us_per_publish'])} | "
                  f"{us(m['redis_us_per_publish'])} | {us(m['servers_us_per_delivery'])} |")
    print()
    print("The workers' broker counters after each run, summed over the hosts (docs/METRICS.md);")
    print("subscriptions mid-window, per worker:")
    print()
    print(row("workload", "redis", "subscriptions (mid-window)", "gap messages", "dropped", "missed", "redirects",
              "map refreshes", "reconnects"))
    print(rule(9))
    for r in runs:
        b = broker_totals(r.get("broker_metrics"))
        if b is None:
            continue
        mid = r.get("broker_metrics_mid")
        subs = "-"
        if isinstance(mid, dict):
            subs = " / ".join(f"{(broker_totals({k: v}) or {}).get('broker_subscriptions', 0):.0f}"
                              for k, v in mid.items())
        print(row(r["workload"], r["redis_mode"], subs, *(f"{b.get(k, 0):.0f}" for k in BROKER_COUNTERS[1:])))
    return 0


# The counters of the broker table, by the metric name's tail.
BROKER_COUNTERS = ("broker_subscriptions", "broker_gap_messages_total", "broker_dropped_total",
                   "broker_missed_total", "redis_cluster_redirects_total", "redis_cluster_map_refreshes_total",
                   "broker_reconnects_total")


def broker_totals(metrics):
    """The BROKER_COUNTERS summed over every worker of a run's broker_metrics
    ({"h1:ADDR": {"framegate_worker_NAME{labels}": value}}), or None."""
    if not isinstance(metrics, dict):
        return None
    totals = {}
    for worker in metrics.values():
        for name, value in worker.items():
            tail = name.split("{", 1)[0].removeprefix("framegate_worker_")
            if tail in BROKER_COUNTERS:
                totals[tail] = totals.get(tail, 0) + value
    return totals


if __name__ == "__main__":
    sys.exit(main())
