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

from report_lib import by_magnitude, rule, sha256_16, utc_now

# Server kinds, in column order. "workers" is the full path: the gateway plus
# framegate-worker processes, each message crossing the link to a worker's /echo app.
# "uws" is uWebSockets.js (npm), "uws-native" the C++ peer of bench/peers/uws/.
PEERS = ("framegate", "workers", "ws", "uws", "uws-native")
LABELS = {"framegate": "framegate", "workers": "workers", "ws": "ws (Node)", "uws": "uWS.js (Node)",
          "uws-native": "uWS (C++)"}
# The kinds that are one process with no gateway/worker split.
SINGLE_PROCESS = ("ws", "uws", "uws-native")
# (key, numerator, denominator): the gateway against each peer, what the
# worker hop costs, and the full path against Node.
RATIOS = (("framegate/ws", "framegate", "ws"), ("framegate/uWS", "framegate", "uws"),
          ("framegate/uWS native", "framegate", "uws-native"), ("workers/framegate", "workers", "framegate"),
          ("workers/ws", "workers", "ws"))
# Printed under the table when a uWS peer ran: what its figures stand for.
UWS_NOTE = ("uWS.js (@trufflesuite/uws-js-unofficial) runs uWS's C++ core but calls JavaScript once per "
            "echoed message: in closed loop it reaches about 0.4x native uWS, so framegate/uWS here is "
            "measured against a floor, not the anchor (native uWS, shared/TARGETS.md; bench/peers/uws/ "
            "builds it). Its fan-out runs in C++ and is the anchor there (bench/run_fanout.sh).")

# (workload id, title)
WORKLOADS = [
    ("rate", "open loop {connections} conns x {size} B every {rate_per_conn_ms:g} ms ({offered:.0f} msg/s offered), {duration_s:g} s"),
    # Half the rate: at 100k/s every server saturates two cores together with
    # the load generator; 50k/s is the workload that shows tail latency.
    ("rate50k", "open loop {connections} conns x {size} B every {rate_per_conn_ms:g} ms ({offered:.0f} msg/s offered), {duration_s:g} s"),
    ("window64", "closed loop {connections} conns x {window} in flight, {size} B, {duration_s:g} s"),
    ("window1k", "closed loop {connections} conns x {window} in flight, {size} B, {duration_s:g} s"),
    ("idle", "{connections} idle connections over {sources} source IPs"),
]

# Reference figures of shared/TARGETS.md (uWebSockets on this kind of machine, 2026-11-29):
# what the worker-path checks fall back to when native uWS did not run in the same run.
UWS = {"rate_p99_ms": 20.0, "window64": 2.44e6, "window1k": 1.51e6}

# Steal (% of a core) above which a run is marked disturbed.
STEAL_LIMIT = 3.0

# The 50k/s open loop runs TAIL_ROUNDS times for the peers its checks
# compare (run_echo.sh): round 1 is "rate50k", round k "rate50k-rK".
TAIL_WORKLOAD = "rate50k"
TAIL_PEERS = ("framegate", "workers", "uws-native")
WINDOW_WORKLOADS = ("window64", "window1k")


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def worker_cpu(samples):
    """The worker processes' CPU over the sampled window: (total % of a core,
    [(id, % of a core)], window seconds), or None without samples."""
    if not samples or not samples.get("processes") or not samples.get("window_s"):
        return None
    hz = float(samples.get("clk_tck", 100))
    window = float(samples["window_s"])
    each = [(p["id"], (p["ticks_end"] - p["ticks_start"]) / hz / window * 100.0) for p in samples["processes"]]
    return sum(v for _, v in each), each, window


