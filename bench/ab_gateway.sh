#!/usr/bin/env bash
# A/B of two gateway builds on the same machine, alternating run by run so
# that drift of a shared VM hits both alike: closed-loop echo (one gateway
# thread), 100 connections x 16 in flight, 64 B and 1 KiB, PAIRS pairs each.
# Prints msg/s per run and the gateway's CPU per echo (in the load
# generator's measured window). Used to tell a code regression from a
# slower day, or one option from another.
#
#   bench/ab_gateway.sh OLD_GATEWAY_BIN NEW_GATEWAY_BIN
#   ECHO_PATH=workers bench/ab_gateway.sh OLD_GATEWAY_BIN NEW_GATEWAY_BIN
#   OLD_ARGS="--io-uring off" bench/ab_gateway.sh build/bin/framegate-gateway build/bin/framegate-gateway
#
# ECHO_PATH=gateway (default): the gateway answers itself (--echo).
# ECHO_PATH=workers: the path through one worker's /echo app, each gateway
# with the framegate-worker binary next to it (the same build), on a
# private link directory.
# PAIRS: pairs per size (default 3).
# OLD_ARGS / NEW_ARGS: more gateway options for each side (default none).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OLD=${1:?old gateway binary}
NEW=${2:?new gateway binary}
ECHO_PATH=${ECHO_PATH:-gateway}
PAIRS=${PAIRS:-3}
read -r -a OLD_EXTRA <<<"${OLD_ARGS:-}"
read -r -a NEW_EXTRA <<<"${NEW_ARGS:-}"
[[ "$PAIRS" =~ ^[1-9][0-9]*$ ]] || { echo "PAIRS must be a positive number (got '$PAIRS')" >&2; exit 2; }
case "$ECHO_PATH" in
  gateway | workers) ;;
  *) echo "ECHO_PATH must be gateway or workers (got '$ECHO_PATH')" >&2; exit 2 ;;
esac
if [[ "$ECHO_PATH" == workers ]]; then
  for bin in "$OLD" "$NEW"; do
    [[ -x "$(dirname "$bin")/framegate-worker" ]] || { echo "no framegate-worker next to $bin" >&2; exit 2; }
  done
fi
LG=${FRAMEGATE_LOADGEN_BIN:-$ROOT/build/bin/framegate-loadgen}
WORK=$(mktemp -d)
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
run() { # bin size [gateway options...]
  local bin=$1 size=$2 path=/ port out
  shift 2
  rm -rf "$WORK/links" && : >"$WORK/gateway.log" && : >"$WORK/worker.log"
  if [[ "$ECHO_PATH" == workers ]]; then
    "$bin" --listen 127.0.0.1:0 --threads 1 --admin off --link-dir "$WORK/links" "$@" >"$WORK/gateway.log" 2>&1 &
    PIDS=($!)
    "$(dirname "$bin")/framegate-worker" --id w1 --link-dir "$WORK/links" >"$WORK/worker.log" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 100); do grep -q "registered with gateway" "$WORK/worker.log" && break; sleep 0.1; done
    path=/echo
  else
    "$bin" --echo --listen 127.0.0.1:0 --threads 1 --admin off "$@" >"$WORK/gateway.log" 2>&1 &
    PIDS=($!)
  fi
  for _ in $(seq 50); do grep -q "listening on" "$WORK/gateway.log" && break; sleep 0.1; done
  port=$(grep -oE "listening on [^ ]+:[0-9]+" "$WORK/gateway.log" | head -1 | grep -oE "[0-9]+$")
  out=$("$LG" --url "ws://127.0.0.1:$port$path" --mode window --connections 100 --window 16 --size "$size" \
    --warmup 1 --duration 8 --server-pid "${PIDS[0]}" 2>&1)
  kill "${PIDS[@]}"
  wait "${PIDS[@]}" 2>/dev/null || true
  PIDS=()
  # "<msg/s> (<gateway us per echo>)"
  awk '/measured/ { if (match($0, /\([0-9]+ msg\/s\)/)) rate = substr($0, RSTART + 1, RLENGTH - 8) }
       /server pid/ { for (i = 1; i < NF; ++i) if ($i == "=") { pct = $(i + 1); sub(/%/, "", pct) } }
       END { printf("%s (%.2f us)", rate, (rate > 0) ? pct * 1e4 / rate : 0) }' <<<"$out"
}
for size in 64 1024; do
  for ((i = 0; i < PAIRS; ++i)); do
    echo "size=$size old=$(run "$OLD" "$size" "${OLD_EXTRA[@]}") new=$(run "$NEW" "$size" "${NEW_EXTRA[@]}")"
  done
done
