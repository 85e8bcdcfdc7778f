#!/usr/bin/env bash
# A/B of two gateway builds on the same machine, alternating run by run so
# that drift of a shared VM hits both alike: closed-loop echo (--echo, one
# thread), 100 connections x 16 in flight, 64 B and 1 KiB, three pairs each.
# Prints msg/s per run. Used to tell a code regression from a slower day.
#
#   bench/ab_gateway.sh OLD_GATEWAY_BIN NEW_GATEWAY_BIN
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OLD=${1:?old gateway binary}
NEW=${2:?new gateway binary}
LG=${FRAMEGATE_LOADGEN_BIN:-$ROOT/build/bin/framegate-loadgen}
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
run() { # bin size
  local bin=$1 size=$2
  "$bin" --echo --listen 127.0.0.1:0 --threads 1 --admin off > "$LOG" 2>&1 &
  local pid=$!
  for _ in $(seq 50); do grep -q "listening on" "$LOG" && break; sleep 0.1; done
  local port
  port=$(grep -oE "listening on [^ ]+:[0-9]+" "$LOG" | head -1 | grep -oE "[0-9]+$")
  local out
  out=$("$LG" --url "ws://127.0.0.1:$port/" --mode window --connections 100 --window 16 --size "$size" \
    --warmup 1 --duration 8 2>&1 | grep "measured")
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  echo "$out" | grep -oE "received [0-9]+ \([0-9]+ msg/s\)" | grep -oE "\([0-9]+" | tr -d '('
}
for size in 64 1024; do
  for _ in 1 2 3; do
    echo "size=$size old=$(run "$OLD" "$size") new=$(run "$NEW" "$size")"
  done
done