def metric_rows(workload, run, kind="framegate", samples=None):
    """(metric name, value, unit, better) for one loadgen JSON. For the workers
    kind the loadgen's --server-pid is the gateway; `samples` (run_echo.sh's
    sampler) adds the worker processes. A value of None means not applicable
    to this kind; the rows are the same for every kind, in table order."""
    lat = run.get("latency_us", {})
    server = run.get("server", {})
    ms = lambda us: us / 1000.0
    rate = run.get("msg_per_s", 0.0)
    per_msg = lambda pct: pct / 100.0 * 1e6 / rate if (pct is not None and rate > 0) else None
    gw_cpu = server.get("cpu_pct_of_core", 0.0)
    wk = worker_cpu(samples) if kind == "workers" else None
    wk_cpu = wk[0] if wk else None
    total_cpu = gw_cpu + wk_cpu if wk else (None if kind == "workers" else gw_cpu)
    rows = []
    if workload != "idle":
        rows += [
            ("msg/s (echoes received)", rate, "msg/s", "higher"),
            ("latency p50", ms(lat.get("p50", 0.0)), "ms", "lower"),
        ]
        if workload.startswith("rate"):
            rows.append(("latency p90", ms(lat.get("p90", 0.0)), "ms", "lower"))
        rows += [
            ("latency p99", ms(lat.get("p99", 0.0)), "ms", "lower"),
            ("latency p99.9", ms(lat.get("p99_9", 0.0)), "ms", "lower"),
            # workers kind: gateway + every worker process
            ("server CPU", total_cpu, "% of a core", "lower"),
            ("  gateway CPU", gw_cpu if kind not in SINGLE_PROCESS else None, "% of a core", "lower"),
            ("  workers CPU", wk_cpu, "% of a core", "lower"),
        ]
        # Both servers can sit at 100% of their core in a closed loop: the
        # cost of one echo is what tells them apart.
        rows += [
            ("server CPU per echo", per_msg(total_cpu), "µs", "lower"),
            ("  gateway CPU per echo", per_msg(gw_cpu) if kind not in SINGLE_PROCESS else None, "µs", "lower"),
            ("  workers CPU per echo", per_msg(wk_cpu), "µs", "lower"),
        ]
        if workload.startswith("rate"):
            rows.append(("server peak RSS (VmHWM)", server.get("hwm_kib", 0) / 1024.0, "MiB", "lower"))
            procs = (samples or {}).get("processes") if kind == "workers" else None
            conns = max(1, run.get("connections", 1))
            rows.append(("workers RSS at end of window",
                         sum(p["rss_end_kib"] for p in procs) / 1024.0 if procs else None, "MiB", "info"))
            # (end of window - before the load generator connected) / connections
            rows.append(("workers RSS growth per connection",
                         sum(p["rss_end_kib"] - p["rss_before_kib"] for p in procs) / conns if procs else None,
                         "KiB", "info"))
    else:
        rows += [
            ("connections established", run.get("open_at_end", 0), "", "higher"),
            ("server RSS per connection", server.get("rss_per_conn_kib", 0.0), "KiB", "lower"),
            ("server RSS with connections", server.get("rss_end_kib", 0) / 1024.0, "MiB", "lower"),
        ]
    rows.append(("loadgen CPU", run.get("loadgen_cpu", {}).get("pct_of_core", 0.0), "% of a core", "info"))
    if workload.startswith("rate"):
        # How late the load generator itself sent (already inside the latency figures).
        rows.append(("loadgen send lag p99", ms(run.get("send_lag_us", {}).get("p99", 0.0)), "ms", "info"))
    if workload != "idle":
        rows.append(("other processes CPU", other_cpu(run, kind, samples), "% of a core", "context"))
    return rows


def other_cpu(run, kind, samples):
    """CPU used by everything else on the machine during the window: a non-zero
    figure means another process competed for the two cores. The loadgen counts
    every process but itself and --server-pid, so the workers are taken out.
    (clamped at 0: /proc/stat and /proc/PID/stat tick at 100 Hz, so the difference can dip below 0)"""
    other = run.get("machine_cpu", {}).get("other_pct_of_core", 0.0)
    if kind == "workers":
        wk = worker_cpu(samples)
        if wk:
            other -= wk[0]
    return max(0.0, other)


