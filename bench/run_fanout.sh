#!/usr/bin/env bash
# Side-by-side fan-out benchmark through Redis (TARGETS.md, "Fan-out"): the
# same /rooms workloads, one after another, against
#   framegate  `framegate up --workers 2 --redis URL` (gateway + 2 workers,
#              rooms across workers through Redis pub/sub),
#   node       the Node.js cluster peer (bench/peers/node-cluster-rooms.js:
#              primary with sticky hand-off + 2 workers, `ws` + `redis`),
#   uws        uWebSockets.js in one process, rooms as in-memory uWS topics
#              (bench/peers/uws-rooms.js): a publish is parsed in JavaScript, the
#              fan-out to members runs in uWS's C++ pub/sub,
#   uws-native the same in C++ (bench/peers/uws/, built by its build.sh from a
#              uWebSockets checkout), when UWS_NATIVE_BIN is set,
# each server fresh (framegate and node with their own fresh redis-server on a
# free loopback port, --save "" --appendonly no; the uWS peers need none) for
# each workload, and stopped by PID.
#
#   bench/run_fanout.sh            full run (15 s per workload and server, ~3 minutes
#                                  plus waits for a quiet machine)
#   bench/run_fanout.sh --quick    5 s per run, no waiting (smoke test, ~3 minutes)
#
# Workloads (framegate-loadgen --mode rooms, publishers are members of their room):
#   1room-100k   1 room, 1,000 members, 10 publishers x 10/s   (100k deliveries/s offered)
#   1room-1m     1 room, 1,000 members, 10 publishers x 100/s  (1M deliveries/s offered)
#   100rooms     100 rooms x 10 members, 100 publishers x 100/s (100k deliveries/s offered)
#
# Environment:
#   FRAMEGATE_BIN           framegate supervisor (default build/bin/framegate)
#   FRAMEGATE_LOADGEN_BIN   load generator (default: next to framegate, else build/bin)
#   PEERS                   servers in this order per workload (default "framegate node uws", plus
#                           uws-native when UWS_NATIVE_BIN is set; a default uWS peer that cannot
#                           run is skipped with a note, one named in PEERS is an error)
#   UWS_NATIVE_BIN          the native uWS peer binary (bench/peers/uws/build.sh SRC_DIR prints it)
#   WORKLOADS               subset of the workload names above (default: all three)
#   WORKERS                 worker processes of both servers (default 2)
#   GATEWAY_THREADS         framegate's gateway I/O threads (default 1: the one core the uWS
#                           peers' single loop gets; 0 is the gateway's own default, one per
#                           core, which on 2 cores shared with the load generator made 12% more
#                           sends per delivery and a 1.4x higher p99 in 1room-1m)
#   FRAMEGATE_VARIANTS      run framegate once per variant, NAME:ARG,ARG,... separated by
#                           spaces, the ARGs added to `framegate up` (which passes options it
#                           does not know to the workers), e.g. the cost of history:
#                           "history100:--history-size,100 history0:--history-size,0"
#                           (default: one run with no extra arguments)
#   LOADGEN_THREADS         load generator threads (default 1)
#   SERVER_CPUS, LOADGEN_CPUS  taskset CPU lists for the servers (framegate up and its children,
#                           Redis, the peers) and the load generator (default: unset, the
#                           scheduler places every process)
#   DURATION                seconds per run (default 15; 5 with --quick)
#   RESULTS_DIR             where fanout-<date>[-runN].json goes (default bench/results)
#   QUIET_WAIT              before each run, seconds to wait for the 1-minute load
#                           average to drop below 1.0 (default 120; 0 with --quick);
#                           runs started above it are marked "disturbed"
# Output: a markdown table on stdout and bench/results/fanout-<date>[-runN].json
# (a later run of the same day gets -run2, -run3, ...).
# Exit code 1 if a run failed a correctness check (duplicates, reorders,
# misrouted or malformed deliveries) or a server died.
set -euo pipefail

LOG_TAG=run_fanout
# shellcheck source=bench/bench_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
FRAMEGATE=${FRAMEGATE_BIN:-$ROOT/build/bin/framegate}
LOADGEN=$(bin_beside "${FRAMEGATE_LOADGEN_BIN:-}" "$FRAMEGATE" framegate-loadgen)
PEERS_EXPLICIT=$([[ -n "${PEERS:-}" ]] && echo 1 || echo 0)
PEERS=${PEERS:-framegate node $(default_uws_peers)}
WORKLOADS=${WORKLOADS:-1room-100k 1room-1m 100rooms}
WORKERS=${WORKERS:-2}
GATEWAY_THREADS=${GATEWAY_THREADS:-1}
[[ "$GATEWAY_THREADS" =~ ^[0-9]+$ ]] || die "GATEWAY_THREADS must be a number (got '$GATEWAY_THREADS')"
LOADGEN_THREADS=${LOADGEN_THREADS:-1}

parse_bench_args 48 "$@"
if ((QUICK)); then DURATION=${DURATION:-5}; else DURATION=${DURATION:-15}; fi

[[ -x "$FRAMEGATE" ]] || die "framegate not found: $FRAMEGATE (build it, or set FRAMEGATE_BIN)"
[[ -x "$LOADGEN" ]] || die "load generator not found: $LOADGEN (build framegate-loadgen, or set FRAMEGATE_LOADGEN_BIN)"
grep -q -- '--mode rate|window|idle|rooms' <<<"$("$LOADGEN" --help)" || die "$LOADGEN has no rooms mode: rebuild framegate-loadgen"
command -v redis-server >/dev/null || die "redis-server is required"
command -v python3 >/dev/null || die "python3 is required for the report"
for p in $PEERS; do
  case "$p" in
    framegate|node|uws|uws-native) ;;
    *) die "PEERS: unknown server kind '$p' (framegate, node, uws, uws-native)" ;;
  esac
