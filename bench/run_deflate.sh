#!/usr/bin/env bash
# permessage-deflate (RFC 7692) benchmark, in one run: framegate with and
# without --deflate next to Node.js `ws` with perMessageDeflate on (and off),
# each server fresh for each run and stopped by PID.
#
#   bench/run_deflate.sh            full run (about 10 minutes, plus waits for a quiet machine)
#   bench/run_deflate.sh --quick    small sizes and durations (smoke test, about 2 minutes)
#
# Workloads (framegate-loadgen; messages are JSON records, --payload json):
#   seed        the seed workload: 1,000 connections x 256 B text every 10 ms (100k msg/s
#               offered), echoed; framegate-gateway --echo vs ws-echo.js, one core each
#   broadcast   1 KiB JSON to 1,000 members: 1 room, 10 publishers x 10/s (100k deliveries/s),
#               through /rooms: framegate up (2 workers, Redis) vs the Node cluster peer
#               (2 workers, Redis)
#   idle        15,000 idle connections (deflate negotiated where it is on): memory per connection
# Server kinds per workload (+deflate: the server with compression on and the load
# generator offering it as a browser does and compressing its sends of 1 KiB or more,
# ws's own client default; -all: threshold 0 on both sides, every message compressed):
#   seed        framegate, framegate+deflate, framegate+deflate-all, ws, ws+deflate, ws+deflate-all
#   broadcast   framegate, framegate+deflate, framegate+takeover, node, node+deflate
#               (framegate+takeover: --deflate-takeover both --deflate-window-bits 10
#               --deflate-mem-level 4, every member's copy compressed with its own context)
#   idle        framegate, framegate+deflate, ws, ws+deflate
#
# Environment: FRAMEGATE_BIN (framegate supervisor, default build/bin/framegate; the gateway
# and the load generator are taken from beside it), WORKLOADS (subset, default
# "seed broadcast idle"), RESULTS_DIR (default bench/results), QUIET_WAIT (seconds to wait
# for the 1-minute load average to drop below 1.0 before each run; default 120, 0 with
# --quick; runs started above it are marked disturbed).
# Output: a markdown table on stdout and bench/results/deflate-<date>.json. Exit code 1 if a
# run failed its checks (echo mismatches, bad deliveries, errors) or a server died.
set -euo pipefail

LOG_TAG=run_deflate
# shellcheck source=bench/bench_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"

FRAMEGATE=${FRAMEGATE_BIN:-$ROOT/build/bin/framegate}
BIN_DIR=$(dirname "$FRAMEGATE")
GATEWAY=$BIN_DIR/framegate-gateway
LOADGEN=$BIN_DIR/framegate-loadgen
WORKLOADS=${WORKLOADS:-seed broadcast idle}
WORKERS=2
parse_bench_args 31 "$@"
if ((QUICK)); then
  SEED_ARGS=(--mode rate --connections 200 --size 256 --rate-per-conn-ms 10 --warmup 0.5 --duration 3)
  BROADCAST_ARGS=(--mode rooms --rooms 1 --members 200 --publishers 5 --publish-rate 10 --duration 3)
  IDLE_N=2000
  IDLE_ARGS=(--mode idle --connections "$IDLE_N" --duration 1 --source-ips "127.0.0.2,127.0.0.3")
else
  SEED_ARGS=(--mode rate --connections 1000 --size 256 --rate-per-conn-ms 10 --warmup 2 --duration 20)
  BROADCAST_ARGS=(--mode rooms --rooms 1 --members 1000 --publishers 10 --publish-rate 10 --duration 15)
  IDLE_N=15000
  IDLE_ARGS=(--mode idle --connections "$IDLE_N" --duration 5 --source-ips "127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5")
fi
BROADCAST_ARGS+=(--publish-size 1024 --join-settle 1 --drain 2 --drain-max 10 --connect-rate 2000)

for b in "$FRAMEGATE" "$GATEWAY" "$LOADGEN"; do [[ -x "$b" ]] || die "$b not found: build framegate, the gateway and framegate-loadgen"; done
"$LOADGEN" --help | grep -q -- '--deflate ' || die "$LOADGEN has no --deflate: rebuild framegate-loadgen"
command -v node >/dev/null || die "node is required for the ws peers"
command -v redis-server >/dev/null || die "redis-server is required for the broadcast workload"
need_node_modules ws redis
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

WORK=$(mktemp -d /tmp/deflate-bench.XXXXXX)
SERVER_PID="" REDIS_PID=""
declare -a PROBES=()
stop_all_on_exit

