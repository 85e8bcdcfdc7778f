#!/usr/bin/env bash
# The gateway-worker link's transport, measured: a Unix stream socket (what
# the link is) against a shared-memory ring with an eventfd doorbell (issue
# #14's moonshot), over a grid of windows and sizes, in one run. Each cell
# alternates the two transports ROUNDS times and compares medians.
#
#   bench/run_link_transport.sh            # writes bench/results/link-transport-<stamp>.json
#
# env: BUILD_DIR (build), ROUNDS (3), SECONDS_PER_ROUND (2), WINDOWS ("1 16 1600"),
#      SIZES ("64 1024"), SPINS ("0 20": microseconds a ring reader looks again
#      before it sleeps), RESULTS_DIR (bench/results)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BIN=${BUILD_DIR:-$ROOT/build}/bin/framegate-link-transport-bench
[[ -x $BIN ]] || { echo "run_link_transport: $BIN not found (build the framegate-link-transport-bench target)" >&2; exit 1; }
ROUNDS=${ROUNDS:-3}
SECONDS_PER_ROUND=${SECONDS_PER_ROUND:-2}
WINDOWS=${WINDOWS:-1 16 1600}
SIZES=${SIZES:-64 1024}
SPINS=${SPINS:-0 20}
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results}
STAMP=$(date -u +%Y%m%d-%H%M%S)
RAW=$(mktemp -d "${TMPDIR:-/tmp}/framegate-link-transport.XXXXXX")
trap 'rm -rf "$RAW"' EXIT

cells=()
for window in $WINDOWS; do
  for size in $SIZES; do
    for spin in $SPINS; do
      out="$RAW/w$window-s$size-spin$spin.json"
      echo "[run_link_transport] window $window, $size B, ring spin ${spin} us" >&2
      "$BIN" --window "$window" --size "$size" --spin-us "$spin" --seconds "$SECONDS_PER_ROUND" --rounds "$ROUNDS" \
        --json "$out" | tail -1 >&2
      cells+=("$out")
    done
  done
done

mkdir -p "$RESULTS_DIR"
result="$RESULTS_DIR/link-transport-$STAMP.json"
python3 - "$result" "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)" "${cells[@]}" <<'PY'
import json, sys, datetime
out, commit, files = sys.argv[1], sys.argv[2], sys.argv[3:]
cells = [json.load(open(f)) for f in files]
json.dump({"date": datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"), "commit": commit,
           "machine": open("/proc/cpuinfo").read().count("processor\t:"), "cells": cells},
          open(out, "w"), indent=2)
print(f"{'window':>7} {'size':>6} {'spin':>5} {'socket RT/s':>12} {'ring RT/s':>12} {'ring/socket':>11} {'CPU/RT socket':>14} {'ring':>8} {'ring/socket':>11}")
for c in cells:
    s, r = c["unix-socket"], c["shm-ring"]
    print(f"{c['window']:>7} {c['size']:>6} {c['spin_us']:>5} {s['median_round_trips_per_s']:>12.0f} "
          f"{r['median_round_trips_per_s']:>12.0f} {c['ring/socket throughput']:>10.2f}x "
          f"{s['median_cpu_us_per_round_trip']:>12.3f}us {r['median_cpu_us_per_round_trip']:>6.3f}us "
          f"{c['ring/socket CPU per round trip']:>10.2f}x")
print(f"written to {out}")
PY
