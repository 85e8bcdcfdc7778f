#!/usr/bin/env bash
# Fan-out across simulated hosts (issue #13, capacity model): the same /rooms
# workloads over deploy/multihost/multihost.sh's 3 hosts (network
# namespaces, one `framegate up` each), once with one Redis
# (--redis-mode single, on host 1) and once with a Redis Cluster of 3
# primaries + 3 replicas spread over the hosts (--redis-mode cluster,
# sharded pub/sub). One load generator in the root namespace connects to
# every host's gateway directly (framegate-loadgen --url with the three
# gateways: each room's members spread over the hosts), so every publish
# crosses hosts through Redis. Needs root (namespaces); the run is always
# taken down (`multihost.sh down`), however the script ends.
#
#   bench/run_multihost_fanout.sh          full run (20 s per workload and mode, ~5 minutes
#                                          plus waits for a quiet machine)
#   bench/run_multihost_fanout.sh --quick  5 s per run, no waiting (smoke test, ~2 minutes)
#
# Workloads (framegate-loadgen --mode rooms, publishers are members of their room):
#   1room      1 room, 3 hosts x 1,000 members, 3 publishers (one per host) x ONE_ROOM_RATE/s
#              (default 20: 180k deliveries/s offered, 60 publishes/s)
#   300rooms   300 rooms x 10 members over the 3 hosts, 300 publishers x MANY_ROOMS_RATE/s
#              (default 20: 6,000 publishes/s, 60k deliveries/s): Redis work per publish
#              dominates, which is where sharding could matter
#
# Environment:
#   MODES             redis modes in this order (default "single cluster")
#   WORKLOADS         subset of the workloads above (default "1room 300rooms")
#   ONE_ROOM_RATE, MANY_ROOMS_RATE   publishes per second per publisher (above)
#   DURATION          seconds per run (default 20; 5 with --quick)
#   BUILD_DIR         where bin/framegate* are (default build/)
#   FRAMEGATE_LOADGEN_BIN  load generator (default BUILD_DIR/bin/framegate-loadgen)
#   RESULTS_DIR       where multihost-fanout-<date>.json goes (default bench/results)
#   QUIET_WAIT        before each run, seconds to wait for the 1-minute load average
#                     to drop below 1.0 (default 120; 0 with --quick); runs started
#                     above it are marked "disturbed"
# Output: a markdown table on stdout (with the cluster/single ratios) and
# bench/results/multihost-fanout-<date>.json (the command, every run).
# Exit code 1 if a run failed a correctness check or a host's supervisor died.
set -euo pipefail

LOG_TAG=run_multihost_fanout
# shellcheck source=bench/bench_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
COMMAND_LINE="$0 $*"
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
LOADGEN=${FRAMEGATE_LOADGEN_BIN:-$BUILD_DIR/bin/framegate-loadgen}
MULTIHOST="$ROOT/deploy/multihost/multihost.sh"
MODES=${MODES:-single cluster}
WORKLOADS=${WORKLOADS:-1room 300rooms}
ONE_ROOM_RATE=${ONE_ROOM_RATE:-20}
MANY_ROOMS_RATE=${MANY_ROOMS_RATE:-20}
readonly HOSTS=3 MEMBERS_PER_HOST=1000

parse_bench_args 36 "$@"
if ((QUICK)); then DURATION=${DURATION:-5}; else DURATION=${DURATION:-20}; fi

((EUID == 0)) || die "needs root: multihost.sh makes network namespaces"
[[ -x "$LOADGEN" ]] || die "load generator not found: $LOADGEN (build framegate-loadgen)"
"$LOADGEN" --help | grep -q '198.18.0.0/15' || die "$LOADGEN cannot target the multihost network: rebuild framegate-loadgen"
command -v python3 >/dev/null || die "python3 is required for the report"
for m in $MODES; do
  case "$m" in single|cluster) ;; *) die "MODES: unknown redis mode '$m' (single, cluster)" ;; esac
done
for w in $WORKLOADS; do
  case "$w" in 1room|300rooms) ;; *) die "WORKLOADS: unknown workload '$w'" ;; esac
done

WORK=$(mktemp -d /tmp/mhfanout.XXXXXX)
STATE="$WORK/multihost"
SERVER_PID=""
declare -a PROBES=()
mh_down() {
  if [[ -d "$STATE" ]]; then "$MULTIHOST" down --state-dir "$STATE" >&2 || true; fi
}
trap 'mh_down; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

workload_args() {
  local members=$((HOSTS * MEMBERS_PER_HOST))
  case "$1" in
    1room) echo "--rooms 1 --members $members --publishers $HOSTS --publish-rate $ONE_ROOM_RATE" ;;
    300rooms) echo "--rooms 300 --members $members --publishers 300 --publish-rate $MANY_ROOMS_RATE" ;;
  esac
}

