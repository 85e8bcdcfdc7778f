#!/usr/bin/env bash
# Soak: does a framegate cluster's memory stay flat while it runs? (DESIGN.md's
# quality bar: "memory per idle connection and its growth over a long soak,
# measured".) One cluster, `framegate up --workers WORKERS` with its own
# redis-server, under four loads at once for DURATION seconds:
#   idle   IDLE_N connections to /echo, opened at the start and held to the
#          end without a message (the gateway pings them every --idle-ping)
#   rooms  10 rooms x 100 members, 10 publishers x 10/s: 10k deliveries/s
#          through Redis, with history
#   echo   100 connections to /echo, 4 KiB every 100 ms each (read and write
#          buffers grow and shrink)
#   churn  every CHURN_EVERY seconds, CHURN_S seconds of a handshake storm (2
#          clients connecting, upgrading and closing in a loop)
# The RSS of the gateway, each worker, Redis and the supervisor, and the
# gateway's open connections, are sampled every SAMPLE_S seconds, from before
# the load until 10 s after it. The report fits a line to each process's RSS
# from SETTLE seconds into the load to its end: what still grows after the
# start-up (allocator pools, Redis's history filling up) is the soak's finding.
#
#   bench/run_soak.sh            DURATION=1800 (~32 minutes)
#   bench/run_soak.sh --quick    DURATION=40, IDLE_N=2000 (a smoke test)
#
# Environment:
#   FRAMEGATE_BIN          framegate supervisor (default build/bin/framegate)
#   FRAMEGATE_LOADGEN_BIN  load generator (default: next to framegate, else build/bin)
#   DURATION               seconds of load (default 1800; 40 with --quick; at most 3600)
#   IDLE_N                 idle connections (default 15000; 2000 with --quick)
#   SETTLE                 seconds of load before the growth is measured (default 300;
#                          15 with --quick)
#   SAMPLE_S               seconds between samples (default 5; 2 with --quick)
#   CHURN_EVERY, CHURN_S   the handshake storms' period and length (defaults 60 and 5;
#                          10 and 3 with --quick)
#   WORKERS                worker processes (default 2)
#   GATEWAY_THREADS        the gateway's I/O threads (default 1)
#   FRAMEGATE_ARGS         more arguments for `framegate up`, space-separated
#                          (e.g. "--idle-ping 5" for more heartbeats)
#   DEFLATE                1: the gateway accepts permessage-deflate (--deflate; add
#                          e.g. "--deflate-takeover both" in FRAMEGATE_ARGS for zlib
#                          state per connection), every load but the churn offers it,
#                          and room messages are padded to ~1.2 KiB so that they are
#                          compressed (default 0)
#   RESULTS_DIR            where soak-<date>[-runN].json and .png go (default bench/results)
#   QUIET_WAIT             seconds to wait for a 1-minute load average below 1.0 first
#                          (default 120; 0 with --quick)
# Output: a markdown table on stdout, the JSON (every sample, each load's
# summary) and, with matplotlib, a plot of RSS over time beside it.
# Exit code 1 if a load failed its own checks (a connection lost, an echo
# mismatch, a duplicate or reordered delivery, a storm error), a process of
# the cluster died or was restarted, or the cluster ended the soak with
# connections still counted open.
set -euo pipefail

LOG_TAG=run_soak
# shellcheck source=bench/bench_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
FRAMEGATE=${FRAMEGATE_BIN:-$ROOT/build/bin/framegate}
LOADGEN=$(bin_beside "${FRAMEGATE_LOADGEN_BIN:-}" "$FRAMEGATE" framegate-loadgen)
WORKERS=${WORKERS:-2}
GATEWAY_THREADS=${GATEWAY_THREADS:-1}

parse_bench_args 50 "$@"
if ((QUICK)); then
  DURATION=${DURATION:-40} IDLE_N=${IDLE_N:-2000} SETTLE=${SETTLE:-15} SAMPLE_S=${SAMPLE_S:-2}
  CHURN_EVERY=${CHURN_EVERY:-10} CHURN_S=${CHURN_S:-3}
else
  DURATION=${DURATION:-1800} IDLE_N=${IDLE_N:-15000} SETTLE=${SETTLE:-300} SAMPLE_S=${SAMPLE_S:-5}
  CHURN_EVERY=${CHURN_EVERY:-60} CHURN_S=${CHURN_S:-5}
fi
for v in DURATION IDLE_N SETTLE SAMPLE_S CHURN_EVERY CHURN_S WORKERS GATEWAY_THREADS; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || die "$v must be a whole number (got '${!v}')"
done
((DURATION >= 10 && DURATION <= 3600)) || die "DURATION must be 10..3600 seconds (got $DURATION)"
((SETTLE < DURATION)) || die "SETTLE ($SETTLE) must be less than DURATION ($DURATION)"
((SAMPLE_S >= 1 && CHURN_S >= 1 && CHURN_EVERY > CHURN_S)) ||
  die "SAMPLE_S and CHURN_S must be at least 1, and CHURN_EVERY more than CHURN_S"
((IDLE_N <= 16000)) || die "IDLE_N above 16000 does not fit the 20,000 open files of one process"
((WORKERS >= 1)) || die "WORKERS must be at least 1"
[[ -x "$FRAMEGATE" ]] || die "framegate not found: $FRAMEGATE (build it, or set FRAMEGATE_BIN)"
[[ -x "$LOADGEN" ]] || die "load generator not found: $LOADGEN (build framegate-loadgen, or set FRAMEGATE_LOADGEN_BIN)"
command -v redis-server >/dev/null || die "redis-server is required"
command -v python3 >/dev/null || die "python3 is required for the sampler and the report"
declare -a EXTRA=()
read -r -a EXTRA <<<"${FRAMEGATE_ARGS:-}"
DEFLATE=${DEFLATE:-0}
declare -a LOAD_DEFLATE=() ROOMS_PAD=()
case "$DEFLATE" in
  0) ;;
  1) EXTRA+=(--deflate) LOAD_DEFLATE=(--deflate) ROOMS_PAD=(--publish-size 1200) ;;
  *) die "DEFLATE must be 0 or 1 (got '$DEFLATE')" ;;
