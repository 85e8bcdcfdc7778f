# shellcheck shell=bash
# Shell helpers shared by the benchmark scripts (sourced, not run).
# Each script sets LOG_TAG (e.g. run_fanout) and WORK (its scratch directory).

# Where things are: the repository, bench/, and where results go.
BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH")
RESULTS_DIR=${RESULTS_DIR:-$BENCH/results}

die() { echo "$LOG_TAG: $*" >&2; exit 2; }

# The scripts' shared command line: --quick sets QUICK=1; -h/--help prints
# the calling script's header comment (lines 2..HELP_END) and exits.
# QUIET_WAIT defaults to 120 s, and to 0 with --quick: a smoke test does not
# care about the figures.
parse_bench_args() {  # parse_bench_args HELP_END "$@"
  local help_end=$1 arg
  shift
  QUICK=0
  for arg in "$@"; do
    case "$arg" in
      --quick) QUICK=1 ;;
      -h|--help) sed -n "2,${help_end}p" "${BASH_SOURCE[1]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
      *) die "unknown argument $arg (try --help)" ;;
    esac
  done
  if ((QUICK)); then QUIET_WAIT=${QUIET_WAIT:-0}; else QUIET_WAIT=${QUIET_WAIT:-120}; fi
}

# cpu_placement: SERVER_ON and LOADGEN_ON, the prefixes that start the
# servers (gateway, workers, peers, Redis where a script starts it) and the
# load generator on the CPUs of SERVER_CPUS and LOADGEN_CPUS (taskset lists
# such as 0-1 or 2,3), or empty when unset: the scheduler places them. On a
# host with cores to spare, a load generator on cores of its own measures
# the servers, not their contention with it; on two cores, pinned, the
# load generator's own queueing becomes every server's floor (BENCHMARKS,
# "Fifteenth step"). PLACEMENT describes it for the results.
# shellcheck disable=SC2034  # SERVER_ON, LOADGEN_ON and PLACEMENT are for the scripts that source this
cpu_placement() {
  SERVER_ON=()
  LOADGEN_ON=()
  PLACEMENT="the scheduler's"
  [[ -n ${SERVER_CPUS:-} || -n ${LOADGEN_CPUS:-} ]] || return 0
  command -v taskset >/dev/null || die "SERVER_CPUS/LOADGEN_CPUS need taskset (util-linux)"
  local name list
  for name in SERVER_CPUS LOADGEN_CPUS; do
    list=${!name:-}
    [[ -z $list ]] || taskset -c "$list" true 2>/dev/null ||
      die "$name=$list: not a CPU list of this machine (online: $(cat /sys/devices/system/cpu/online))"
  done
  [[ -z ${SERVER_CPUS:-} ]] || SERVER_ON=(taskset -c "$SERVER_CPUS")
  [[ -z ${LOADGEN_CPUS:-} ]] || LOADGEN_ON=(taskset -c "$LOADGEN_CPUS")
  PLACEMENT="servers on CPUs ${SERVER_CPUS:-any}, load generator on CPUs ${LOADGEN_CPUS:-any}"
}

# bin_beside OVERRIDE ANCHOR NAME: the binary to run: OVERRIDE if set, else
# NAME beside the ANCHOR binary if it is there, else build/bin/NAME.
bin_beside() {
  local override=$1 beside
  beside="$(dirname "$2")/$3"
  if [[ -n "$override" ]]; then
    echo "$override"
  elif [[ -x "$beside" ]]; then
    echo "$beside"
  else
    echo "$ROOT/build/bin/$3"
  fi
}

need_node_modules() {  # need_node_modules PACKAGE...: npm ci in bench/ unless all are installed
  local p
  for p in "$@"; do
    [[ -d "$BENCH/node_modules/$p" ]] && continue
    echo "[$LOG_TAG] installing the Node peers' packages (npm ci in bench/)" >&2
    (cd "$BENCH" && npm ci --no-audit --no-fund --loglevel=error >&2)
    return 0
  done
}

# The uWebSockets peers (PEERS kinds, both scripts):
#   uws         uWebSockets.js from @trufflesuite/uws-js-unofficial (an optional
#               dependency in bench/package.json: its binaries cover Node 16/18/20
#               on Linux, macOS and Windows; bench/peers/uws-common.js loads one);
#   uws-native  the C++ peer built by bench/peers/uws/build.sh from a uWebSockets
#               checkout, at UWS_NATIVE_BIN.
# default_uws_peers: the kinds a default PEERS includes: uws always (dropped
# below if it cannot load), uws-native when UWS_NATIVE_BIN is set.
default_uws_peers() {
  echo "uws${UWS_NATIVE_BIN:+ uws-native}"
}

