#!/usr/bin/env python3
"""Combines the per-run JSON files of bench/run_echo.sh into one results file
(bench/results/echo-<date>.json) and prints the side-by-side markdown table.
Standard library only."""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

PEERS = ("framegate", "ws")

# (workload id, title)
WORKLOADS = [
    ("rate", "open loop {connections} conns x {size} B every {rate_per_conn_ms:g} ms ({offered:.0f} msg/s offered), {duration_s:g} s"),
    ("window64", "closed loop {connections} conns x {window} in flight, {size} B, {duration_s:g} s"),
    ("window1k", "closed loop {connections} conns x {window} in flight, {size} B, {duration_s:g} s"),
    ("idle", "{connections} idle connections over {sources} source IPs"),
]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def metric_rows(workload, run):
    """(metric name, value, unit, better) for one loadgen JSON."""
    lat = run.get("latency_us", {})
    server = run.get("server", {})
    ms = lambda us: us / 1000.0
    rows = []
    if workload != "idle":
        rows += [
            ("msg/s (echoes received)", run.get("msg_per_s", 0.0), "msg/s", "higher"),
            ("latency p50", ms(lat.get("p50", 0.0)), "ms", "lower"),
        ]
        if workload == "rate":
            rows.append(("latency p90", ms(lat.get("p90", 0.0)), "ms", "lower"))
        rows += [
            ("latency p99", ms(lat.get("p99", 0.0)), "ms", "lower"),
            ("latency p99.9", ms(lat.get("p99_9", 0.0)), "ms", "lower"),
            ("server CPU", server.get("cpu_pct_of_core", 0.0), "% of a core", "lower"),
        ]
        # Both servers can sit at 100% of their core in a closed loop: the
        # cost of one echo is what tells them apart.
        rate = run.get("msg_per_s", 0.0)
        per_msg = server.get("cpu_pct_of_core", 0.0) / 100.0 * 1e6 / rate if rate > 0 else 0.0
        rows.append(("server CPU per echo", per_msg, "µs", "lower"))
        if workload == "rate":
            rows.append(("server peak RSS (VmHWM)", server.get("hwm_kib", 0) / 1024.0, "MiB", "lower"))
    else:
        rows += [
            ("connections established", run.get("open_at_end", 0), "", "higher"),
            ("server RSS per connection", server.get("rss_per_conn_kib", 0.0), "KiB", "lower"),
            ("server RSS with connections", server.get("rss_end_kib", 0) / 1024.0, "MiB", "lower"),
        ]
    rows.append(("loadgen CPU", run.get("loadgen_cpu", {}).get("pct_of_core", 0.0), "% of a core", "info"))
    if workload == "rate":
        # How late the load generator itself sent (already inside the latency figures).
        rows.append(("loadgen send lag p99", ms(run.get("send_lag_us", {}).get("p99", 0.0)), "ms", "info"))
    if workload != "idle":
        # CPU used by everything else on the machine during the window: a
        # non-zero figure means another process competed for the two cores.
        # (clamped at 0: /proc/stat and /proc/PID/stat tick at 100 Hz, so the difference can dip below 0)
        other = max(0.0, run.get("machine_cpu", {}).get("other_pct_of_core", 0.0))
        rows.append(("other processes CPU", other, "% of a core", "context"))
    return rows


def fmt(value, unit):
    if value is None:
        return "n/a"
    if unit == "msg/s" or unit == "":
        return f"{value:,.0f}"
    if unit.startswith("%"):
        return f"{value:.0f}%"
    if abs(value) >= 100:
        return f"{value:,.0f} {unit}"
    if abs(value) >= 10:
        return f"{value:.1f} {unit}"
    if abs(value) >= 1:
        return f"{value:.2f} {unit}"
    return f"{value:.3f} {unit}"


def binary_identity(path):
    """Which gateway build was measured: its hash and modification time."""
    import hashlib
    try:
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()[:16]
        mtime = datetime.datetime.fromtimestamp(os.path.getmtime(path), datetime.timezone.utc)
        return {"sha256_16": digest, "built": mtime.isoformat(timespec="seconds")}
    except OSError:
        return {}


