#!/usr/bin/env python3
"""The report of bench/run_soak.sh: from the sampler's JSON lines and the
loads' summaries in --work, each process's RSS before the load, once it
settled, at its end and after it, the line fitted to it from --settle
seconds into the load to the load's end (what still grows), and the loads'
own checks. Prints a markdown table, writes --json with every sample and,
with matplotlib, --plot. Exit code 1 if a load failed, a process died, or
connections were still counted open after the load. Standard library only
(matplotlib optional)."""
import argparse
import glob
import json
import os
import platform
import sys

from report_lib import row, rule, utc_now

# A process "grows" when the fitted line rises by more than this over the
# measured part of the soak: RSS moves by a few hundred KiB as allocator
# pools and socket buffers come and go, which is not a trend.
FLAT_KIB = 1024
FLAT_SHARE = 0.01


def read_samples(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def fit_slope(points):
    """Least-squares slope of (t, y) points, in y per t; None for fewer than 3."""
    if len(points) < 3:
        return None
    n = len(points)
    mt = sum(t for t, _ in points) / n
    my = sum(y for _, y in points) / n
    var = sum((t - mt) ** 2 for t, _ in points)
    return sum((t - mt) * (y - my) for t, y in points) / var if var else None


def process_rows(samples, load_start, settle, duration):
    """Per process: RSS before, settled, at the end, after, max; the fitted growth."""
    names = list(samples[0]["rss_kib"])
    before = [s for s in samples if s["t"] < load_start]
    measured = [s for s in samples if load_start + settle <= s["t"] <= load_start + duration]
    after = [s for s in samples if s["t"] > load_start + duration + 5]
    out = {}
    for name in names:
        def rss(s):
            return s["rss_kib"].get(name)
        series = [(s["t"] - load_start, rss(s)) for s in measured if rss(s) is not None]
        slope = fit_slope(series)  # KiB per second
        span = (series[-1][0] - series[0][0]) if series else 0
        growth = slope * span if slope is not None else None
        settled = series[0][1] if series else None
        gone = any(rss(s) is None for s in samples)
        flat = growth is not None and growth <= max(FLAT_KIB, FLAT_SHARE * (settled or 0))
        out[name] = {
            "before_kib": rss(before[-1]) if before else None,
            "settled_kib": settled,
            "end_kib": series[-1][1] if series else None,
            "after_kib": rss(after[-1]) if after else None,
            "max_kib": max((rss(s) or 0) for s in samples),
            "slope_kib_per_min": round(slope * 60, 2) if slope is not None else None,
            "growth_kib": round(growth, 1) if growth is not None else None,
            "measured_s": round(span, 1),
            "verdict": "died" if gone else ("flat" if flat else "grows"),
        }
    return out


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        return {"error": f"{path}: {e}"}


def load_summaries(work):
    """The loads' summaries and one line each: (name, what it did, errors)."""
    idle, rooms, echo = (load_json(os.path.join(work, f"{n}.json")) for n in ("idle", "rooms", "echo"))
    churns = [load_json(p) for p in sorted(glob.glob(os.path.join(work, "churn-*.json")))]
    lines = []

    def failed(d):
        return "error" in d or d.get("failed", False) or d.get("errors", {}).get("total", 0) > 0

    lines.append(("idle", f"{idle.get('established', 0):,} connections held {idle.get('duration_s', 0):g} s",
                  failed(idle), idle.get("errors", {}).get("first_error") or idle.get("error", "")))
    dl = rooms.get("delivery", {})
    lines.append(("rooms", f"{dl.get('publishes', 0):,} publishes, {dl.get('delivered', 0):,} deliveries "
                  f"({dl.get('delivered_pct', 0):g}% of expected)", failed(rooms),
                  rooms.get("errors", {}).get("first_error") or rooms.get("error", "")))
    lines.append(("echo", f"{echo.get('received_total', 0):,} echoes of {echo.get('size', 0)} B, "
                  f"p99 {echo.get('latency_us', {}).get('p99', 0) / 1000:.2f} ms", failed(echo),
                  echo.get("errors", {}).get("first_error") or echo.get("error", "")))
    handshakes = sum(c.get("run", {}).get("handshakes", 0) for c in churns)
    churn_errors = [c.get("errors", {}).get("first_error") or c.get("error", "") for c in churns if failed(c)]
    lines.append(("churn", f"{handshakes:,} connections opened and closed in {len(churns)} storms",
                  bool(churn_errors), churn_errors[0] if churn_errors else ""))
    return {"idle": idle, "rooms": rooms, "echo": echo, "churn": churns}, lines, handshakes


def fmt_mib(kib):
    return "-" if kib is None else f"{kib / 1024:.1f}"


def plot(samples, load_start, settle, duration, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(no plot: matplotlib is not installed; Debian: python3-matplotlib)", file=sys.stderr)
        return None
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(9, 6), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    t = [(s["t"] - load_start) / 60 for s in samples]
    for name in samples[0]["rss_kib"]:
        ax.plot(t, [(s["rss_kib"].get(name) or 0) / 1024 for s in samples], label=name)
    ax.axvspan(settle / 60, duration / 60, color="grey", alpha=0.1, label="measured for growth")
    ax.set_ylabel("RSS (MiB)")
    ax.legend(loc="upper left", fontsize=8)
    ax.set_title("framegate soak: RSS per process (bench/run_soak.sh)")
    ax2.plot(t, [s["connections"] or 0 for s in samples], color="black")
    ax2.set_ylabel("open connections")
    ax2.set_xlabel("minutes since the load started")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--work", required=True)
    ap.add_argument("--settle", type=float, required=True)
    ap.add_argument("--load-start", type=float, required=True)
    ap.add_argument("--duration", type=float, required=True)
    ap.add_argument("--idle", type=int, required=True)
    ap.add_argument("--churns", type=int, required=True)
    ap.add_argument("--workers", type=int, required=True)
    ap.add_argument("--gateway-threads", type=int, required=True)
    ap.add_argument("--framegate-args", default="")
    ap.add_argument("--commit", default=None, help="the commit the soak's binaries were built from")
    ap.add_argument("--json", required=True)
    ap.add_argument("--plot")
    args = ap.parse_args()

    samples = read_samples(os.path.join(args.work, "samples.jsonl"))
    if not samples:
        sys.exit("soak_report: no samples")
    procs = process_rows(samples, args.load_start, args.settle, args.duration)
    loads, load_lines, churned = load_summaries(args.work)
    peak_conns = max((s["connections"] or 0) for s in samples)
    conns_after = samples[-1]["connections"]
    gw = procs.get("gateway", {})
    per_conn = None
    if gw.get("settled_kib") is not None and gw.get("before_kib") is not None and peak_conns:
        per_conn = (gw["settled_kib"] - gw["before_kib"]) / peak_conns

    print(f"### Soak: {args.duration / 60:.3g} minutes, growth measured from minute {args.settle / 60:.3g}\n")
    print(row("process", "RSS before (MiB)", "settled", "end", "after the load", "growth measured", "slope",
              "verdict"))
    print(rule(1, 7))
    for name, p in procs.items():
        growth = "-" if p["growth_kib"] is None else f"{p['growth_kib']:+,.0f} KiB"
        slope = "-" if p["slope_kib_per_min"] is None else f"{p['slope_kib_per_min']:+,.1f} KiB/min"
        print(row(name, fmt_mib(p["before_kib"]), fmt_mib(p["settled_kib"]), fmt_mib(p["end_kib"]),
                  fmt_mib(p["after_kib"]), growth, slope, p["verdict"]))
    print(f"\n'flat': the fitted line rises by at most {FLAT_KIB} KiB or {FLAT_SHARE:.0%} of the settled RSS "
          "over the measured minutes.")
    if per_conn is not None:
        print(f"The gateway held up to {peak_conns:,} connections ({args.idle:,} idle): "
              f"{per_conn:.3f} KiB of RSS per connection once settled (buffers of the busy ones included).")
    if churned and gw.get("growth_kib") is not None:
        print(f"{churned:,} connections churned: {max(gw['growth_kib'], 0) * 1024 / churned:.2f} B of the gateway's "
              "growth per churned connection.")
    print()
    print(row("load", "what it did", "checks"))
    print(rule(3))
    problems = []
    for name, what, bad, why in load_lines:
        print(row(name, what, f"failed: {why}" if bad else "ok"))
        if bad:
            problems.append(f"the {name} load failed: {why}")
    for name, p in procs.items():
        if p["verdict"] == "died":
            problems.append(f"{name} died during the soak")
    if conns_after:
        problems.append(f"{conns_after} connections still counted open after the load")
    for p in problems:
        print(f"\n**{p}**")

    result = {
        "meta": {"date": utc_now(), "commit": args.commit, "command": "bench/run_soak.sh",
                 "machine": {"cores": os.cpu_count(), "kernel": platform.release()},
                 "duration_s": args.duration, "settle_s": args.settle, "idle_connections": args.idle,
                 "storms": args.churns, "workers": args.workers, "gateway_threads": args.gateway_threads,
                 "framegate_args": args.framegate_args, "flat_kib": FLAT_KIB, "flat_share": FLAT_SHARE},
        "processes": procs, "peak_connections": peak_conns, "connections_after": conns_after,
        "gateway_kib_per_connection": round(per_conn, 3) if per_conn is not None else None,
        "churned_connections": churned, "problems": problems, "loads": loads,
        "samples": [dict(s, t=round(s["t"] - args.load_start, 2)) for s in samples],
    }
    if args.plot:
        result["plot"] = plot(samples, args.load_start, args.settle, args.duration, args.plot) and \
            os.path.basename(args.plot)
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
