#!/usr/bin/env python3
"""Combines the per-run JSON files of bench/run_fanout.sh (framegate-loadgen
--mode rooms summaries, annotated by the script) into one results file and
prints the side-by-side markdown tables on stdout.

Usage: fanout_report.py --out FILE [--quick 0|1] [--duration S]
                        [--loadgen-threads N] [--workers N] [--variants V] RUN.json...
A combined results file (bench/results/fanout-*.json) is accepted as input
too, to print its tables again.
"""
import argparse
import json
import os
import platform
import sys

from report_lib import fmt_ms, fmt_rate, fmt_ratio, ratio, read_runs, row, rule, utc_now

WORKLOADS = {
    "1room-100k": "1 room, 1,000 members, 10 publishers x 10/s (100k/s offered)",
    "1room-1m": "1 room, 1,000 members, 10 publishers x 100/s (1M/s offered)",
    "100rooms": "100 rooms x 10 members, 100 publishers x 100/s (100k/s offered)",
}
# The one-process uWS peers, each against framegate in its own ratio line.
UWS_PEERS = {"uws": "uWS", "uws-native": "uWS native"}
UWS_NOTE = ("uWS rooms are in-memory topics of one process: a publish is parsed once (in JavaScript for uws, "
            "uWS.js from npm), then uWS's C++ pub/sub writes it to every member, so uws stands for uWS fan-out "
            "(unlike its echo, a floor that pays a JavaScript call per message). framegate goes through Redis "
            "and its workers. framegate / uWS: delivered/s ratio (higher is better) and p50, p99 ratios "
            "(framegate over uWS, lower is better).")
TARGETS = {  # TARGETS.md, fan-out: framegate target through Redis
    "1room-100k": {"delivered_per_s": 100_000, "p99_ms": 20},
    "1room-1m": {"delivered_per_s": 1_000_000, "p99_ms": 25},
    "100rooms": {"delivered_per_s": 100_000, "p99_ms": 15},
}


def ratio_cell(a, b):
    """a / b as a table cell ("-" when b is missing or zero)."""
    return fmt_ratio(ratio(a, b))


