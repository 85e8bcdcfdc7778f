#!/usr/bin/env python3
"""Combines the per-run JSON files of bench/run_deflate.sh (framegate-loadgen
summaries, annotated by the script) into one results file and prints the
markdown tables on stdout: one per workload, the server kinds side by side,
then the ratios that answer "what does deflate cost and save".

Usage: deflate_report.py --out FILE [--quick 0|1] [--gateway BIN] RUN.json...
A combined results file (bench/results/deflate-*.json) is accepted as input
too, to print its tables again.
"""
import argparse
import json
import os
import platform
import sys

from report_lib import by_magnitude, read_runs, row, rule, sha256_16, utc_now

WORKLOADS = {
    "seed": "seed workload: 1,000 connections x 256 B JSON text every 10 ms (100k msg/s offered), echo",
    "broadcast": "JSON broadcast: 1 KiB JSON to 1,000 members (1 room, 10 publishers x 10/s, 100k deliveries/s)",
    "idle": "idle connections (deflate negotiated where on)",
}


def fmt(v, unit=""):
    if v is None:
        return "-"
    if unit == "%":
        return f"{v:.0f}%"
    if unit == "x":
        return f"{v:.2f}x" if v >= 0.01 else f"{v:.2g}x"
    suffix = unit and " " + unit
    return by_magnitude(v, ((1e6, 1e6, "{:.2f}M"), (1e4, 1e3, "{:.1f}k"), (100, 1, "{:.0f}"), (10, 1, "{:.1f}"),
                            (0, 1, "{:.2f}")), suffix)


def per(a, b):
    return a / b if a is not None and b else None


def wire_figures(bytes_in, bytes_out, compressed_in, compressed_out, secs, messages):
    """What went over the sockets in the window: the same rows for echoes and deliveries."""
    return {
        "wire_in_mb_s": per(bytes_in, secs * 1e6),
        "wire_out_mb_s": per(bytes_out, secs * 1e6),
        "wire_in_bytes_per_msg": per(bytes_in, messages),
        "compressed_in": compressed_in,
        "compressed_out": compressed_out,
    }


def echo_figures(r):
    s = r.get("server", {})
    secs = r.get("measured_s") or 0
    got = r.get("received") or 0
    cpu_s = (s.get("cpu_user_s", 0) + s.get("cpu_sys_s", 0)) if s else None
    lat = r.get("latency_us", {})
    return {
        "throughput": r.get("msg_per_s"),
        "p50_ms": lat.get("p50", 0) / 1000 if lat.get("count") else None,
        "p99_ms": lat.get("p99", 0) / 1000 if lat.get("count") else None,
        "server_cpu_pct": s.get("cpu_pct_of_core"),
        "server_cpu_us_per_msg": per(cpu_s * 1e6 if cpu_s is not None else None, got),
        "loadgen_cpu_pct": r.get("loadgen_cpu", {}).get("pct_of_core"),
        "other_cpu_pct": r.get("machine_cpu", {}).get("other_pct_of_core"),
        **wire_figures(r.get("wire_bytes_in"), r.get("wire_bytes_out"), r.get("compressed_in"), r.get("compressed_out"),
                       secs, got),
        "rss_per_conn_kib": s.get("rss_per_conn_kib"),
        "rss_end_mib": s.get("rss_end_kib", 0) / 1024 if s else None,
        "connections": r.get("established"),
        "ok": r.get("loadgen_exit") == 0 and r.get("server_alive", False),
    }


def broadcast_figures(r):
    cpu = r.get("cpu", {})
    procs = {k: v for k, v in cpu.items() if k != "loadgen" and isinstance(v, dict)}
    server_pct = sum(v.get("pct", 0) for v in procs.values()) if procs else None
    w = r.get("window", {})
    secs = w.get("seconds") or 0
    delivered = w.get("deliveries") or 0
    wire = r.get("wire", {})
    lat = r.get("latency_ms", {})
    gateway = procs.get("gateway")
    members = r.get("config", {}).get("members") or 0
    rss_growth = None
    if gateway and r.get("gateway_rss_before_kib"):
        rss_growth = (gateway["rss_kib"] - r["gateway_rss_before_kib"]) / members if members else None
    worker_pct = sum(v.get("pct", 0) for k, v in procs.items() if k.startswith("worker"))
    return {
        "throughput": w.get("deliveries_per_s"),
        "delivered_pct": r.get("delivery", {}).get("delivered_pct"),
        "p50_ms": lat.get("p50"),
        "p99_ms": lat.get("p99"),
        "server_cpu_pct": server_pct,
        "gateway_cpu_pct": gateway.get("pct") if gateway else None,
        "workers_cpu_pct": worker_pct if procs else None,
        "redis_cpu_pct": procs.get("redis", {}).get("pct"),
        "server_cpu_us_per_msg": per(server_pct * secs * 1e4 if server_pct is not None else None, delivered),
        "loadgen_cpu_pct": cpu.get("loadgen", {}).get("pct"),
        **wire_figures(wire.get("bytes_in"), wire.get("bytes_out"), wire.get("compressed_in"),
                       wire.get("compressed_out"), secs, delivered),
        "rss_per_conn_kib": rss_growth,
        "rss_end_mib": sum(v.get("rss_kib", 0) for k, v in procs.items() if k != "redis") / 1024 if procs else None,
        "ok": r.get("loadgen_exit") == 0 and r.get("server_alive", False) and not r.get("failed", True),
    }