# The gateway's and ws's options, and the load generator's, for one kind.
server_args() {
  case "$1" in
    *+deflate) echo "--deflate" ;;
    framegate+deflate-all) echo "--deflate --deflate-threshold 0" ;;
    ws+deflate-all) echo "--deflate --deflate-threshold 0" ;;
    framegate+takeover) echo "--deflate --deflate-takeover both --deflate-window-bits 10 --deflate-mem-level 4" ;;
  esac
}
loadgen_args() {
  case "$1" in
    *+deflate-all) echo "--deflate --deflate-threshold 0" ;;
    *+deflate | *+takeover) echo "--deflate" ;;
  esac
}

# start_echo_server KIND: the gateway (--echo, one thread) or ws-echo.js; sets SERVER_PID, PORT.
start_echo_server() {
  local kind=$1
  : >"$WORK/server.log"  # before the start: wait_listening must not find the last run's line
  # shellcheck disable=SC2046
  case "$kind" in
    framegate*)
      "$GATEWAY" --echo --listen 127.0.0.1:0 --threads 1 --admin off $(server_args "$kind") >"$WORK/server.log" 2>&1 &
      ;;
    ws*)
      node "$BENCH/peers/ws-echo.js" 0 127.0.0.1 $(server_args "$kind") >"$WORK/server.log" 2>&1 &
      ;;
  esac
  SERVER_PID=$!
  wait_listening "$WORK/server.log" 'listening on [0-9.]+:[0-9]+'
}

kinds_of() {
  case "$1" in
    seed) echo "framegate framegate+deflate framegate+deflate-all ws ws+deflate ws+deflate-all" ;;
    broadcast) echo "framegate framegate+deflate framegate+takeover node node+deflate" ;;
    idle) echo "framegate framegate+deflate ws ws+deflate" ;;
  esac
}

status=0
runs=()
for wl in $WORKLOADS; do
  case "$wl" in seed|broadcast|idle) ;; *) die "WORKLOADS: unknown workload '$wl'" ;; esac
  for kind in $(kinds_of "$wl"); do
    wait_quiet
    stem="$WORK/$wl.$kind"
    out="$stem.json"
    rss_before=0
    set +e
    if [[ $wl == broadcast ]]; then
      start_redis
      # shellcheck disable=SC2046
      start_rooms_server "${kind%%+*}" $(server_args "$kind")
      gateway_pid=$(ps --ppid "$SERVER_PID" -o pid=,comm= | awk '$2 ~ /framegate-gatew/ {print $1}' | head -1)
      [[ -n "$gateway_pid" ]] && rss_before=$(rss_kib "$gateway_pid")
      echo "[run_deflate] $wl against $kind on port $PORT (load $LOAD_BEFORE)" >&2
      # shellcheck disable=SC2046
      "$LOADGEN" --url "ws://127.0.0.1:$PORT/rooms" "${BROADCAST_ARGS[@]}" $(loadgen_args "$kind") "${PROBES[@]}" \
        --json "$out" --no-progress >"$stem.txt" 2>"$stem.err"
    else
      start_echo_server "$kind"
      args=("${SEED_ARGS[@]}")
      [[ $wl == idle ]] && args=("${IDLE_ARGS[@]}")
      echo "[run_deflate] $wl against $kind on port $PORT (load $LOAD_BEFORE)" >&2
      # shellcheck disable=SC2046
      "$LOADGEN" --url "ws://127.0.0.1:$PORT/" --opcode text --payload json "${args[@]}" $(loadgen_args "$kind") \
        --server-pid "$SERVER_PID" --json "$out" --no-progress >"$stem.txt" 2>"$stem.err"
    fi
    rc=$?
    set -e
    check_run "$wl/$kind" "$stem" "$rc" || status=1
    stop_server "$kind"
    annotate_run "$out" "$WORK/server.log" 6 workload="$wl" kind="$kind" loadgen_exit="$rc" server_alive="$ALIVE" \
      load_before="$LOAD_BEFORE" disturbed="$DISTURBED" gateway_rss_before_kib="$rss_before"
    runs+=("$out")
    stop_redis
    sleep 1  # TIME_WAIT sockets and freed memory settle between runs
  done
done

result=$(results_file deflate)
python3 "$BENCH/deflate_report.py" --out "$result" --quick "$QUICK" --gateway "$GATEWAY" "${runs[@]}"
echo "[run_deflate] results: $result" >&2
exit $status