# mh_up MODE: the hosts and Redis; sets URLS, SERVER_PID (host 1's
# supervisor: check_run's liveness test), SUPERVISORS and PROBES (every
# gateway, worker and redis-server).
mh_up() {
  local mode=$1 i pid label
  "$MULTIHOST" up --hosts "$HOSTS" --redis-mode "$mode" --state-dir "$STATE" --build-dir "$BUILD_DIR" \
    --client-addrs 0 >"$WORK/up-$mode.log" 2>&1 || { cat "$WORK/up-$mode.log" >&2; die "multihost up ($mode) failed"; }
  PROBES=()
  SUPERVISORS=()
  URLS=""
  # resources: "pid PID STARTTIME LABEL", LABEL framegate:hI or redis:ADDR:PORT.
  i=0
  while read -r _ pid _ label; do
    case "$label" in
      framegate:h*) SUPERVISORS+=("$pid"); add_supervisor_probes "$pid" 1 "@${label#framegate:}" ;;
      redis:*) PROBES+=("--probe-pid" "redis$i=$pid"); i=$((i + 1)) ;;
    esac
  done < <(grep '^pid ' "$STATE/resources")
  for ((i = 1; i <= HOSTS; i++)); do
    URLS+="${URLS:+,}ws://$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hosts"][int(sys.argv[2])]["gateway"])' \
      "$STATE/run.json" $((i - 1)))/rooms"
  done
  SERVER_PID=${SUPERVISORS[0]}
}

# The workers' broker counters (docs/METRICS.md) as one JSON object,
# {"h1:198.18.0.1:9091": {"metric{labels}": value, ...}, ...}: where a loss
# happened (gaps, drops, redirects, subscriptions) when the loadgen sees one.
broker_metrics() {
  python3 - "$STATE/run.json" <<'EOF'
import json, re, sys, urllib.request
wanted = re.compile(r"^framegate_worker_(broker_(?!publish_seconds)|redis_cluster_)\S* ")
out = {}
for h in json.load(open(sys.argv[1]))["hosts"]:
    for admin in h["worker_admin"]:
        try:
            text = urllib.request.urlopen(f"http://{admin}/metrics", timeout=2).read().decode()
        except OSError as e:
            out[f"{h['name']}:{admin}"] = {"error": str(e)}
            continue
        out[f"{h['name']}:{admin}"] = {k: float(v) for k, v in
                                       (line.rsplit(" ", 1) for line in text.splitlines() if wanted.match(line))}
print(json.dumps(out))
EOF
}

status=0
runs=()
run_one() {  # run_one MODE WORKLOAD
  local mode=$1 wl=$2 stem out rc note="" args sup alive=true lg mid
  wait_quiet
  [[ $DISTURBED == true ]] && note=", disturbed"
  stem="$WORK/$wl.$mode"
  out="$stem.json"
  args="--mode rooms --url $URLS $(workload_args "$wl") --duration $DURATION --join-settle 2 --drain 2 --drain-max 10 --connect-rate 2000"
  echo "[$LOG_TAG] $wl over redis $mode (load $LOAD_BEFORE$note)" >&2
  # shellcheck disable=SC2086
  "$LOADGEN" $args "${PROBES[@]}" --json "$out" --no-progress >"$stem.txt" 2>"$stem.err" &
  lg=$!
  # Mid-window, every member joined: each worker's subscriptions (one per room
  # with members on its host: 300 in 300rooms) tell a missing one apart.
  wait_loadgen_ready "$stem.err" "$lg"
  sleep "$(((DURATION + 1) / 2))"
  mid=$(broker_metrics)
  set +e
  wait "$lg"
  rc=$?
  set -e
  check_run "$wl/$mode" "$stem" "$rc" || status=1
  for sup in "${SUPERVISORS[@]}"; do kill -0 "$sup" 2>/dev/null || alive=false; done
  [[ $alive == true ]] || { echo "[$LOG_TAG] $wl/$mode: a host's supervisor died" >&2; status=1; }
  # The hosts' warnings and errors (a refused subscription shows up here).
  cat "$STATE"/logs/h*-framegate.log | grep -E '\[(warn|warning|error|critical)\]' >"$stem.log" || true
  annotate_run "$out" "$stem.log" 20 workload="$wl" redis_mode="$mode" hosts="$HOSTS" \
    loadgen_command="framegate-loadgen $args --json FILE" loadgen_exit="$rc" server_alive="$alive" \
    broker_metrics="$(broker_metrics)" broker_metrics_mid="$mid" \
    load_before="$LOAD_BEFORE" load_after="$(cut -d' ' -f1 /proc/loadavg)" disturbed="$DISTURBED"
  runs+=("$out")
}

for mode in $MODES; do
  mh_up "$mode"
  # The cluster's nodes gossip for a moment after `up`; let them settle.
  [[ $mode == cluster ]] && sleep 2
  for wl in $WORKLOADS; do run_one "$mode" "$wl"; done
  mh_down
done

result=$(results_file multihost-fanout)
python3 "$BENCH/multihost_fanout_report.py" --out "$result" --quick "$QUICK" --duration "$DURATION" \
  --command "$COMMAND_LINE" --env "MODES=$MODES WORKLOADS=$WORKLOADS ONE_ROOM_RATE=$ONE_ROOM_RATE MANY_ROOMS_RATE=$MANY_ROOMS_RATE" \
  "${runs[@]}"
echo "[$LOG_TAG] results: $result" >&2
exit $status