esac

# The gateway and the idle load generator hold IDLE_N descriptors and more.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

WORK=$(mktemp -d /tmp/soak.XXXXXX)
REDIS_PID="" SERVER_PID=""
declare -a PROBES=() LOAD_PIDS=() LOAD_NAMES=()
stop_all_on_exit

# The commit at the start: the one whose binaries this soak measures.
COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
wait_quiet
start_redis
start_rooms_server framegate "${EXTRA[@]}"
wait_cluster_ready "$WORK/server.log"
echo "[run_soak] cluster on port $PORT (supervisor pid $SERVER_PID, redis pid $REDIS_PID, load $LOAD_BEFORE)" >&2

# The sampler watches every process the cluster started (the PROBES pairs)
# and stops when told to by its stop file.
declare -a WATCH=(--pid "redis=$REDIS_PID")
for ((i = 0; i < ${#PROBES[@]}; i += 2)); do
  [[ ${PROBES[i + 1]} == redis=* ]] || WATCH+=(--pid "${PROBES[i + 1]}")
done
python3 "$BENCH/soak_sampler.py" --every "$SAMPLE_S" --admin "$GATEWAY_ADMIN" --stop-file "$WORK/stop" \
  --out "$WORK/samples.jsonl" "${WATCH[@]}" 2>"$WORK/sampler.err" &
SAMPLER_PID=$!
BACKGROUND_PIDS+=("$SAMPLER_PID")
sleep $((2 * SAMPLE_S))  # the baseline: the cluster without load

URL="ws://127.0.0.1:$PORT"
START=$(date +%s)
# Each load: its loadgen arguments; all end DURATION s after the idle load
# has its connections (the others start as soon as it is ready).
start_load() {  # start_load NAME ARGS...
  local name=$1
  shift
  "$LOADGEN" "$@" "${LOAD_DEFLATE[@]}" --json "$WORK/$name.json" --no-progress >"$WORK/$name.txt" 2>"$WORK/$name.err" &
  LOAD_PIDS+=("$!")
  LOAD_NAMES+=("$name")
  BACKGROUND_PIDS+=("$!")
}
start_load idle --url "$URL/echo" --mode idle --connections "$IDLE_N" --duration "$DURATION" \
  --source-ips 127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5
wait_loadgen_ready "$WORK/idle.err" "${LOAD_PIDS[0]}"
echo "[run_soak] $IDLE_N idle connections open after $(($(date +%s) - START)) s; the other loads start" >&2
LOAD_START=$(date +%s)
start_load rooms --url "$URL/rooms" --mode rooms --rooms 10 --members 1000 --publishers 10 --publish-rate 10 \
  "${ROOMS_PAD[@]}" --duration "$((DURATION - 3))" --join-settle 1 --drain 2 --drain-max 10 --source-ips 127.0.0.6
start_load echo --url "$URL/echo" --mode rate --connections 100 --size 4096 --rate-per-conn-ms 100 \
  --duration "$((DURATION - 1))" --source-ips 127.0.0.7
CHURNS=0
storm_status=0
while (($(date +%s) + CHURN_EVERY <= LOAD_START + DURATION)); do
  sleep "$((CHURN_EVERY - CHURN_S))"
  "$LOADGEN" --url "$URL/echo" --mode storm --connections 2 --duration "$CHURN_S" --source-ips 127.0.0.8,127.0.0.9 \
    --json "$WORK/churn-$CHURNS.json" --no-progress >"$WORK/churn-$CHURNS.txt" 2>&1 || storm_status=1
  CHURNS=$((CHURNS + 1))
done

status=$storm_status
((storm_status == 0)) || echo "[run_soak] a handshake storm failed: see the report's churn rows" >&2
for i in "${!LOAD_PIDS[@]}"; do
  rc=0
  wait "${LOAD_PIDS[$i]}" || rc=$?
  if ((rc != 0)); then
    echo "[run_soak] the ${LOAD_NAMES[$i]} load failed (exit $rc):" >&2
    tail -5 "$WORK/${LOAD_NAMES[$i]}.txt" "$WORK/${LOAD_NAMES[$i]}.err" >&2
    status=1
  fi
done
BACKGROUND_PIDS=("$SAMPLER_PID")  # the loads are reaped
echo "[run_soak] load over after $(($(date +%s) - LOAD_START)) s; 10 s more of samples" >&2
sleep 10
: >"$WORK/stop"
wait "$SAMPLER_PID" || { cat "$WORK/sampler.err" >&2; die "the sampler failed"; }
BACKGROUND_PIDS=()  # all reaped

out=$(results_file soak)
python3 "$BENCH/soak_report.py" --work "$WORK" --settle "$SETTLE" --load-start "$LOAD_START" --duration "$DURATION" \
  --idle "$IDLE_N" --churns "$CHURNS" --workers "$WORKERS" --gateway-threads "$GATEWAY_THREADS" \
  --framegate-args "${EXTRA[*]}" --commit "$COMMIT" --json "$out" --plot "${out%.json}.png" || status=1
echo "[run_soak] results: $out" >&2
exit "$status"