ROWS = {
    "seed": [("throughput", "msg/s received", ""), ("p50_ms", "latency p50", "ms"), ("p99_ms", "latency p99", "ms"),
             ("server_cpu_pct", "server CPU (% of a core)", "%"), ("server_cpu_us_per_msg", "server CPU per echo", "µs"),
             ("loadgen_cpu_pct", "loadgen CPU", "%"), ("other_cpu_pct", "other processes CPU", "%"),
             ("wire_in_mb_s", "wire server→clients", "MB/s"), ("wire_out_mb_s", "wire clients→server", "MB/s"),
             ("wire_in_bytes_per_msg", "wire bytes per echo (incl. headers)", "B"),
             ("compressed_in", "echoes that came compressed", ""), ("compressed_out", "sends compressed by clients", ""),
             ("rss_per_conn_kib", "server RSS growth per connection", "KiB"), ("rss_end_mib", "server RSS", "MiB")],
    "broadcast": [("throughput", "deliveries/s", ""), ("delivered_pct", "delivered", "%"),
                  ("p50_ms", "latency p50", "ms"), ("p99_ms", "latency p99", "ms"),
                  ("server_cpu_pct", "server CPU, all processes (% of a core)", "%"),
                  ("gateway_cpu_pct", "  gateway", "%"), ("workers_cpu_pct", "  workers", "%"),
                  ("redis_cpu_pct", "  redis", "%"), ("server_cpu_us_per_msg", "server CPU per delivery", "µs"),
                  ("loadgen_cpu_pct", "loadgen CPU", "%"), ("wire_in_mb_s", "wire server→members", "MB/s"),
                  ("wire_in_bytes_per_msg", "wire bytes per delivery (incl. headers)", "B"),
                  ("compressed_in", "deliveries that came compressed", ""),
                  ("rss_per_conn_kib", "gateway RSS growth per member", "KiB"),
                  ("rss_end_mib", "server RSS, all processes but redis", "MiB")],
    "idle": [("connections", "connections established", ""),
             ("rss_per_conn_kib", "server RSS per idle connection", "KiB"), ("rss_end_mib", "server RSS", "MiB")],
}
# (numerator kind, denominator kind, what it says)
RATIOS = {
    "seed": [("framegate+deflate", "framegate", "framegate: deflate on (threshold 1 KiB) / off"),
             ("framegate+deflate-all", "framegate", "framegate: every message compressed / off"),
             ("ws+deflate", "ws", "ws: perMessageDeflate on / off"),
             ("ws+deflate-all", "ws", "ws: every message compressed / off"),
             ("framegate+deflate", "ws+deflate", "deflate on: framegate / ws"),
             ("framegate+deflate-all", "ws+deflate-all", "every message compressed: framegate / ws")],
    "broadcast": [("framegate+deflate", "framegate", "framegate: deflate on / off"),
                  ("framegate+takeover", "framegate+deflate", "framegate: context takeover / compress once"),
                  ("node+deflate", "node", "Node cluster: perMessageDeflate on / off"),
                  ("framegate+deflate", "node+deflate", "deflate on: framegate / Node cluster")],
    "idle": [("framegate+deflate", "framegate", "framegate: deflate negotiated / not"),
             ("ws+deflate", "ws", "ws: deflate negotiated / not"),
             ("framegate+deflate", "ws+deflate", "deflate negotiated: framegate / ws")],
}
RATIO_METRICS = ["throughput", "p99_ms", "server_cpu_pct", "server_cpu_us_per_msg", "wire_in_bytes_per_msg",
                 "rss_per_conn_kib"]


def tables(runs):
    out = []
    for wl, title in WORKLOADS.items():
        mine = [r for r in runs if r.get("workload") == wl]
        if not mine:
            continue
        figures = {r["kind"]: (broadcast_figures(r) if wl == "broadcast" else echo_figures(r)) for r in mine}
        kinds = [r["kind"] for r in mine]
        out.append(f"\n### {title}\n")
        out.append(row("metric", *kinds))
        out.append(rule(1, len(kinds)))
        for key, label, unit in ROWS[wl]:
            out.append(row(label, *(fmt(figures[k].get(key), unit) for k in kinds)))
        out.append(row("checks (echo/delivery, errors, server alive)",
                       *("ok" if figures[k]["ok"] else "**FAILED**" for k in kinds)))
        disturbed = [r["kind"] for r in mine if r.get("disturbed")]
        if disturbed:
            out.append(f"\nStarted with the load average at or above 1.0 (disturbed): {', '.join(disturbed)}.")
        ratio_rows = [(a, b, what) for a, b, what in RATIOS[wl] if a in figures and b in figures]
        if ratio_rows:
            metrics = [(key, label) for key, label, _ in ROWS[wl] if key in RATIO_METRICS]
            out.append("\n" + row("ratio", *(label for _, label in metrics)))
            out.append(rule(1, len(metrics)))
            for a, b, what in ratio_rows:
                cells = []
                for key, _ in metrics:
                    x, y = figures[a].get(key), figures[b].get(key)
                    cells.append(fmt(x / y, "x") if x is not None and y else "-")
                out.append(row(what, *cells))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--quick", default="0")
    ap.add_argument("--gateway")
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args()
    runs, meta = read_runs(a.runs)
    if meta is None:
        meta = {"date_utc": utc_now(), "quick": a.quick == "1",
                "machine": f"{platform.node()} {platform.machine()} {os.cpu_count()} cpus",
                "kernel": platform.release(), "gateway_sha256": sha256_16(a.gateway) if a.gateway else None}
    text = tables(runs)
    print(f"Run of {meta['date_utc']}{' (quick)' if meta.get('quick') else ''}, gateway sha256 "
          f"{meta.get('gateway_sha256')}")
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"meta": meta, "runs": runs, "markdown": text}, f, indent=1)
    return 0 if all(r.get("loadgen_exit") == 0 and r.get("server_alive") for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
