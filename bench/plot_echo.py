#!/usr/bin/env python3
"""Draws the framegate/ws ratios of one bench/results/echo-<date>.json as a
PNG bar chart next to it. Needs matplotlib (Debian: python3-matplotlib); if it
is missing, says so and exits 0, because the JSON and the table are the result.

Usage: python3 bench/plot_echo.py bench/results/echo-<date>.json [out.png]"""
import json
import math
import os
import sys


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
    rows = [r for r in result["rows"] if r.get("ratio") and r["better"] in ("higher", "lower") and r["ratio"] > 0]
    if not rows:
        print("[plot_echo] no ratios to plot", file=sys.stderr)
        return 0
    short = {"rate": "open loop", "window64": "closed 64 B", "window1k": "closed 1 KiB", "idle": "idle"}
    labels = [f"{short.get(r['workload'], r['workload'])}: {r['metric']}" for r in rows]
    # Plot "how many times better framegate is" so that right is always better.
    gains = [r["ratio"] if r["better"] == "higher" else 1.0 / r["ratio"] for r in rows]
    # Within 3% is a tie: grey, not a win or a loss.
    colors = ["#2a9d8f" if g > 1.03 else "#e76f51" if g < 0.97 else "#9e9e9e" for g in gains]
    fig, ax = plt.subplots(figsize=(10, 0.42 * len(rows) + 1.6))
    y = list(range(len(rows)))[::-1]
    ax.barh(y, gains, color=colors)
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=8)
    for yi, g in zip(y, gains):
        ax.text(g, yi, f" {g:.2f}x" if g < 100 else f" {g:.0f}x", va="center", fontsize=7)
    lo = min(gains + [1.0])
    hi = max(gains + [1.0])
    ax.set_xlim(10 ** math.floor(math.log10(lo) - 0.1), 10 ** math.ceil(math.log10(hi) + 0.3))
    ax.set_xlabel("framegate advantage over Node ws (x, log scale; > 1 = framegate better)")
    title = f"framegate --echo vs Node ws 8, {result['date'][:10]}"
    if result.get("quick"):
        title += " (quick run)"
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"[plot_echo] wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