def summarize(run):
    """The figures of one run, or None where the run has no JSON."""
    if "error" in run and "window" not in run:
        return None
    cpu = run.get("cpu", {})
    def pct(name):
        v = cpu.get(name)
        return v.get("pct") if isinstance(v, dict) else None
    workers = [k for k in cpu if k.startswith("worker")]
    worker_pcts = [pct(k) for k in workers if pct(k) is not None]
    d = run["delivery"]
    lat = run["latency_ms"]
    writes = run.get("gateway_writes") or {}
    return {
        "delivered_per_s": run["window"]["deliveries_per_s"],
        "offered_per_s": run["offered_deliveries_per_s"],
        "delivered_pct": d["delivered_pct"],
        "undelivered": d["undelivered"],
        "duplicates": d["duplicates"],
        "holes": d.get("holes", 0),
        "reorders": d["reorders"],
        "misrouted": d["misrouted"] + d["malformed"] + d["server_errors"] + d["unexpected"],
        "p50": lat["p50"], "p99": lat["p99"], "p999": lat["p99_9"], "max": lat["max"],
        "cpu_gateway": pct("gateway"),
        "cpu_primary": pct("primary"),
        "cpu_server": pct("server"),
        "cpu_workers": sum(worker_pcts) if worker_pcts else None,
        "cpu_workers_each": worker_pcts,
        "cpu_redis": pct("redis"),
        "cpu_loadgen": pct("loadgen"),
        "with_offset": d.get("with_offset"),
        "disturbed": run.get("disturbed", False),
        "load_before": run.get("load_before"),
        "failed": run.get("failed", True) or not run.get("server_alive", False),
        # framegate's gateway counters over the run (run_fanout.sh scrapes them)
        "messages_per_send": ratio(writes.get("messages_sent"), writes.get("socket_writes")),
        "slices_cut": ratio(writes.get("write_slices_cut"), writes.get("write_slices")),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", default="0")
    ap.add_argument("--duration", type=float, default=None)
    ap.add_argument("--loadgen-threads", type=int, default=None)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--gateway-threads", type=int, default=None, help="framegate's gateway I/O threads (0: one per core)")
    ap.add_argument("--variants", default="", help="FRAMEGATE_VARIANTS of the run")
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args()

    runs, _ = read_runs(a.runs)
    for r in runs:
        r["summary"] = summarize(r)

    doc = {
        "benchmark": "fanout-through-redis",
        "date": utc_now(),
        "quick": a.quick == "1",
        "duration_s": a.duration,
        "workers": a.workers,
        "gateway_threads": a.gateway_threads,
        "loadgen_threads": a.loadgen_threads,
        "framegate_variants": a.variants,
        "machine": {"cores": os.cpu_count(), "kernel": platform.release(), "python": platform.python_version()},
        "targets": TARGETS,
        "runs": runs,
    }
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")

    # A framegate run of a FRAMEGATE_VARIANTS variant is its own column: "framegate-NAME".
    def label(r):
        return f"{r['server']}-{r['variant']}" if r.get("variant") else r["server"]

    by = {(r["workload"], label(r)): r["summary"] for r in runs}
    order = [w for w in WORKLOADS if any(k[0] == w for k in by)]
    labels = list(dict.fromkeys(label(r) for r in runs))
    servers = ([s for s in labels if s.startswith("framegate")] + [s for s in labels if s == "node"] +
               [s for s in UWS_PEERS if s in labels])
    variants = [s for s in servers if s.startswith("framegate-")]

    if any(s in UWS_PEERS for s in servers):
        print(f"Note: {UWS_NOTE}")
        print()
    print(row("workload", "server", "delivered/s", "delivered %", "p50", "p99", "p99.9", "max", "lost (holes)",
              "dup / reorder / bad"))
    print(rule(10))
    for w in order:
        for s in servers:
            m = by.get((w, s))
            if m is None:
                print(f"| {w} | {s} | no result | | | | | | | |")
                continue
            mark = " (disturbed)" if m["disturbed"] else ""
            print(f"| {w}{mark} | {s} | {fmt_rate(m['delivered_per_s'])} | {m['delivered_pct']:.1f}% | "
                  f"{fmt_ms(m['p50'])} | {fmt_ms(m['p99'])} | {fmt_ms(m['p999'])} | {fmt_ms(m['max'])} | "
                  f"{m['holes']} | {m['duplicates']} / {m['reorders']} / {m['misrouted']} |")
        # Every framegate column (each variant) gets its own ratios against the peers.
        for s in (s for s in servers if s.startswith("framegate")):
            f, n = by.get((w, s)), by.get((w, "node"))
            if f and n:
                thr = f["delivered_per_s"] / n["delivered_per_s"] if n["delivered_per_s"] else float("inf")
                p99 = n["p99"] / f["p99"] if f["p99"] else float("inf")
                print(f"| {w} | **{s} / node** | **{thr:.2f}x** | | | **{p99:.1f}x lower** | | | | |")
            for peer, name in UWS_PEERS.items():
                u = by.get((w, peer))
                if f and u:
                    print(f"| {w} | **{s} / {name}** | **{ratio_cell(f['delivered_per_s'], u['delivered_per_s'])}** "
                          f"| | **{ratio_cell(f['p50'], u['p50'])}** | **{ratio_cell(f['p99'], u['p99'])}** | | | | |")
        base = by.get((w, variants[0])) if variants else None
        for v in variants[1:]:
            m = by.get((w, v))
            if base and m and base["delivered_per_s"] and base["p99"]:
                thr = m["delivered_per_s"] / base["delivered_per_s"]
                p99 = m["p99"] / base["p99"]
                print(f"| {w} | **{v[10:]} / {variants[0][10:]}** | **{thr:.2f}x** | | | **{p99:.2f}x** | | | | |")
    print()
    print("CPU over the measured window, % of one core (2 cores in all):")
    print()
    print(row("workload", "server", "gateway / primary / server", "workers (each)", "redis-server", "loadgen",
              "total"))
    print(rule(7))
    for w in order:
        for s in servers:
            m = by.get((w, s))
            if m is None:
                continue
            front = (m["cpu_gateway"] if s.startswith("framegate") else
                     m["cpu_server"] if s in UWS_PEERS else m["cpu_primary"])
            each = "+".join(f"{v:.0f}" for v in m["cpu_workers_each"])
            parts = [v for v in (front, m["cpu_workers"], m["cpu_redis"], m["cpu_loadgen"]) if v is not None]
            workers = f"{m['cpu_workers'] or 0:.0f}% ({each})" if m["cpu_workers_each"] else "-"  # uWS: none
            print(f"| {w} | {s} | {front if front is not None else 0:.0f}% | {workers} | "
                  f"{m['cpu_redis'] or 0:.0f}% | {m['cpu_loadgen'] or 0:.0f}% | {sum(parts):.0f}% |")
    with_writes = [(w, s) for w in order for s in servers if (by.get((w, s)) or {}).get("messages_per_send")]
    if with_writes:
        print()
        print("framegate's client writes over the run (gateway /metrics): messages per send to a client socket, and "
              "the share of turn-end write slices (250 us, longer after a cut) that ran out of time with clients left for the next turn:")
        print()
        print(row("workload", "server", "messages per send", "slices cut"))
        print(rule(4))
        for w, s in with_writes:
            m = by[(w, s)]
            cut = f"{m['slices_cut'] * 100:.0f}%" if m["slices_cut"] is not None else "-"
            print(f"| {w} | {s} | {m['messages_per_send']:.2f} | {cut} |")
    print()
    print("Targets (TARGETS.md, framegate through Redis):")
    for w, s in ((w, s) for w in order for s in servers if s.startswith("framegate")):
        f = by.get((w, s))
        t = TARGETS[w]
        if f is None:
            continue
        ok_rate = f["delivered_per_s"] >= 0.97 * t["delivered_per_s"]
        ok_p99 = f["p99"] <= t["p99_ms"]
        which = f" ({s})" if variants else ""
        print(f"- {w}{which}: {fmt_rate(f['delivered_per_s'])}/s (target {fmt_rate(t['delivered_per_s'])}/s: "
              f"{'met' if ok_rate else 'missed'}), p99 {fmt_ms(f['p99'])} (target <= {t['p99_ms']} ms: "
              f"{'met' if ok_p99 else 'missed'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