def round_ids(raw, workload=TAIL_WORKLOAD):
    """The workload ids of `workload`'s rounds whose files are in `raw`, in order."""
    ids, k = [workload], 2
    while any(name.startswith(f"{workload}-r{k}.") for name in os.listdir(raw)):
        ids.append(f"{workload}-r{k}")
        k += 1
    return ids


def median(values):
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def tail_rounds(raw, peers):
    """{peer: [p99 ms of each round that has a result]} for the tail checks' peers."""
    ids = round_ids(raw)
    out = {}
    for p in peers:
        if p not in TAIL_PEERS:
            continue
        p99s = [r["latency_us"]["p99"] / 1000.0 for r in (load(os.path.join(raw, f"{wid}.{p}.json")) for wid in ids)
                if r and "p99" in r.get("latency_us", {})]
        if p99s:
            out[p] = p99s
    return out


def window_rounds(raw, peers):
    """{workload: {peer: [msg/s of each round, None where it has no result]}} for the
    closed loops run in several rounds (WINDOW_ROUNDS)."""
    out = {}
    for wid in WINDOW_WORKLOADS:
        ids = round_ids(raw, wid)
        if len(ids) < 2:
            continue
        per_peer = {}
        for p in peers:
            if p not in TAIL_PEERS:
                continue
            runs = [load(os.path.join(raw, f"{rid}.{p}.json")) for rid in ids]
            per_peer[p] = [r["msg_per_s"] if r and "msg_per_s" in r else None for r in runs]
        out[wid] = per_peer
    return out


def round_ratios(rounds, a, b):
    """a / b of each round where both ran: two runs back to back, so the machine's drift mostly cancels."""
    return [x / y for x, y in zip(rounds.get(a, []), rounds.get(b, [])) if x is not None and y]


def tail_figure(tails, peer):
    """(the p99 a check uses, how it is described): one run's, or the median of the rounds'."""
    values = tails.get(peer)
    if not values:
        return None, ""
    if len(values) == 1:
        return values[0], f"{values[0]:.2f} ms"
    m = median(values)
    return m, f"{m:.2f} ms (median of {', '.join(f'{v:.2f}' for v in values)})"


def run_problems(wid, p, r, st, samples):
    """What is wrong with one run: no result, failed echo checks, a dead server, a disturbed window."""
    if r is None:
        return [f"{wid} / {p}: no result"]
    problems = []
    if r.get("mismatches", {}).get("total", 0) or r.get("unanswered", 0):
        problems.append(f"{wid} / {p}: echo check FAILED: mismatches {r['mismatches']}, unanswered {r['unanswered']}")
    if r.get("errors", {}).get("total", 0):
        problems.append(f"{wid} / {p}: {r['errors']['total']} connection errors (first: {r.get('first_error', '')})")
    if st.get("server_alive") is False:
        problems.append(f"{wid} / {p}: the server process died" + (" (gateway or a worker)" if p == "workers" else ""))
    other = other_cpu(r, p, samples)
    if wid != "idle" and other > 25:
        problems.append(f"{wid} / {p}: DISTURBED: other processes used {other:.0f}% of a core during the window")
    # A virtual machine's host can take the cores away too (steal): no
    # process here shows it, and a few percent moves a closed loop's figure.
    steal = r.get("machine_cpu", {}).get("steal_pct_of_core", 0.0)
    if wid != "idle" and steal > STEAL_LIMIT:
        problems.append(f"{wid} / {p}: DISTURBED: the hypervisor took {steal:.1f}% of a core (steal) during the window")
    if r.get("backlog_at_end", 0):
        problems.append(f"{wid} / {p}: {r['backlog_at_end']} scheduled messages never sent (server could not keep up)")
    if p == "workers" and wid != "idle" and worker_cpu(samples) is None:
        problems.append(f"{wid} / workers: no CPU samples of the worker processes")
    return problems


