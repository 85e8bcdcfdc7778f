#!/usr/bin/env bash
# Where a room message is compressed: by the gateway once per Send (workers
# without --publish-deflate) or once per publish by the publishing worker
# (--publish-deflate), alternating run by run so that drift of a shared VM
# hits both alike. `framegate up` (gateway --deflate, 2 workers, a private
# redis-server per run), 100 rooms x 10 members that all negotiate
# permessage-deflate, 30 publishers x 100/s of ~1.2 KiB JSON (30k
# deliveries/s: below saturation on 2 cores). Prints, per run, deliveries/s,
# latency and each process's CPU (the load generator's probes).
#
#   bench/ab_publish_deflate.sh            # ROUNDS (2) pairs, GATEWAY_THREADS (1), DURATION (10 s)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${BUILD_DIR:-$ROOT/build}/bin
ROUNDS=${ROUNDS:-2}
GATEWAY_THREADS=${GATEWAY_THREADS:-1}
DURATION=${DURATION:-10}
WORK=$(mktemp -d /tmp/ab-publish-deflate.XXXXXX)
UP_PID="" REDIS_PID=""
cleanup() {
  [[ -n "$UP_PID" ]] && kill -INT "$UP_PID" 2>/dev/null && wait "$UP_PID" 2>/dev/null
  [[ -n "$REDIS_PID" ]] && kill "$REDIS_PID" 2>/dev/null && wait "$REDIS_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
child() { ps --ppid "$UP_PID" -o pid=,comm= | awk -v c="$1" '$2 ~ c {print $1}' | sed -n "${2}p"; }

run() { # LABEL [WORKER OPTION...]
  local label=$1
  shift
  local redis_port port log=$WORK/up.log
  redis_port=$(free_port)
  port=$(free_port)
  redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 &
  REDIS_PID=$!
  sleep 0.5
  : >"$log"
  # Options framegate up does not know reach the gateway and the workers as FRAMEGATE_*.
  FRAMEGATE_THREADS=$GATEWAY_THREADS "$BIN/framegate" up --listen "127.0.0.1:$port" --workers 2 \
    --redis "redis://127.0.0.1:$redis_port" --admin off --worker-admin off --run-dir "$WORK/run" --deflate "$@" \
    >"$log" 2>&1 &
  UP_PID=$!
  for _ in $(seq 100); do grep -q "ready" "$log" && break; sleep 0.1; done
  sleep 2
  "$BIN/framegate-loadgen" --url "ws://127.0.0.1:$port/rooms" --mode rooms --rooms 100 --members 1000 \
    --publishers 30 --publish-rate 100 --publish-size 1200 --deflate --duration "$DURATION" --no-progress \
    --probe-pid "gateway=$(child framegate-gatew 1)" --probe-pid "w1=$(child framegate-worke 1)" \
    --probe-pid "w2=$(child framegate-worke 2)" --probe-pid "redis=$REDIS_PID" --json "$WORK/out.json" \
    >"$WORK/loadgen.txt" 2>&1 || { cat "$WORK/loadgen.txt" >&2; exit 1; }
  python3 - "$WORK/out.json" "$label" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cpu, window, lat = r.get("cpu", {}), r.get("window", {}), r.get("latency_ms", {})
pct = lambda k: cpu.get(k, {}).get("pct", 0.0)
print(f"{sys.argv[2]:>16}: {window.get('deliveries_per_s', 0):7.0f} deliveries/s ({r['delivery']['delivered_pct']}%)"
      f"  p50 {lat.get('p50', 0):.2f} ms  p99 {lat.get('p99', 0):.2f} ms  gateway {pct('gateway'):5.1f}%"
      f"  workers {pct('w1') + pct('w2'):5.1f}%  redis {pct('redis'):5.1f}%  loadgen {pct('loadgen'):5.1f}%")
PY
  kill -INT "$UP_PID"
  wait "$UP_PID" 2>/dev/null || true
  kill "$REDIS_PID"
  wait "$REDIS_PID" 2>/dev/null || true
  UP_PID="" REDIS_PID=""
  rm -rf "$WORK/run"
}

echo "gateway threads: $GATEWAY_THREADS, $DURATION s per run, $(git -C "$ROOT" rev-parse --short HEAD)"
for _ in $(seq "$ROUNDS"); do
  run gateway-deflate
  run publish-deflate --publish-deflate
done