# check_uws_peers EXPLICIT: after the Node packages are installed, a uWS kind
# in PEERS that cannot run is fatal if the user named it (EXPLICIT=1: PEERS
# was set), else dropped from PEERS with a note saying why and how to enable it.
check_uws_peers() {
  local explicit=$1 why="" kind kept=()
  for kind in $PEERS; do
    why=""
    case "$kind" in
      uws)
        if ! command -v node >/dev/null; then
          why="node is not installed"
        elif ! why=$(cd "$BENCH" && node -e "require('./peers/uws-common').load_uws('uws peer')" 2>&1); then
          why=${why:-uWebSockets.js does not load}
        else
          why=""
        fi
        ;;
      uws-native)
        if [[ -z "${UWS_NATIVE_BIN:-}" ]]; then
          why="UWS_NATIVE_BIN is not set (build the peer: bench/peers/uws/build.sh SRC_DIR)"
        elif [[ ! -x "$UWS_NATIVE_BIN" ]]; then
          why="UWS_NATIVE_BIN=$UWS_NATIVE_BIN is not an executable (bench/peers/uws/build.sh SRC_DIR builds it)"
        fi
        ;;
    esac
    if [[ -z "$why" ]]; then
      kept+=("$kind")
    elif ((explicit)); then
      die "PEERS has $kind, which cannot run: $why"
    else
      echo "[$LOG_TAG] skipping the $kind peer: $why" >&2
    fi
  done
  PEERS="${kept[*]}"
  [[ -n "$PEERS" ]] || die "PEERS is empty"
}

stop_pid() {  # stop_pid PID NAME: SIGTERM, SIGKILL after 10 s, reaped
  local pid=$1 name=$2 i
  [[ -n "$pid" ]] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; ++i)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "[$LOG_TAG] $name (pid $pid) ignored SIGTERM for 10 s: SIGKILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  wait "$pid" 2>/dev/null || true
}

stop_server() {  # stop_server [NAME]: stops SERVER_PID (see stop_pid) and forgets it
  stop_pid "$SERVER_PID" "${1:-server}"
  SERVER_PID=""
}

stop_redis() {
  stop_pid "$REDIS_PID" redis-server
  REDIS_PID=""
}

# BACKGROUND_PIDS: a script's own helpers (load generators, samplers) that
# run beside the server; stopped before it.
BACKGROUND_PIDS=()
stop_background() {
  local pid
  for pid in "${BACKGROUND_PIDS[@]}"; do stop_pid "$pid" "background process"; done
  BACKGROUND_PIDS=()
}

