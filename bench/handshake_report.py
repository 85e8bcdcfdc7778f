#!/usr/bin/env python3
"""Combines the per-run JSON files of bench/run_handshake.sh (framegate-loadgen
--mode storm summaries, annotated by the script) into one results file and
prints the markdown tables on stdout: handshakes per second of each kind
(no key, HS256, ES256), each round and the median over rounds, as ratios to
the no-key case, with the gateway's and the load generator's CPU.

Usage: handshake_report.py --out FILE [--quick 0|1] [--clients N] [--tokens N]
                           [--gateway-threads N] [--gateway BIN] RUN.json...
A combined results file (bench/results/handshake-*.json) is accepted as
input too, to print its tables again.
"""
import argparse
import json
import os
import platform
import statistics
import sys

from report_lib import by_magnitude, read_runs, row, rule, sha256_16, utc_now

KINDS = {"none": "no key", "hs256": "HS256 (--jwt-secret-file)", "es256": "ES256 (--jwt-public-key-file)"}


def fmt_rate(v):
    return by_magnitude(v, ((1e3, 1e3, "{:.1f}k"), (0, 1, "{:.0f}")))


def us(v):
    return "-" if v is None else f"{v:.0f} µs"


def summarize(run):
    """The figures of one run, or None where the run has no JSON."""
    if "window" not in run:
        return None
    cpu = run.get("cpu", {})
    def pct(name):
        v = cpu.get(name)
        return v.get("pct") if isinstance(v, dict) else None
    lat = run["latency_ms"]
    rate = run["window"]["handshakes_per_s"]
    gw = pct("gateway")
    return {
        # The gateway's CPU per handshake (µs): what verification adds, and
        # less sensitive than the rate to what else runs on the machine.
        "gateway_us_per_handshake": gw * 1e4 / rate if gw is not None and rate else None,
        "handshakes_per_s": run["window"]["handshakes_per_s"],
        "p50": lat["p50"], "p99": lat["p99"],
        "errors": run["errors"]["total"],
        "cpu_gateway": pct("gateway"),
        "cpu_loadgen": pct("loadgen"),
        "disturbed": run.get("disturbed", False),
        "load_before": run.get("load_before"),
        "failed": run.get("failed", True) or not run.get("server_alive", False),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", default="0")
    ap.add_argument("--clients", type=int, default=None)
    ap.add_argument("--tokens", type=int, default=None)
    ap.add_argument("--gateway-threads", type=int, default=None)
    ap.add_argument("--gateway", default=None)
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args()

    runs, meta = read_runs(a.runs)
    for r in runs:
        r["summary"] = summarize(r)
    if meta is None:
        meta = {
            "benchmark": "handshake-storm",
            "date": utc_now(),
            "quick": a.quick == "1",
            "clients": a.clients,
            "tokens": a.tokens,
            "gateway_threads": a.gateway_threads,
            "gateway_sha256_16": sha256_16(a.gateway) if a.gateway else None,
            "machine": {"cores": os.cpu_count(), "kernel": platform.release(), "loadavg_at_report":
                        open("/proc/loadavg").read().split()[:3]},
        }
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump({"meta": meta, "runs": runs}, f, indent=1)
        f.write("\n")

    kinds = [k for k in KINDS if any(r.get("kind") == k for r in runs)]
    rounds = sorted({r.get("round", 1) for r in runs})
    by = {(r.get("round", 1), r["kind"]): r["summary"] for r in runs}

    print(row("round", "gateway", "handshakes/s", "vs no key", "p50 (connect to 101)", "p99", "gateway CPU",
              "gateway CPU per handshake", "loadgen CPU", "load before", "errors"))
    print(rule(2, 9))
    for rd in rounds:
        base = by.get((rd, "none"))
        for k in kinds:
            m = by.get((rd, k))
            if m is None:
                print(row(rd, KINDS[k], "no result", "", "", "", "", "", "", ""))
                continue
            ratio = f"{m['handshakes_per_s'] / base['handshakes_per_s']:.2f}x" if base and base["handshakes_per_s"] else "-"
            mark = " (disturbed)" if m["disturbed"] else ""
            print(row(rd, KINDS[k] + mark, fmt_rate(m["handshakes_per_s"]), ratio, f"{m['p50']:.2f} ms",
                      f"{m['p99']:.2f} ms", f"{m['cpu_gateway'] or 0:.0f}%", us(m["gateway_us_per_handshake"]),
                      f"{m['cpu_loadgen'] or 0:.0f}%",
                      m["load_before"], m["errors"]))
    print()
    print("Median over the rounds:")
    print()
    print(row("gateway", "handshakes/s", "vs no key", "gateway CPU", "gateway CPU per handshake", "vs no key",
              "loadgen CPU"))
    print(rule(1, 6))
    med = {}
    for k in kinds:
        ms = [by[(rd, k)] for rd in rounds if by.get((rd, k))]
        if ms:
            med[k] = {f: statistics.median(m[f] or 0 for m in ms) for f in ("handshakes_per_s", "cpu_gateway",
                                                                           "gateway_us_per_handshake", "cpu_loadgen")}
    for k, m in med.items():
        base = med.get("none")
        ratio = f"**{m['handshakes_per_s'] / base['handshakes_per_s']:.2f}x**" if base and base["handshakes_per_s"] else "-"
        cost = "-"
        if base and base["gateway_us_per_handshake"]:
            cost = f"{m['gateway_us_per_handshake'] / base['gateway_us_per_handshake']:.2f}x"
        print(row(KINDS[k], fmt_rate(m["handshakes_per_s"]), ratio, f"{m['cpu_gateway']:.0f}%",
                  us(m["gateway_us_per_handshake"]), cost, f"{m['cpu_loadgen']:.0f}%"))
    return 1 if any(r["summary"] is None or r["summary"]["failed"] for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