done
declare -a VARIANTS=()
read -r -a VARIANTS <<<"${FRAMEGATE_VARIANTS:-}"
for v in "${VARIANTS[@]}"; do
  [[ "$v" =~ ^[A-Za-z0-9_-]+:.+$ ]] || die "FRAMEGATE_VARIANTS: expected NAME:ARG,ARG,... (got '$v')"
done
for w in $WORKLOADS; do
  case "$w" in 1room-100k|1room-1m|100rooms) ;; *) die "WORKLOADS: unknown workload '$w'" ;; esac
done
if [[ " $PEERS " == *" node "* ]]; then
  command -v node >/dev/null || die "node is required for the Node cluster peer"
fi
# One npm ci installs the Node cluster's packages and, where its binaries fit, uWebSockets.js.
if [[ " $PEERS " == *" node "* || " $PEERS " == *" uws "* ]]; then need_node_modules redis ws; fi
check_uws_peers "$PEERS_EXPLICIT"
[[ -z "${UWS_NATIVE_BIN:-}" ]] || UWS_NATIVE_BIN=$(realpath "$UWS_NATIVE_BIN")

WORK=$(mktemp -d /tmp/fanout.XXXXXX)
REDIS_PID="" SERVER_PID=""
declare -a PROBES=()
stop_all_on_exit

workload_args() {
  case "$1" in
    1room-100k) echo "--rooms 1 --members 1000 --publishers 10 --publish-rate 10" ;;
    1room-1m) echo "--rooms 1 --members 1000 --publishers 10 --publish-rate 100" ;;
    100rooms) echo "--rooms 100 --members 1000 --publishers 100 --publish-rate 100" ;;
  esac
}

status=0
runs=()
# run_one WORKLOAD KIND VARIANT [SERVER ARGS...]: fresh Redis and server, one
# loadgen run, both stopped; VARIANT is "" or a FRAMEGATE_VARIANTS name.
run_one() {
  local wl=$1 kind=$2 variant=$3 stem out rc note="" label=$2 writes_before writes
  shift 3
  [[ -n "$variant" ]] && label="$kind-$variant"
  wait_quiet
  # The uWS peers keep their rooms in memory: no Redis to start (or to count).
  case "$kind" in uws|uws-native) ;; *) start_redis ;; esac
  start_rooms_server "$kind" "$@"
  [[ $DISTURBED == true ]] && note=", disturbed"
  echo "[run_fanout] $wl against $label on port $PORT (redis pid ${REDIS_PID:-none}; load $LOAD_BEFORE$note)${*:+: $*}" >&2
  stem="$WORK/$wl.$label"
  out="$stem.json"
  writes_before='{}'
  [[ -n "$GATEWAY_ADMIN" ]] && writes_before=$(gateway_write_counters "$GATEWAY_ADMIN")
  set +e
  # shellcheck disable=SC2046
  "${LOADGEN_ON[@]}" "$LOADGEN" --mode rooms --url "ws://127.0.0.1:$PORT/rooms" $(workload_args "$wl") \
    --threads "$LOADGEN_THREADS" --duration "$DURATION" --join-settle 1 --drain 2 --drain-max 10 \
    --connect-rate 2000 "${PROBES[@]}" --json "$out" --no-progress >"$stem.txt" 2>"$stem.err"
  rc=$?
  set -e
  writes='{}'
  [[ -n "$GATEWAY_ADMIN" ]] && writes=$(write_counter_deltas "$writes_before" "$(gateway_write_counters "$GATEWAY_ADMIN")")
  check_run "$wl/$label" "$stem" "$rc" || status=1
  annotate_run "$out" "$WORK/server.log" 8 workload="$wl" server="$kind" variant="$variant" gateway_writes="$writes" \
    server_args="$*" loadgen_exit="$rc" server_alive="$ALIVE" \
    load_before="$LOAD_BEFORE" load_after="$(cut -d' ' -f1 /proc/loadavg)" disturbed="$DISTURBED"
  ((RECORD)) && runs+=("$out")
  stop_server "$kind"
  stop_redis
}

status=0
runs=()
RECORD=1
# The first run of a benchmark on this VM has had the worst tail of its
# server, whichever server that was (docs/BENCHMARKS.md, "Seventh step"):
# a run that is not recorded takes that penalty, the first workload
# against the first peer, 5 s.
if ((!QUICK)); then
  RECORD=0
  first_wl=${WORKLOADS%% *} saved_duration=$DURATION DURATION=5
  echo "[run_fanout] warm-up run (not recorded)" >&2
  run_one "$first_wl" "${PEERS%% *}" ""
  RECORD=1 DURATION=$saved_duration
fi
for wl in $WORKLOADS; do
  for kind in $PEERS; do
    if [[ $kind == framegate && ${#VARIANTS[@]} -gt 0 ]]; then
      for v in "${VARIANTS[@]}"; do
        IFS=, read -r -a vargs <<<"${v#*:}"
        run_one "$wl" "$kind" "${v%%:*}" "${vargs[@]}"
      done
    else
      run_one "$wl" "$kind" ""
    fi
  done
done

result=$(results_file fanout)
python3 "$BENCH/fanout_report.py" --out "$result" --quick "$QUICK" --duration "$DURATION" \
  --loadgen-threads "$LOADGEN_THREADS" --workers "$WORKERS" --gateway-threads "$GATEWAY_THREADS" --variants "${FRAMEGATE_VARIANTS:-}" "${runs[@]}"
echo "[run_fanout] results: $result" >&2
exit $status