# The scripts that run one server (and Redis) at a time: whatever still runs
# is stopped, and WORK removed, however the script ends.
stop_all_on_exit() {
  trap 'stop_background; stop_server; stop_redis; rm -rf "$WORK"' EXIT
  trap 'exit 130' INT TERM
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_redis() {  # a fresh redis-server on a free loopback port: sets REDIS_PID, REDIS_URL
  local port i
  port=$(free_port)
  "${SERVER_ON[@]}" redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --loglevel warning \
    >"$WORK/redis.log" 2>&1 &
  REDIS_PID=$!
  for ((i = 0; i < 100; ++i)); do
    if redis-cli -h 127.0.0.1 -p "$port" PING 2>/dev/null | grep -q PONG; then
      REDIS_URL="redis://127.0.0.1:$port"
      return 0
    fi
    sleep 0.05
  done
  die "redis-server did not answer on port $port"
}

# wait_listening FILE PATTERN: waits for PATTERN (ending in :PORT) in FILE
# while SERVER_PID lives; sets PORT.
# shellcheck disable=SC2034  # PORT is for the scripts that source this
wait_listening() {
  local file=$1 pattern=$2 i line
  for ((i = 0; i < 300; ++i)); do
    line=$(grep -m1 -oE "$pattern" "$file" 2>/dev/null || true)
    if [[ -n "$line" ]]; then
      PORT=$(sed -E 's/.*:([0-9]+)\/?$/\1/' <<<"$line")
      return 0
    fi
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$file" >&2; die "server exited during start-up"; }
    sleep 0.05
  done
  cat "$file" >&2
  die "server did not print its address within 15 s"
}

# start_echo_kind KIND DIR: one echo server of the kinds of bench/run_echo.sh
# (framegate, workers, ws, uws, uws-native), one gateway thread, logs in DIR.
# `workers` is the gateway plus one framegate-worker (/echo) linked through
# DIR/links. Sets SERVER_PID, WORKER_PID (workers only), PORT and ECHO_PATH;
# the caller sets GATEWAY and WORKER. Returns 1, with both stopped, if the
# worker does not register within 10 s.
# shellcheck disable=SC2034  # ECHO_PATH is for the scripts that source this
start_echo_kind() {
  local kind=$1 dir=$2 log=$2/$1.log
  ECHO_PATH=/
  WORKER_PID=""
  case "$kind" in
    framegate) "${SERVER_ON[@]}" "$GATEWAY" --echo --listen 127.0.0.1:0 --threads 1 --admin off >"$log" 2>&1 & ;;
    workers)
      mkdir -p "$dir/links"
      "${SERVER_ON[@]}" "$GATEWAY" --listen 127.0.0.1:0 --threads 1 --link-dir "$dir/links" --admin off >"$log" 2>&1 &
      ECHO_PATH=/echo
      ;;
    ws) "${SERVER_ON[@]}" node "$BENCH/peers/ws-echo.js" 0 127.0.0.1 >"$log" 2>&1 & ;;
    uws) "${SERVER_ON[@]}" node "$BENCH/peers/uws-echo.js" 0 127.0.0.1 >"$log" 2>&1 & ;;
    uws-native) "${SERVER_ON[@]}" "$UWS_NATIVE_BIN" echo 0 127.0.0.1 >"$log" 2>&1 & ;;
    *) die "unknown server kind '$kind' (framegate, workers, ws, uws, uws-native)" ;;
  esac
  SERVER_PID=$!
  wait_listening "$log" 'listening on [^ ]+:[0-9]+'
  [[ $kind == workers ]] || return 0
  "${SERVER_ON[@]}" "$WORKER" --id w1 --link-dir "$dir/links" >"$dir/worker.log" 2>&1 &
  WORKER_PID=$!
  for _ in $(seq 100); do
    grep -q "worker 'w1' .*registered" "$log" && return 0
    sleep 0.1
  done
  echo "[$LOG_TAG] the worker did not register" >&2
  stop_pid "$WORKER_PID" worker
  WORKER_PID=""
  stop_server "$kind"
  return 1
}

# Waits up to QUIET_WAIT s for the 1-minute load average to drop below 1.0;
# sets LOAD_BEFORE and DISTURBED.
# shellcheck disable=SC2034  # LOAD_BEFORE and DISTURBED are for the scripts that source this
wait_quiet() {
  local waited=0 load
  load=$(cut -d' ' -f1 /proc/loadavg)
  while ((waited < QUIET_WAIT)) && python3 -c "import sys; sys.exit(0 if float('$load') >= 1.0 else 1)"; do
    ((waited == 0)) && echo "[$LOG_TAG] load average $load: waiting up to ${QUIET_WAIT}s for < 1.0" >&2
    sleep 5
    waited=$((waited + 5))
    load=$(cut -d' ' -f1 /proc/loadavg)
  done
  LOAD_BEFORE=$load
  DISTURBED=$(python3 -c "print('true' if float('$load') >= 1.0 else 'false')")
}

# add_supervisor_probes PID WORKERS SUFFIX: the children of the `framegate
# up` supervisor PID, once its WORKERS workers run, as loadgen --probe-pid
# arguments appended to PROBES: gatewaySUFFIX, workerSUFFIX0.., and
# supervisorSUFFIX (SUFFIX, e.g. "@h1", tells hosts apart: gateway@h1, worker@h1-0; "" for
# one host: gateway, worker0).
add_supervisor_probes() {
  local sup=$1 workers=$2 suffix=$3 n p i
  for ((i = 0; i < 100; ++i)); do
    n=$(ps --ppid "$sup" -o pid=,comm= | awk '$2 ~ /framegate-worke/ {print $1}' | wc -l)
    ((n >= workers)) && break
    sleep 0.05
  done
  p=$(ps --ppid "$sup" -o pid=,comm= | awk '$2 ~ /framegate-gatew/ {print $1}' | head -1)
  [[ -n "$p" ]] && PROBES+=("--probe-pid" "gateway$suffix=$p")
  i=0
  for p in $(ps --ppid "$sup" -o pid=,comm= | awk '$2 ~ /framegate-worke/ {print $1}'); do
    PROBES+=("--probe-pid" "worker$suffix${suffix:+-}$i=$p")
    i=$((i + 1))
  done
  PROBES+=("--probe-pid" "supervisor$suffix=$sup")
}

