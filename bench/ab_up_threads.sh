#!/usr/bin/env bash
# framegate up's gateway threads on this host: THREADS_A against THREADS_B
# (default 1 and 2), alternating run by run so that drift of a shared VM hits
# both alike. Each run is a fresh `framegate up` (WORKERS workers, a private
# redis-server) and one load: the 50k/s open-loop echo through the workers
# (1,000 connections x 256 B every 20 ms), the closed-loop echo through them
# (100 x 16 in flight, 64 B), and the 1 room x 1,000 members fan-out at 1M
# deliveries/s. Prints rate, p50, p99 and the machine's busy CPU per run.
#
#   bench/ab_up_threads.sh     # env: THREADS_A (1), THREADS_B (2), WORKERS (2), ROUNDS (3),
#                              #      WORKLOADS ("rate50k window64 1room-1m"), BUILD_DIR
set -euo pipefail
LOG_TAG=ab_up_threads
# shellcheck source=bench/bench_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
BIN=${BUILD_DIR:-$ROOT/build}/bin
FRAMEGATE=$BIN/framegate
THREADS_A=${THREADS_A:-1}
THREADS_B=${THREADS_B:-2}
WORKERS=${WORKERS:-2}
ROUNDS=${ROUNDS:-3}
WORKLOADS=${WORKLOADS:-rate50k window64 1room-1m}
WORK=$(mktemp -d /tmp/ab-up-threads.XXXXXX)
REDIS_PID="" SERVER_PID=""
stop_all_on_exit

load_args() { # WORKLOAD PORT
  case "$1" in
    rate50k) echo "--url ws://127.0.0.1:$2/echo --mode rate --connections 1000 --size 256 --rate-per-conn-ms 20 \
--warmup 2 --duration 10" ;;
    window64) echo "--url ws://127.0.0.1:$2/echo --mode window --connections 100 --window 16 --size 64 --warmup 1 \
--duration 8" ;;
    1room-1m) echo "--url ws://127.0.0.1:$2/rooms --mode rooms --rooms 1 --members 1000 --publishers 10 \
--publish-rate 100 --duration 10" ;;
    *) echo "unknown workload $1" >&2; exit 2 ;;
  esac
}

run() { # THREADS WORKLOAD
  local threads=$1 wl=$2
  start_redis
  GATEWAY_THREADS=$threads start_rooms_server framegate
  wait_cluster_ready "$WORK/server.log"
  # shellcheck disable=SC2046
  "$BIN/framegate-loadgen" $(load_args "$wl" "$PORT") --no-progress --json "$WORK/out.json" >"$WORK/loadgen.txt" 2>&1 ||
    { cat "$WORK/loadgen.txt" >&2; exit 1; }
  python3 - "$WORK/out.json" "threads=$threads $wl" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
if "latency_us" in r:  # echo: the whole machine's CPU
    lat = {k: v / 1000 for k, v in r["latency_us"].items() if k in ("p50", "p99")}
    rate, cpu = r.get("msg_per_s", 0), f"machine busy {r['machine_cpu']['busy_pct_of_core']:5.1f}%"
else:  # rooms: the load generator's own
    lat, rate = r.get("latency_ms", {}), r.get("window", {}).get("deliveries_per_s", 0)
    cpu = f"loadgen {r.get('cpu', {}).get('loadgen', {}).get('pct', 0):5.1f}%"
print(f"{sys.argv[2]:>20}: {rate:9.0f} msg/s  p50 {lat.get('p50', 0):7.3f} ms  p99 {lat.get('p99', 0):7.2f} ms"
      f"  {cpu} of a core")
PY
  stop_server "framegate up"
  stop_redis
  sleep 1
}

echo "$(nproc) cores, $WORKERS workers, $(git -C "$ROOT" rev-parse --short HEAD)"
for wl in $WORKLOADS; do
  for _ in $(seq "$ROUNDS"); do
    run "$THREADS_A" "$wl"
    run "$THREADS_B" "$wl"
  done
done
