#!/usr/bin/env python3
"""Draws the ratios of one bench/results/echo-<date>.json as a PNG bar chart
next to it: one panel per ratio (framegate/ws, framegate/uWS (uWS.js),
framegate/uWS native; workers/framegate, what the worker hop costs;
workers/ws), whichever the run has. Needs matplotlib
(Debian: python3-matplotlib); if it is missing, says so and exits 0, because
the JSON and the table are the result.

Usage: python3 bench/plot_echo.py bench/results/echo-<date>.json [out.png]"""
import json
import math
import os
import sys

# ratio key -> (x-axis label, panel title)
PANELS = {
    "framegate/ws": ("framegate --echo advantage over Node ws", "gateway echo vs ws"),
    "framegate/uWS": ("framegate --echo advantage over uWS.js", "gateway echo vs uWS.js (a floor)"),
    "framegate/uWS native": ("framegate --echo advantage over native uWS", "gateway echo vs uWS (C++)"),
    "workers/framegate": ("full path relative to gateway echo", "workers vs gateway echo (cost of the hop)"),
    "workers/ws": ("full path advantage over Node ws", "workers vs ws"),
}
SHORT = {"rate": "open loop", "rate50k": "open loop 50k/s", "window64": "closed 64 B", "window1k": "closed 1 KiB", "idle": "idle"}


def row_ratios(row):
    """{ratio key: value}; results files before the workers kind only have "ratio" (framegate/ws)."""
    if "ratios" in row:
        return row["ratios"]
    return {"framegate/ws": row.get("ratio")}


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    src = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.splitext(src)[0] + ".png"
    try:
        import matplotlib
        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        print("[plot_echo] matplotlib not available (apt-get install python3-matplotlib): no PNG", file=sys.stderr)
        return 0
    with open(src) as f:
        result = json.load(f)
    rows = [r for r in result["rows"] if r["better"] in ("higher", "lower")
            and any(v and v > 0 for v in row_ratios(r).values())]
    keys = [k for k in PANELS if any((row_ratios(r).get(k) or 0) > 0 for r in rows)]
    if not rows or not keys:
        print("[plot_echo] no ratios to plot", file=sys.stderr)
        return 0
    labels = [f"{SHORT.get(r['workload'], r['workload'])}: {r['metric']}" for r in rows]
    fig, axes = plt.subplots(1, len(keys), figsize=(5.2 * len(keys) + 2.4, 0.36 * len(rows) + 1.8),
                             sharey=True, squeeze=False)
    y = list(range(len(rows)))[::-1]
    for ax, key in zip(axes[0], keys):
        # Plot "how many times better" so that right is always better; a
        # missing ratio (metric not measured for that pair) is left blank.
        gains = []
        for r in rows:
            v = row_ratios(r).get(key)
            gains.append((v if r["better"] == "higher" else 1.0 / v) if v and v > 0 else None)
        present = [g for g in gains if g is not None]
        # Within 3% is a tie: grey, not a win or a loss.
        colors = ["#2a9d8f" if g and g > 1.03 else "#e76f51" if g and g < 0.97 else "#9e9e9e" for g in gains]
        ax.barh(y, [g or 0 for g in gains], color=colors)
        ax.set_xscale("log")
        ax.axvline(1.0, color="black", linewidth=0.8)
        if key == "workers/framegate":
            # the targets: closed-loop msg/s >= 0.6x, open-loop p99 <= 2x (= 0.5x here)
            for t in (0.6, 0.5):
                ax.axvline(t, color="#555555", linewidth=0.6, linestyle="--")
        for yi, g in zip(y, gains):
            if g is not None:
                ax.text(g, yi, f" {g:.2f}x" if g < 100 else f" {g:.0f}x", va="center", fontsize=7)
        lo = min(present + [1.0, 0.5])
        hi = max(present + [1.0])
        ax.set_xlim(10 ** math.floor(math.log10(lo) - 0.1), 10 ** math.ceil(math.log10(hi) + 0.3))
        ax.set_xlabel(f"{PANELS[key][0]}\n(x, log scale; > 1 = better)", fontsize=8)
        ax.set_title(PANELS[key][1], fontsize=9)
    axes[0][0].set_yticks(y)
    axes[0][0].set_yticklabels(labels, fontsize=7)
    title = f"framegate echo benchmark ratios, {result['date'][:10]}"
    if "workers" in result:
        w = result["workers"]
        title += f" (workers: gateway --threads {w.get('threads')} + {w.get('workers')} worker)"
    if result.get("quick"):
        title += " (quick run)"
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"[plot_echo] wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