# start_rooms_server framegate|node|uws|uws-native [SERVER ARGS...]: the
# cluster serving /rooms (framegate up with WORKERS workers and GATEWAY_THREADS
# gateway threads, the Node cluster
# peer, or a one-process uWS peer without Redis) on a free port, sharing
# REDIS_URL; sets SERVER_PID, PORT and PROBES (the loadgen's --probe-pid
# arguments for every process of the cluster).
start_rooms_server() {
  local kind=$1 p i
  shift
  PROBES=()
  GATEWAY_ADMIN=""
  [[ -n "${REDIS_PID:-}" ]] && PROBES+=("--probe-pid" "redis=$REDIS_PID")
  : >"$WORK/server.log"  # before the start: wait_listening must not find the last run's line
  case "$kind" in
    framegate)
      # The admin listeners on free ports (the defaults, 9090 and 9091 on,
      # could be taken by another cluster): gateway_write_counters reads the
      # gateway's /metrics.
      # GATEWAY_THREADS reaches the gateway as framegate up's --threads (by
      # FRAMEGATE_THREADS); unset, 0: one per core, as in every run recorded
      # before framegate up's own default became half the cores.
      GATEWAY_ADMIN="127.0.0.1:$(free_port)"
      # Without a Redis of the script's (REDIS_URL unset), rooms go through the gateway's hub.
      local broker=(--no-redis)
      [[ -n "${REDIS_URL:-}" ]] && broker=(--redis "$REDIS_URL")
      # shellcheck disable=SC2153  # WORKERS is set by the script that sources this
      FRAMEGATE_THREADS="${GATEWAY_THREADS:-0}" "${SERVER_ON[@]}" "$FRAMEGATE" up --listen 127.0.0.1:0 --workers "$WORKERS" "${broker[@]}" \
        --admin "$GATEWAY_ADMIN" --worker-admin 127.0.0.1:0 --log-level info "$@" >"$WORK/server.log" 2>&1 &
      SERVER_PID=$!
      wait_listening "$WORK/server.log" 'gateway listening on ws://[0-9.]+:[0-9]+/?'
      add_supervisor_probes "$SERVER_PID" "$WORKERS" ""
      ;;
    node)
      "${SERVER_ON[@]}" node "$BENCH/peers/node-cluster-rooms.js" --port 0 --workers "$WORKERS" --redis "$REDIS_URL" "$@" \
        >"$WORK/server.log" 2>&1 &
      SERVER_PID=$!
      wait_listening "$WORK/server.log" 'listening on [0-9.]+:[0-9]+'
      PROBES+=("--probe-pid" "primary=$SERVER_PID")
      for ((i = 0; i < 100; ++i)); do
        grep -q '^pids ' "$WORK/server.log" && break
        sleep 0.05
      done
      i=0
      for p in $(sed -n 's/^pids .*workers=//p' "$WORK/server.log" | tr ',' ' '); do
        PROBES+=("--probe-pid" "worker$i=$p")
        i=$((i + 1))
      done
      ;;
    uws | uws-native)
      if [[ $kind == uws ]]; then
        "${SERVER_ON[@]}" node "$BENCH/peers/uws-rooms.js" --port 0 --host 127.0.0.1 "$@" >"$WORK/server.log" 2>&1 &
      else
        "${SERVER_ON[@]}" "$UWS_NATIVE_BIN" rooms 0 127.0.0.1 "$@" >"$WORK/server.log" 2>&1 &
      fi
      SERVER_PID=$!
      wait_listening "$WORK/server.log" 'listening on [0-9.]+:[0-9]+'
      PROBES+=("--probe-pid" "server=$SERVER_PID")
      ;;
  esac
}

# wait_cluster_ready LOG: after start_rooms_server framegate, waits (10 s at
# most) until each of the WORKERS workers has said in LOG that it registered
# with the gateway, then 2 s more for the links' first turns.
wait_cluster_ready() {
  local i n=0
  for ((i = 0; i < 100; ++i)); do
    n=$(grep -c "registered with gateway" "$1" || true)
    ((n >= WORKERS)) && break
    sleep 0.1
  done
  ((n >= WORKERS)) || { tail -20 "$1" >&2; die "$n of $WORKERS workers registered within 10 s"; }
  sleep 2
}

