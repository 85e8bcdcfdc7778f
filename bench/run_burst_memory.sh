#!/usr/bin/env bash
# Memory after a burst: does a gateway's RSS fall back once the load is gone?
# For each variant, a fresh `framegate-gateway --echo` (GATEWAY_THREADS
# threads, admin listener on a free port) goes through
#   1. 15,000 idle connections held for 3 s, then closed;
#   2. a closed loop of 1,000 connections x 16 in flight x 16 KiB for 3 s
#      (reader buffers and send backlogs in every thread's pool);
#   3. SETTLE seconds of nothing,
# with its RSS sampled before, after each phase and every 5 s of the
# settling, and its pool_shed_bytes / memory_trims counters read at the end.
# The variants run one after the other in the same run: the default
# (--pool-shed-period 10) and pools that never shed (--pool-shed-period 0).
# Memory, not speed: the figures hold on a busy machine.
#
#   bench/run_burst_memory.sh          (~2 minutes)
#
# Environment: FRAMEGATE_GATEWAY_BIN (default build/bin/framegate-gateway),
# FRAMEGATE_LOADGEN_BIN (default beside it), GATEWAY_THREADS (default 2),
# SETTLE (seconds after the burst, default 30), RESULTS_DIR.
# Output: a markdown table on stdout and RESULTS_DIR/burst-memory-<date>.json.
set -euo pipefail
LOG_TAG=run_burst_memory
# shellcheck source=bench/bench_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
parse_bench_args 20 "$@"

GATEWAY=${FRAMEGATE_GATEWAY_BIN:-$ROOT/build/bin/framegate-gateway}
LOADGEN=$(bin_beside "${FRAMEGATE_LOADGEN_BIN:-}" "$GATEWAY" framegate-loadgen)
GATEWAY_THREADS=${GATEWAY_THREADS:-2}
SETTLE=${SETTLE:-30}
[[ -x "$GATEWAY" && -x "$LOADGEN" ]] || die "build the gateway and the load generator first ($GATEWAY, $LOADGEN)"
[[ "$SETTLE" =~ ^[0-9]+$ ]] || die "SETTLE must be a whole number of seconds (got '$SETTLE')"
WORK=$(mktemp -d)
# shellcheck disable=SC2034  # REDIS_PID: none here, but stop_all_on_exit (bench_lib.sh) reads it
SERVER_PID="" REDIS_PID=""
stop_all_on_exit

counter() {  # counter ADMIN_PORT NAME: a counter's value from /metrics
  curl -fsS "http://127.0.0.1:$1/metrics" | awk -v n="$2" '$1 == n {print $2}'
}

run_variant() {  # run_variant NAME PERIOD: appends one JSON line to $WORK/runs.jsonl
  local name=$1 period=$2 admin samples=() t
  "$GATEWAY" --echo --listen 127.0.0.1:0 --threads "$GATEWAY_THREADS" --admin 127.0.0.1:0 \
    --pool-shed-period "$period" >"$WORK/$name.log" 2>&1 &
  SERVER_PID=$!
  wait_listening "$WORK/$name.log" 'listening on [^ ]+:[0-9]+ with'
  PORT=$(grep -m1 -oE 'listening on [^ ]+:[0-9]+' "$WORK/$name.log" | grep -oE '[0-9]+$')
  admin=$(grep -m1 -oE 'admin listening on [^ ]+:[0-9]+' "$WORK/$name.log" | grep -oE '[0-9]+$')
  samples+=("\"start\": $(rss_kib "$SERVER_PID")")
  "$LOADGEN" --url "ws://127.0.0.1:$PORT/" --mode idle --connections 15000 --duration 3 --no-progress \
    --source-ips 127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5 >"$WORK/$name-idle.txt" 2>&1 ||
    { cat "$WORK/$name-idle.txt" >&2; die "$name: the idle phase failed"; }
  samples+=("\"after_idle\": $(rss_kib "$SERVER_PID")")
  "$LOADGEN" --url "ws://127.0.0.1:$PORT/" --mode window --connections 1000 --window 16 --size 16384 \
    --warmup 0 --duration 3 --no-progress >"$WORK/$name-burst.txt" 2>&1 ||
    { cat "$WORK/$name-burst.txt" >&2; die "$name: the burst failed"; }
  samples+=("\"after_burst\": $(rss_kib "$SERVER_PID")")
  for ((t = 5; t <= SETTLE; t += 5)); do
    sleep 5
    samples+=("\"settled_${t}s\": $(rss_kib "$SERVER_PID")")
  done
  local shed trims
  shed=$(counter "$admin" framegate_gateway_pool_shed_bytes_total)
  trims=$(counter "$admin" framegate_gateway_memory_trims_total)
  stop_server gateway
  local IFS=,
  echo "{\"variant\": \"$name\", \"pool_shed_period_s\": $period, \"rss_kib\": {${samples[*]}}, \
\"pool_shed_bytes\": ${shed:-null}, \"memory_trims\": ${trims:-null}}" >>"$WORK/runs.jsonl"
}

run_variant default 10
run_variant never 0

OUT=$(results_file burst-memory)
python3 - "$WORK/runs.jsonl" "$OUT" "$GATEWAY_THREADS" "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)" <<'PY'
import json, sys, time
runs = [json.loads(line) for line in open(sys.argv[1])]
out, threads, commit = sys.argv[2], int(sys.argv[3]), sys.argv[4]
points = list(runs[0]["rss_kib"])
print("| RSS (MiB) | " + " | ".join(points) + " | shed | trims |")
print("|---|" + "---:|" * (len(points) + 2))
for r in runs:
    cells = [f"{r['rss_kib'][p] / 1024:.1f}" for p in points]
    shed = r["pool_shed_bytes"]
    print(f"| {r['variant']} (--pool-shed-period {r['pool_shed_period_s']}) | " + " | ".join(cells) +
          f" | {(shed or 0) / 1048576:.1f} MiB | {r['memory_trims']} |")
by = {r["variant"]: r for r in runs}
last = points[-1]
kept = {v: by[v]["rss_kib"][last] - by[v]["rss_kib"]["start"] for v in by}
print(f"\nRSS above the start, {last}: default {kept['default'] / 1024:.1f} MiB, "
      f"never {kept['never'] / 1024:.1f} MiB")
json.dump({"tool": "run_burst_memory", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "commit": commit, "gateway_threads": threads, "runs": runs,
           "rss_above_start_kib": kept}, open(out, "w"), indent=2)
print(f"[run_burst_memory] results: {out}", file=sys.stderr)
PY
