#!/usr/bin/env bash
# Where a room message is compressed: by the gateway once per Send (workers
# without --publish-deflate) or once per publish by the publishing worker
# (--publish-deflate), alternating run by run so that drift of a shared VM
# hits both alike. `framegate up` (gateway --deflate, 2 workers, a private
# redis-server per run, or with BROKER=hub none: rooms through the
# gateway's hub), 100 rooms x 10 members that all negotiate
# permessage-deflate, 30 publishers x 100/s of ~1.2 KiB JSON (30k
# deliveries/s: below saturation on 2 cores). Prints, per run, deliveries/s,
# latency and each process's CPU (the load generator's probes).
#
#   bench/ab_publish_deflate.sh            # ROUNDS (2) pairs, GATEWAY_THREADS (1), DURATION (10 s), BROKER (redis|hub)
set -euo pipefail
LOG_TAG=ab_publish_deflate
# shellcheck source=bench/bench_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
BIN=${BUILD_DIR:-$ROOT/build}/bin
FRAMEGATE=$BIN/framegate
ROUNDS=${ROUNDS:-2}
GATEWAY_THREADS=${GATEWAY_THREADS:-1}
WORKERS=2
DURATION=${DURATION:-10}
BROKER=${BROKER:-redis}
[[ $BROKER == redis || $BROKER == hub ]] || die "BROKER: redis or hub, not '$BROKER'"
WORK=$(mktemp -d /tmp/ab-publish-deflate.XXXXXX)
REDIS_PID="" SERVER_PID=""
stop_all_on_exit

run() { # LABEL [WORKER OPTION...]
  local label=$1
  shift
  [[ $BROKER == redis ]] && start_redis
  # Options framegate up does not know reach the gateway and the workers as FRAMEGATE_*.
  start_rooms_server framegate --deflate "$@"
  wait_cluster_ready "$WORK/server.log"
  "$BIN/framegate-loadgen" --url "ws://127.0.0.1:$PORT/rooms" --mode rooms --rooms 100 --members 1000 \
    --publishers 30 --publish-rate 100 --publish-size 1200 --deflate --duration "$DURATION" --no-progress \
    "${PROBES[@]}" --json "$WORK/out.json" \
    >"$WORK/loadgen.txt" 2>&1 || { cat "$WORK/loadgen.txt" >&2; exit 1; }
  python3 - "$WORK/out.json" "$label" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cpu, window, lat = r.get("cpu", {}), r.get("window", {}), r.get("latency_ms", {})
pct = lambda k: cpu.get(k, {}).get("pct", 0.0)
print(f"{sys.argv[2]:>16}: {window.get('deliveries_per_s', 0):7.0f} deliveries/s ({r['delivery']['delivered_pct']}%)"
      f"  p50 {lat.get('p50', 0):.2f} ms  p99 {lat.get('p99', 0):.2f} ms  gateway {pct('gateway'):5.1f}%"
      f"  workers {pct('worker0') + pct('worker1'):5.1f}%  redis {pct('redis'):5.1f}%  loadgen {pct('loadgen'):5.1f}%")
PY
  stop_server "framegate up"
  [[ $BROKER == redis ]] && stop_redis
  return 0
}

echo "gateway threads: $GATEWAY_THREADS, rooms through $BROKER, $DURATION s per run, $(git -C "$ROOT" rev-parse --short HEAD)"
for _ in $(seq "$ROUNDS"); do
  # Explicit both ways: framegate up implies --publish-deflate with --deflate and no Redis.
  run gateway-deflate --publish-deflate=false
  run publish-deflate --publish-deflate
done