def fmt(value, unit):
    if value is None:
        return "n/a"
    if unit == "msg/s" or unit == "":
        return f"{value:,.0f}"
    if unit.startswith("%"):
        return f"{value:.0f}%"
    return by_magnitude(value, ((100, 1, "{:,.0f}"), (10, 1, "{:.1f}"), (1, 1, "{:.2f}"), (0, 1, "{:.3f}")), " " + unit)


def binary_identity(path):
    """Which gateway build was measured: its hash and modification time."""
    digest = sha256_16(path)
    try:
        mtime = datetime.datetime.fromtimestamp(os.path.getmtime(path), datetime.timezone.utc)
    except OSError:
        digest = None
    return {"sha256_16": digest, "built": mtime.isoformat(timespec="seconds")} if digest else {}


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
    try:
        with open(os.path.join(here, "node_modules", "@trufflesuite", "uws-js-unofficial", "package.json")) as f:
            info["uws_js"] = json.load(f)["version"]
    except (OSError, ValueError, KeyError):
        pass
    return info


def uws_native_identity(path):
    """Which native uWS peer was measured: its hash and the checkout build.sh
    recorded beside it (BINARY.version)."""
    if not path:
        return {}
    out = {"binary": path, **binary_identity(path)}
    try:
        with open(path + ".version") as f:
            out["built_from"] = f.read().strip().splitlines()
    except OSError:
        pass
    return out


def ratio_of(a, b, better):
    if better == "context" or a is None or b is None or b <= 0 or a < 0:
        return None
    return a / b


def ratio_str(r, better):
    if better == "context":
        return ""
    if r is None:
        return "n/a"
    return f"{r:.2f}x" if r >= 0.1 else f"{r:.3f}x"


def worker_vs_uws_check(label, wid, wk, uws, ratios):
    """Through workers >= 0.5x uWS (shared/TARGETS.md), against native uWS of the same run when it
    ran (the median of the rounds' ratios with several), else against TARGETS.md's figure, which
    comes from another machine and day and is context only."""
    if len(ratios) > 1:
        r = median(ratios)
        return {"target": f"{label}: through workers >= 0.5x native uWS msg/s (same run, median of {len(ratios)} rounds)",
                "value": r, "met": r >= 0.5,
                "detail": f"{r:.3f}x (median of {', '.join(f'{x:.3f}' for x in ratios)})"}
    if uws:
        return {"target": f"{label}: through workers >= 0.5x native uWS msg/s (same run)", "value": wk / uws,
                "met": wk >= 0.5 * uws, "detail": f"{wk:,.0f} / {uws:,.0f} msg/s = {wk / uws:.3f}x"}
    ref = UWS[wid]
    return {"target": f"{label}: through workers >= 0.5x uWS ({0.5 * ref:,.0f} msg/s, shared/TARGETS.md: "
                      "another machine and day, context only)",
            "value": wk / ref, "met": wk >= 0.5 * ref, "detail": f"{wk:,.0f} msg/s = {wk / ref:.2f}x uWS"}