def machine_info():
    info = {"cores": os.cpu_count(), "kernel": platform.release()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            info["memory_gib"] = round(int(f.readline().split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    for name, cmd in (("node", ["node", "--version"]),):
        try:
            info[name] = subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        with open(os.path.join(here, "node_modules", "ws", "package.json")) as f:
            info["ws"] = json.load(f)["version"]
        info["bufferutil"] = os.path.isdir(os.path.join(here, "node_modules", "bufferutil"))
    except (OSError, ValueError, KeyError):
        pass
    return info


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", default="0")
    ap.add_argument("--gateway", default="")
    ap.add_argument("--gateway-threads", default="1")
    ap.add_argument("--opcode", default="text")
    ap.add_argument("--idle-connections", default="0")
    args = ap.parse_args()

    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "quick": args.quick == "1",
        "machine": machine_info(),
        "framegate": {"binary": args.gateway, "threads": int(args.gateway_threads), "mode": "--echo",
                      **binary_identity(args.gateway)},
        "opcode": args.opcode,
        "workloads": [],
        "rows": [],
    }
    lines = []
    lines.append("| workload | metric | framegate | ws (Node) | framegate/ws |")
    lines.append("|---|---|---:|---:|---:|")
    problems = []
    for wid, title_fmt in WORKLOADS:
        runs = {p: load(os.path.join(args.raw, f"{wid}.{p}.json")) for p in PEERS}
        status = {p: load(os.path.join(args.raw, f"{wid}.{p}.status.json")) or {} for p in PEERS}
        any_run = runs["framegate"] or runs["ws"]
        if not any_run:
            continue
        title = title_fmt.format(
            connections=any_run["connections"], size=any_run["size"], window=any_run["window"],
            rate_per_conn_ms=any_run["rate_per_conn_ms"], offered=any_run["offered_msg_per_s"],
            duration_s=any_run["duration_s"], sources="several")
        if wid == "idle":
            title = f"{any_run['connections']:,} idle connections, held {any_run['duration_s']:g} s"
        result["workloads"].append({"id": wid, "title": title, "runs": runs, "status": status})
        per_peer = {p: dict((m[0], m) for m in metric_rows(wid, runs[p])) if runs[p] else {} for p in PEERS}
        names = [m[0] for m in metric_rows(wid, any_run)]
        first = True
        for name in names:
            fg = per_peer["framegate"].get(name)
            ws = per_peer["ws"].get(name)
            unit = (fg or ws)[2]
            better = (fg or ws)[3]
            fv = fg[1] if fg else None
            wv = ws[1] if ws else None
            ratio = (fv / wv) if (fv is not None and wv and wv > 0 and fv >= 0 and better != "context") else None
            result["rows"].append({"workload": wid, "title": title, "metric": name, "unit": unit, "better": better,
                                   "framegate": fv, "ws": wv, "ratio": ratio})
            ratio_s = "" if better == "context" else "n/a" if ratio is None else (f"{ratio:.2f}x" if ratio >= 0.1 else f"{ratio:.3f}x")
            lines.append(f"| {title if first else ''} | {name} | {fmt(fv, unit)} | {fmt(wv, unit)} | {ratio_s} |")
            first = False
        for p in PEERS:
            r = runs[p]
            st = status[p]
            if r is None:
                problems.append(f"{wid} / {p}: no result")
                continue
            if r.get("mismatches", {}).get("total", 0) or r.get("unanswered", 0):
                problems.append(f"{wid} / {p}: echo check FAILED: mismatches {r['mismatches']}, unanswered {r['unanswered']}")
            if r.get("errors", {}).get("total", 0):
                problems.append(f"{wid} / {p}: {r['errors']['total']} connection errors (first: {r.get('first_error', '')})")
            if st.get("server_alive") is False:
                problems.append(f"{wid} / {p}: the server process died")
            other = r.get("machine_cpu", {}).get("other_pct_of_core", 0.0)
            if wid != "idle" and other > 25:
                problems.append(f"{wid} / {p}: DISTURBED: other processes used {other:.0f}% of a core during the window")
            if r.get("backlog_at_end", 0):
                problems.append(f"{wid} / {p}: {r['backlog_at_end']} scheduled messages never sent (server could not keep up)")
    result["problems"] = problems
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")

    m = result["machine"]
    print(f"## Echo benchmark, {result['date']}{' (QUICK: smoke-test sizes)' if result['quick'] else ''}")
    print()
    print(f"Machine: {m.get('cores')} cores ({m.get('cpu', '?')}), {m.get('memory_gib', '?')} GiB, Linux {m.get('kernel')}; "
          f"node {m.get('node', '?')}, ws {m.get('ws', '?')}{' + bufferutil' if m.get('bufferutil') else ''}; "
          f"framegate --threads {args.gateway_threads}; {args.opcode} messages; loadgen 1 thread.")
    print()
    print("\n".join(lines))
    print()
    if problems:
        print("Problems:")
        for p in problems:
            print(f"- {p}")
    else:
        print("All echoes checked: no mismatch, no unanswered message, no connection error.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
