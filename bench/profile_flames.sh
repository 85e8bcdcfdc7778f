#!/usr/bin/env bash
# Flame graphs of framegate under load, for docs/BENCHMARKS.md (issue #14):
#   gateway-openloop   the gateway alone (--echo, one thread) under the open
#                      loop that shows tail latency: 1,000 connections x 256 B
#                      every 20 ms (50k msg/s), perf on the gateway only
#   fanout             the fan-out path through Redis: `framegate up` (gateway,
#                      WORKERS workers) and redis-server, 1 room x 1,000 members,
#                      10 publishers x 100/s (1M deliveries/s offered), perf on
#                      the whole machine, one graph per process kind
#
#   bench/profile_flames.sh [--quick]     writes docs/img/flame-*.svg
#
# Environment: FRAMEGATE_BIN, FRAMEGATE_GATEWAY_BIN, FRAMEGATE_LOADGEN_BIN,
# WORKERS (default 2), SECONDS_RECORDED (default 8; 3 with --quick),
# OUT_DIR (default docs/img), QUIET_WAIT (as the other scripts).
# Needs perf (linux-perf) and root or perf_event_paranoid <= 1.
set -euo pipefail

LOG_TAG=profile_flames
# shellcheck source=bench/bench_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
parse_bench_args 16 "$@"
FRAMEGATE=${FRAMEGATE_BIN:-$ROOT/build/bin/framegate}
GATEWAY=$(bin_beside "${FRAMEGATE_GATEWAY_BIN:-}" "$FRAMEGATE" framegate-gateway)
LOADGEN=$(bin_beside "${FRAMEGATE_LOADGEN_BIN:-}" "$FRAMEGATE" framegate-loadgen)
WORKERS=${WORKERS:-2}
OUT_DIR=${OUT_DIR:-$ROOT/docs/img}
if ((QUICK)); then SECONDS_RECORDED=${SECONDS_RECORDED:-3}; else SECONDS_RECORDED=${SECONDS_RECORDED:-8}; fi
command -v perf >/dev/null || die "perf is required (apt-get install linux-perf)"
for b in "$FRAMEGATE" "$GATEWAY" "$LOADGEN"; do [[ -x "$b" ]] || die "not built: $b"; done
mkdir -p "$OUT_DIR"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/framegate-flames.XXXXXX")
SERVER_PID=""
REDIS_PID=""
stop_all_on_exit

# flame PERF_DATA OUT TITLE [--comm NAME ...]: perf script | flamegraph.py
flame() {
  local data=$1 out=$2 title=$3
  shift 3
  perf script -i "$data" 2>/dev/null | python3 "$BENCH/flamegraph.py" --title "$title" "$@" >"$out"
  echo "[$LOG_TAG] wrote $out" >&2
}

wait_quiet
# 1. The gateway alone under the 50k/s open loop.
"$GATEWAY" --echo --listen 127.0.0.1:0 --threads 1 --admin off >"$WORK/gateway.log" 2>&1 &
SERVER_PID=$!
wait_listening "$WORK/gateway.log" 'listening on [^ ]+:[0-9]+'
"$LOADGEN" --url "ws://127.0.0.1:$PORT/" --opcode text --mode rate --connections 1000 --size 256 \
  --rate-per-conn-ms 20 --warmup 2 --duration $((SECONDS_RECORDED + 2)) >"$WORK/openloop.txt" 2>&1 &
lg=$!
sleep 3
perf record -F 999 -g -p "$SERVER_PID" -o "$WORK/openloop.data" -- sleep "$SECONDS_RECORDED" 2>/dev/null
wait "$lg" || die "the load generator failed: $(tail -3 "$WORK/openloop.txt")"
grep -E "measured|latency us" "$WORK/openloop.txt" >&2
stop_server gateway
flame "$WORK/openloop.data" "$OUT_DIR/flame-gateway-openloop.svg" \
  "framegate-gateway --echo, open loop 1,000 conns x 256 B / 20 ms (50k msg/s), $SECONDS_RECORDED s"

wait_quiet
# 2. The fan-out path through Redis: every process on the machine.
start_redis
start_rooms_server framegate
"$LOADGEN" --mode rooms --url "ws://127.0.0.1:$PORT/rooms" --rooms 1 --members 1000 --publishers 10 \
  --publish-rate 100 --warmup 2 --duration $((SECONDS_RECORDED + 2)) >"$WORK/fanout.txt" 2>&1 &
lg=$!
sleep 4
perf record -F 999 -g -a -o "$WORK/fanout.data" -- sleep "$SECONDS_RECORDED" 2>/dev/null
wait "$lg" || die "the load generator failed: $(tail -3 "$WORK/fanout.txt")"
grep -E "measured|deliver|latency" "$WORK/fanout.txt" | head -4 >&2
stop_server framegate
stop_redis
# perf keeps 15 characters of a command name.
flame "$WORK/fanout.data" "$OUT_DIR/flame-fanout.svg" \
  "fan-out through Redis: 1 room x 1,000, 1M deliveries/s offered, $WORKERS workers, $SECONDS_RECORDED s (gateway, workers, redis-server)" \
  --comm framegate-gatew --comm framegate-worke --comm redis-server