# gateway_write_counters ADMIN: the framegate gateway's client-write
# counters from http://ADMIN/metrics as one JSON object (summed over labels):
# messages_sent, socket_writes, write_slices, write_slices_cut; {} when the
# gateway does not answer.
gateway_write_counters() {
  python3 - "$1" <<'EOF'
import json, sys, urllib.request
names = {"framegate_gateway_messages_sent_total": "messages_sent", "framegate_gateway_socket_writes_total": "socket_writes",
         "framegate_gateway_write_slices_total": "write_slices", "framegate_gateway_write_slices_cut_total": "write_slices_cut"}
try:
    text = urllib.request.urlopen(f"http://{sys.argv[1]}/metrics", timeout=5).read().decode()
except OSError:
    print("{}")
    sys.exit(0)
out = {}
for line in text.splitlines():
    name = line.split("{")[0].split(" ")[0]
    if name in names:
        out[names[name]] = out.get(names[name], 0) + float(line.rsplit(" ", 1)[1])
print(json.dumps(out))
EOF
}

# write_counter_deltas BEFORE AFTER: AFTER - BEFORE of two
# gateway_write_counters objects ({} unless both have the same counters).
write_counter_deltas() {
  python3 -c 'import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(json.dumps({k: b[k] - a[k] for k in b} if a and a.keys() == b.keys() else {}))' "$1" "$2"
}

# check_run NAME STEM RC: after one loadgen run (stdout in STEM.txt, stderr
# in STEM.err, exit code RC), shows its summary and sets ALIVE (true/false:
# SERVER_PID still runs); returns 1 if the load generator failed or the
# server died.
check_run() {
  local name=$1 stem=$2 rc=$3 failed=0
  sed 's/^/    /' "$stem.txt" >&2
  ALIVE=true
  kill -0 "$SERVER_PID" 2>/dev/null || ALIVE=false
  ((rc == 0)) || { echo "[$LOG_TAG] $name: loadgen exit code $rc" >&2; tail -3 "$stem.err" >&2; failed=1; }
  [[ $ALIVE == true ]] || { echo "[$LOG_TAG] $name: the server died" >&2; failed=1; }
  return $failed
}

# annotate_run JSON LOG LINES KEY=VALUE...: adds the pairs to one run's
# loadgen JSON (a value that parses as JSON, a number or true/false, is
# stored as such, any other as a string) and the last LINES lines of the
# server's LOG. A run that wrote no JSON gets an "error" entry instead.
annotate_run() {
  python3 - "$@" <<'EOF'
import json, sys
path, log, lines, *pairs = sys.argv[1:]
try:
    d = json.load(open(path))
except Exception as e:
    d = {"error": f"no loadgen JSON: {e}"}
for pair in pairs:
    key, value = pair.split("=", 1)
    try:
        d[key] = json.loads(value)
    except ValueError:
        d[key] = value
d["server_log_tail"] = open(log, errors="replace").read().splitlines()[-int(lines):]
json.dump(d, open(path, "w"), indent=1)
EOF
}

# results_file NAME: RESULTS_DIR/NAME-<date>[-runN][-quick].json (RESULTS_DIR
# created): a later run of the same day gets -run2, -run3, ... instead of
# overwriting the first.
results_file() {
  local suffix="" base n=2
  ((QUICK)) && suffix="-quick"
  mkdir -p "$RESULTS_DIR"
  base="$RESULTS_DIR/$1-$(date -u +%Y-%m-%d)"
  if [[ -e "$base$suffix.json" ]]; then
    while [[ -e "$base-run$n$suffix.json" ]]; do n=$((n + 1)); done
    base="$base-run$n"
  fi
  echo "$base$suffix.json"
}

rss_kib() {  # rss_kib PID: VmRSS of a process in KiB (0 if gone)
  awk '/^VmRSS:/ {print $2; found=1} END {if (!found) print 0}' "/proc/$1/status" 2>/dev/null || echo 0
}

# wait_loadgen_ready ERR PID: waits (60 s at most) until the load generator
# PID has printed its "[loadgen] ready" line to ERR (every connection open,
# the load starting), or has exited.
wait_loadgen_ready() {
  local i
  for ((i = 0; i < 600; ++i)); do
    grep -q '^\[loadgen\] ready' "$1" && return 0
    kill -0 "$2" 2>/dev/null || return 0
    sleep 0.1
  done
}

cpu_placement  # every script that sources this starts its processes where asked