def target_checks(rows_by_key, tails, windows=None):
    """The worker path against the issue's targets and shared/TARGETS.md."""
    checks = []
    windows = windows or {}

    def get(wid, metric, peer):
        row = rows_by_key.get((wid, metric))
        return row["values"].get(peer) if row else None

    # Through a worker against the gateway's own echo of the same run (issue #14, shared/TARGETS.md):
    # the hop costs more per byte, so the bar is lower for 1 KiB. With several
    # rounds, the median of the rounds' ratios.
    for wid, label, need in (("window64", "closed loop 64 B", 0.6), ("window1k", "closed loop 1 KiB", 0.5)):
        fg, wk, ws = (get(wid, "msg/s (echoes received)", p) for p in ("framegate", "workers", "ws"))
        ratios = round_ratios(windows.get(wid, {}), "workers", "framegate")
        if len(ratios) > 1:
            r = median(ratios)
            checks.append({"target": f"{label}: through workers >= {need:.1f}x the gateway-only echo msg/s "
                                     f"(same run, median of {len(ratios)} rounds)",
                           "value": r, "met": r >= need,
                           "detail": f"{r:.3f}x (median of {', '.join(f'{x:.3f}' for x in ratios)})" +
                           ("" if r >= need else f" ({need / r:.3f}x short)")})
        elif fg and wk is not None:
            r = wk / fg
            checks.append({"target": f"{label}: through workers >= {need:.1f}x the gateway-only echo msg/s",
                           "value": r, "met": r >= need,
                           "detail": f"{wk:,.0f} / {fg:,.0f} msg/s = {r:.3f}x" +
                           ("" if r >= need else f" ({need / r:.3f}x short; {need * fg - wk:,.0f} msg/s missing)")})
        if wk is not None:
            checks.append(worker_vs_uws_check(label, wid, wk, get(wid, "msg/s (echoes received)", "uws-native"),
                                              round_ratios(windows.get(wid, {}), "workers", "uws-native")))
        if wk is not None and ws:
            checks.append({"target": f"{label}: through workers >= 10x ws", "value": wk / ws, "met": wk >= 10 * ws,
                           "detail": f"{wk / ws:.1f}x ws"})
    fg, wk = (get("rate", "latency p99", p) for p in ("framegate", "workers"))
    if fg and wk is not None:
        r = wk / fg
        checks.append({"target": "open loop: full-path p99 within 2x of the gateway-only p99", "value": r,
                       "met": r <= 2.0,
                       "detail": f"{wk:.2f} ms vs {fg:.2f} ms = {r:.2f}x" + ("" if r <= 2 else f" ({r / 2:.2f}x over)")})
    if wk is not None:
        uws = get("rate", "latency p99", "uws-native")
        if uws:
            checks.append({"target": "open loop: through workers p99 <= 2x native uWS (same run)", "value": wk / uws,
                           "met": wk <= 2 * uws, "detail": f"{wk:.2f} ms vs {uws:.2f} ms = {wk / uws:.2f}x"})
        else:
            ref = UWS["rate_p99_ms"]
            checks.append({"target": f"open loop: through workers p99 <= 2x uWS ({2 * ref:g} ms, shared/TARGETS.md: "
                                     "another machine and day, context only)",
                           "value": wk, "met": wk <= 2 * ref, "detail": f"{wk:.2f} ms"})
    # Issue #14, measured against the peers of the same run: with several
    # rounds, each peer's median p99 (one run's p99 here swings several-fold).
    (fg, fg_s), (wk, wk_s), (uws, uws_s) = (tail_figure(tails, p) for p in TAIL_PEERS)
    rounds = max((len(v) for v in tails.values()), default=1)
    same = "same run" if rounds == 1 else f"same run, median of {rounds} rounds"
    if fg and uws:
        checks.append({"target": f"open loop 50k/s: gateway p99 <= native uWS p99 ({same})", "value": fg / uws,
                       "met": fg <= uws, "detail": f"{fg_s} vs {uws_s} = {fg / uws:.2f}x"})
    if fg and wk is not None:
        checks.append({"target": f"open loop 50k/s: through workers p99 <= 2x the gateway's own ({same})",
                       "value": wk / fg, "met": wk <= 2 * fg, "detail": f"{wk_s} vs {fg_s} = {wk / fg:.2f}x"})
    return checks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", default="0")
    ap.add_argument("--peers", default=" ".join(PEERS))
    ap.add_argument("--gateway", default="")
    ap.add_argument("--worker", default="")
    ap.add_argument("--workers", default="1")
    ap.add_argument("--gateway-threads", default="1")
    ap.add_argument("--opcode", default="text")
    ap.add_argument("--idle-connections", default="0")
    ap.add_argument("--uws-native", default="", help="the uws-native peer's binary, if it ran")
    ap.add_argument("--placement", default="the scheduler's",
                    help="where the servers and the load generator ran (SERVER_CPUS, LOADGEN_CPUS)")
    args = ap.parse_args()
    wanted = args.peers.split()
    peers = [p for p in PEERS if p in wanted]

    result = {
        "date": utc_now(),
        "quick": args.quick == "1",
        "machine": machine_info(),
        "peers": peers,
        "framegate": {"binary": args.gateway, "threads": int(args.gateway_threads), "mode": "--echo",
                      **binary_identity(args.gateway)},
        "opcode": args.opcode,
        "placement": args.placement,
        "workloads": [],
        "rows": [],
    }
    if "workers" in peers:
        result["workers"] = {"gateway_binary": args.gateway, "threads": int(args.gateway_threads),
                             "worker_binary": args.worker, "workers": int(args.workers), "path": "/echo",
                             "worker_identity": binary_identity(args.worker)}
    if "uws-native" in peers:
        result["uws_native"] = uws_native_identity(args.uws_native)
    ratios = [(k, a, b) for k, a, b in RATIOS if a in peers and b in peers]
    lines = []
    lines.append("| workload | metric | " + " | ".join(LABELS[p] for p in peers) + " | " +
                 " | ".join(k for k, _, _ in ratios) + " |")
    lines.append(rule(2, len(peers) + len(ratios)))
    problems = []
    rows_by_key = {}
    for wid, title_fmt in WORKLOADS:
        runs = {p: load(os.path.join(args.raw, f"{wid}.{p}.json")) for p in peers}
        status = {p: load(os.path.join(args.raw, f"{wid}.{p}.status.json")) or {} for p in peers}
        samples = load(os.path.join(args.raw, f"{wid}.workers.workers.json")) if "workers" in peers else None
        expected = [p for p in peers if not (wid == "idle" and p == "workers")]
        any_run = next((runs[p] for p in expected if runs.get(p)), None)
        if not any_run:
            continue
        title = title_fmt.format(
            connections=any_run["connections"], size=any_run["size"], window=any_run["window"],
            rate_per_conn_ms=any_run["rate_per_conn_ms"], offered=any_run["offered_msg_per_s"],
            duration_s=any_run["duration_s"], sources="several")
        if wid == "idle":
            title = f"{any_run['connections']:,} idle connections, held {any_run['duration_s']:g} s"
        entry = {"id": wid, "title": title, "runs": runs, "status": status}
        if samples is not None:
            entry["worker_samples"] = samples
        result["workloads"].append(entry)
        per_peer = {p: {m[0]: m for m in metric_rows(wid, runs[p], p, samples) if m[1] is not None}
                    if runs.get(p) else {} for p in peers}
        names = [m[0] for m in metric_rows(wid, any_run, "workers", samples)
                 if any(m[0] in per_peer[p] for p in peers)]
        first = True
        for name in names:
            meta = next(per_peer[p][name] for p in peers if name in per_peer[p])
            unit, better = meta[2], meta[3]
            values = {p: (per_peer[p][name][1] if name in per_peer[p] else None) for p in peers}
            rr = {k: ratio_of(values[a], values[b], better) for k, a, b in ratios}
            row = {"workload": wid, "title": title, "metric": name.strip(), "unit": unit, "better": better,
                   "values": values, "ratios": rr,
                   # the two-peer layout of earlier results files
                   "framegate": values.get("framegate"), "ws": values.get("ws"), "ratio": rr.get("framegate/ws")}
            if "workers" in peers:
                row["workers"] = values.get("workers")
            result["rows"].append(row)
            rows_by_key[(wid, name.strip())] = row
            cells = " | ".join(fmt(values[p], unit) for p in peers)
            rcells = " | ".join(ratio_str(rr[k], better) for k, _, _ in ratios)
            lines.append(f"| {title if first else ''} | {name} | {cells} | {rcells} |")
            first = False
        for p in expected:
            problems += run_problems(wid, p, runs.get(p), status.get(p, {}), samples)
    # The extra rounds of the 50k/s open loop and of the closed loops: checked
    # like every run, and their figures go into the round checks.
    extra = [wid for w in (TAIL_WORKLOAD, *WINDOW_WORKLOADS) for wid in round_ids(args.raw, w)[1:]]
    for wid in extra:
        for p in (p for p in peers if p in TAIL_PEERS):
            problems += run_problems(wid, p, load(os.path.join(args.raw, f"{wid}.{p}.json")),
                                     load(os.path.join(args.raw, f"{wid}.{p}.status.json")) or {},
                                     load(os.path.join(args.raw, f"{wid}.workers.workers.json")) if p == "workers"
                                     else None)
    tails = tail_rounds(args.raw, peers)
    if any(len(v) > 1 for v in tails.values()):
        result["tail_rounds"] = {"workload": TAIL_WORKLOAD, "p99_ms": tails,
                                 "median_p99_ms": {p: median(v) for p, v in tails.items()}}
    windows = window_rounds(args.raw, peers)
    if windows:
        result["window_rounds"] = {
            wid: {"msg_per_s": per_peer,
                  "workers_over_framegate": round_ratios(per_peer, "workers", "framegate"),
                  "framegate_over_uws_native": round_ratios(per_peer, "framegate", "uws-native"),
                  "workers_over_uws_native": round_ratios(per_peer, "workers", "uws-native")}
            for wid, per_peer in windows.items()}
    result["problems"] = problems
    result["targets"] = target_checks(rows_by_key, tails, windows) if "workers" in peers else []
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")

    m = result["machine"]
    print(f"## Echo benchmark, {result['date']}{' (QUICK: smoke-test sizes)' if result['quick'] else ''}")
    print()
    line = (f"Machine: {m.get('cores')} cores ({m.get('cpu', '?')}), {m.get('memory_gib', '?')} GiB, Linux {m.get('kernel')}; ")
    if "ws" in peers:
        line += f"node {m.get('node', '?')}, ws {m.get('ws', '?')}{' + bufferutil' if m.get('bufferutil') else ''}; "
    if "uws" in peers:
        line += f"uWS.js {m.get('uws_js', '?')}; "
    if "uws-native" in peers:
        built = result.get("uws_native", {}).get("built_from") or ["?"]
        line += f"uWS (C++) {built[0].removeprefix('uWebSockets ')}; "
    if "framegate" in peers:
        line += f"framegate: gateway --echo --threads {args.gateway_threads}; "
    if "workers" in peers:
        line += (f"workers: gateway --threads {args.gateway_threads} + {args.workers} framegate-worker "
                 f"(/echo app; server CPU = gateway + workers); ")
    line += f"{args.opcode} messages; loadgen 1 thread; CPU placement: {args.placement}."
    print(line)
    print()
    if "uws" in peers:
        print(f"Note: {UWS_NOTE}")
        print()
    print("\n".join(lines))
    print()
    if "tail_rounds" in result:
        tails = result["tail_rounds"]["p99_ms"]
        print("Open loop 50k/s, p99 of each round (the tail checks take the median):")
        for p, values in tails.items():
            print(f"- {LABELS[p]}: {', '.join(f'{v:.2f}' for v in values)} ms; median "
                  f"{result['tail_rounds']['median_p99_ms'][p]:.2f} ms")
        print()
    for wid, w in result.get("window_rounds", {}).items():
        print(f"{wid}, msg/s of each round (the worker-path check takes the median of the rounds' ratios):")
        for p, values in w["msg_per_s"].items():
            print(f"- {LABELS[p]}: {', '.join('-' if v is None else f'{v:,.0f}' for v in values)}")
        for key, what in (("workers_over_framegate", "through workers / gateway"),
                          ("framegate_over_uws_native", "gateway / native uWS"),
                          ("workers_over_uws_native", "through workers / native uWS")):
            if w[key]:
                print(f"- {what}: {', '.join(f'{x:.3f}' for x in w[key])}; median {median(w[key]):.3f}")
        print()
    if result["targets"]:
        print("Worker path against its targets:")
        for c in result["targets"]:
            print(f"- {'met' if c['met'] else 'NOT MET'}: {c['target']}: {c['detail']}")
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
