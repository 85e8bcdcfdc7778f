#!/usr/bin/env bash
# Side-by-side echo benchmark: the same workloads, one after another, against
#   framegate  `framegate-gateway --echo` (the gateway answers every message itself),
#   workers    the full path: the gateway plus WORKERS `framegate-worker` processes on a
#              private link directory; each message crosses the Unix-socket link to a
#              worker whose /echo app sends it back through the gateway,
#   ws         the Node.js `ws` peer (bench/peers/ws-echo.js),
#   uws        uWebSockets.js (bench/peers/uws-echo.js, npm @trufflesuite/uws-js-unofficial):
#              the uWS C++ core, with one JavaScript call per echoed message,
#   uws-native the C++ uWebSockets peer (bench/peers/uws/, built by its build.sh
#              from a uWebSockets checkout), when UWS_NATIVE_BIN is set,
# each server fresh for each workload on a free 127.0.0.1 port and stopped by PID.
#
#   bench/run_echo.sh            full run (about 8 minutes, plus waits for a quiet machine)
#   bench/run_echo.sh --quick    small sizes and durations (smoke test, ~2 minutes with uws)
#
# Environment:
#   FRAMEGATE_GATEWAY_BIN   gateway binary   (default build/bin/framegate-gateway)
#   FRAMEGATE_LOADGEN_BIN   load generator   (default: next to the gateway, else build/bin)
#   FRAMEGATE_WORKER_BIN    worker binary    (default: next to the gateway, else build/bin)
#   PEERS                   which servers, in this order per workload (default "framegate workers ws
#                           uws", plus uws-native when UWS_NATIVE_BIN is set; a default uWS peer that
#                           cannot run is skipped with a note, one named in PEERS is an error)
#   UWS_NATIVE_BIN          the native uWS peer binary (bench/peers/uws/build.sh SRC_DIR prints it)
#   GATEWAY_THREADS         gateway --threads, both framegate kinds (default 1: the one core Node gets)
#   WORKERS                 worker processes of the `workers` kind (default 1; on a 2-core box the
#                           gateway thread, one worker and the load generator already share the cores)
#   OPCODE                  text|binary (default text: both servers validate UTF-8, as in production)
#   SERVER_CPUS, LOADGEN_CPUS  taskset CPU lists for the servers (gateway, workers, peers) and the
#                           load generator, e.g. 0-1 and 2-3 on a 4-core host: the load generator on
#                           cores of its own (default: unset, the scheduler places every process)
#   RESULTS_DIR             where echo-<date>.json goes (default bench/results)
#   QUIET_WAIT              before each run, seconds to wait for other processes to go quiet
#                           (default 120; 0 with --quick). A full run starts with a warm-up run
#                           against the first peer that is not recorded.
#   WORKLOADS               which workloads, a subset of "rate rate50k window64 window1k idle"
#                           (default all)
#   TAIL_ROUNDS             rounds of the 50k/s open loop for the peers its checks compare
#                           (framegate, workers, uws-native); the checks take each peer's median
#                           p99 (default 5; 1 with --quick: round 1 follows the 100k/s runs
#                           and has been the worst of framegate's in every full run so far)
#   WINDOW_ROUNDS           rounds of each closed loop (window64, window1k) for the same peers; the
#                           worker-path checks take the median of the rounds' through-workers /
#                           gateway ratios, each from two runs back to back (default 3; 1 with --quick)
# The idle-connections workload runs for every kind but workers (a worker holds
# one table entry per connection and no socket; its RSS growth per connection
# is reported from the open-loop run instead).
# Output: a markdown table on stdout, bench/results/echo-<date>.json, and a PNG
# of the ratios if python3-matplotlib is installed. Exit code 1 if a run failed
# its echo checks or a server died.
set -euo pipefail

LOG_TAG=run_echo
# shellcheck source=bench/bench_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
GATEWAY=${FRAMEGATE_GATEWAY_BIN:-$ROOT/build/bin/framegate-gateway}
LOADGEN=$(bin_beside "${FRAMEGATE_LOADGEN_BIN:-}" "$GATEWAY" framegate-loadgen)
WORKER=$(bin_beside "${FRAMEGATE_WORKER_BIN:-}" "$GATEWAY" framegate-worker)
PEERS_EXPLICIT=$([[ -n "${PEERS:-}" ]] && echo 1 || echo 0)
PEERS=${PEERS:-framegate workers ws $(default_uws_peers)}
WORKERS=${WORKERS:-1}
GATEWAY_THREADS=${GATEWAY_THREADS:-1}
OPCODE=${OPCODE:-text}

parse_bench_args 42 "$@"

[[ -x "$GATEWAY" ]] || die "gateway binary not found: $GATEWAY (build it, or set FRAMEGATE_GATEWAY_BIN)"
[[ -x "$LOADGEN" ]] || die "load generator not found: $LOADGEN (build the framegate-loadgen target, or set FRAMEGATE_LOADGEN_BIN)"
for p in $PEERS; do
  case "$p" in
    framegate|workers|ws|uws|uws-native) ;;
    *) die "PEERS: unknown server kind '$p' (framegate, workers, ws, uws, uws-native)" ;;
  esac
done
[[ -n "${PEERS// /}" ]] || die "PEERS is empty"
WORKLOADS=${WORKLOADS:-rate rate50k window64 window1k idle}
for wl in $WORKLOADS; do
  case "$wl" in rate | rate50k | window64 | window1k | idle) ;; *) die "WORKLOADS: unknown workload '$wl'" ;; esac
done
wants() { [[ " $WORKLOADS " == *" $1 "* ]]; }
has_peer() { [[ " $PEERS " == *" $1 "* ]]; }
[[ "$WORKERS" =~ ^[1-9][0-9]*$ ]] || die "WORKERS must be a positive integer (got '$WORKERS')"
# One run's p99 at 50k/s is decided by the scheduler of two shared cores: it
# swings several-fold between runs (native uWS: 1.74 ms in one full run,
# 20 ms in the next). The checks compare medians over rounds instead.
TAIL_ROUNDS=${TAIL_ROUNDS:-$( ((QUICK)) && echo 1 || echo 5)}
[[ "$TAIL_ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "TAIL_ROUNDS must be a positive integer (got '$TAIL_ROUNDS')"
# The closed loops swing too: one 1 KiB run of the same build ranged from
# 402k to 668k msg/s in five runs of one afternoon (docs/BENCHMARKS.md).
WINDOW_ROUNDS=${WINDOW_ROUNDS:-$( ((QUICK)) && echo 1 || echo 3)}
[[ "$WINDOW_ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "WINDOW_ROUNDS must be a positive integer (got '$WINDOW_ROUNDS')"
if has_peer workers; then
  [[ -x "$WORKER" ]] || die "worker binary not found: $WORKER (build it, or set FRAMEGATE_WORKER_BIN)"
fi
if has_peer ws; then
  command -v node >/dev/null || die "node is required for the ws peer"
fi
command -v python3 >/dev/null || die "python3 is required for the report"
# One npm ci installs ws and, where its binaries fit, uWebSockets.js.
if has_peer ws || has_peer uws; then need_node_modules ws; fi
check_uws_peers "$PEERS_EXPLICIT"
[[ -z "${UWS_NATIVE_BIN:-}" ]] || UWS_NATIVE_BIN=$(realpath "$UWS_NATIVE_BIN")

# Both servers and the load generator need thousands of descriptors.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# Workloads: name, then loadgen arguments. The source addresses only matter
# for the idle test (more connections than one address's ephemeral ports
# would comfortably hold on a busy machine).
if [[ $QUICK == 1 ]]; then
  RATE_ARGS=(--mode rate --connections 200 --size 256 --rate-per-conn-ms 10 --warmup 0.5 --duration 2)
  RATE50K_ARGS=(--mode rate --connections 200 --size 256 --rate-per-conn-ms 20 --warmup 0.5 --duration 2)
  W64_ARGS=(--mode window --connections 20 --window 16 --size 64 --warmup 0.5 --duration 2)
  W1K_ARGS=(--mode window --connections 20 --window 16 --size 1024 --warmup 0.5 --duration 2)
  IDLE_N=1000
  IDLE_ARGS=(--mode idle --connections "$IDLE_N" --duration 1 --source-ips "127.0.0.2,127.0.0.3")
else
  RATE_ARGS=(--mode rate --connections 1000 --size 256 --rate-per-conn-ms 10 --warmup 2 --duration 20)
  RATE50K_SHAPE=(--mode rate --connections 1000 --size 256 --rate-per-conn-ms 20)
  RATE50K_ARGS=("${RATE50K_SHAPE[@]}" --warmup 2 --duration 20)
  W64_ARGS=(--mode window --connections 100 --window 16 --size 64 --warmup 1 --duration 10)
  W1K_ARGS=(--mode window --connections 100 --window 16 --size 1024 --warmup 1 --duration 10)
  IDLE_N=15000
  IDLE_ARGS=(--mode idle --connections "$IDLE_N" --duration 5 --source-ips "127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5")
fi

# The two cores are shared by the server and the load generator; anything
# else running (a build, a test suite) changes the figures. Wait a while for
# a quiet machine, then go on anyway: each run reports the CPU of "other
# processes" so a disturbed figure can be recognised.
busy_pct() {  # machine-wide busy CPU over 1 s, in % of one core
  local a b
  a=$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $5+$6}' /proc/stat)
  sleep 1
  b=$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $5+$6}' /proc/stat)
  awk -v a="$a" -v b="$b" -v hz="$(getconf CLK_TCK)" 'BEGIN{split(a,x," "); split(b,y," "); printf "%d", (y[1]-x[1])*100/hz}'
}
wait_quiet() {  # before each run: up to QUIET_WAIT s for the machine to be idle
  local waited busy
  for ((waited = 0; ; waited += 3)); do
    busy=$(busy_pct)
    if (( busy <= 25 )); then return 0; fi
    if (( waited >= QUIET_WAIT )); then
      echo "[run_echo] warning: the machine is still busy (${busy}% of a core used by other processes); figures will be disturbed" >&2
      return 0
    fi
    echo "[run_echo] machine busy (${busy}% of a core): waiting for it to calm down ($waited/$QUIET_WAIT s)" >&2
    sleep 2
  done
}

STAMP=$(date -u +%Y%m%d-%H%M%S)
RAW_DIR=$(mktemp -d "${TMPDIR:-/tmp}/framegate-echo-$STAMP.XXXXXX")
mkdir -p "$RESULTS_DIR"
SERVER_PID=""      # the gateway (framegate, workers), node (ws, uws) or the uws-native peer
SERVER_PORT=""
SERVER_PATH="/"    # what the load generator targets: the workers' app is mounted at /echo
WORKER_PIDS=()     # workers kind: one PID per framegate-worker
WORKER_IDS=()
LINK_DIR=""        # workers kind: the private link directory
SAMPLER_PID=""
FAILED=0

stop_servers() {  # the sampler, the workers and the gateway (or node)
  if [[ -n "$SAMPLER_PID" ]]; then
    kill -TERM "$SAMPLER_PID" 2>/dev/null || true
    wait "$SAMPLER_PID" 2>/dev/null || true
    SAMPLER_PID=""
  fi
  # Workers first: the gateway then sees its links close instead of the
  # workers retrying a link directory that is going away.
  local i
  for i in "${!WORKER_PIDS[@]}"; do stop_pid "${WORKER_PIDS[$i]}" "worker ${WORKER_IDS[$i]}"; done
  WORKER_PIDS=()
  WORKER_IDS=()
  stop_server server
  if [[ -n "$LINK_DIR" ]]; then
    rm -rf "$LINK_DIR"
    LINK_DIR=""
  fi
}
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
  stop_servers
  rm -rf "$RAW_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_server framegate|workers|ws|uws|uws-native LOGFILE: sets SERVER_PID, SERVER_PORT, SERVER_PATH
# (and, for workers, WORKER_PIDS, WORKER_IDS, LINK_DIR). The admin listener is
# off: it has no cost, but its fixed default port could collide with another
# gateway running on the machine (CI).
start_server() {
  local kind=$1 log=$2
  SERVER_PATH="/"
  case "$kind" in
    framegate)
      "${SERVER_ON[@]}" "$GATEWAY" --echo --listen 127.0.0.1:0 --threads "$GATEWAY_THREADS" --admin off >"$log" 2>&1 &
      ;;
    workers)
      LINK_DIR=$(mktemp -d "${TMPDIR:-/tmp}/fg-echo-link.XXXXXX")
      "${SERVER_ON[@]}" "$GATEWAY" --listen 127.0.0.1:0 --threads "$GATEWAY_THREADS" --link-dir "$LINK_DIR" --admin off \
        >"$log" 2>&1 &
      SERVER_PATH="/echo"
      ;;
    ws)
      "${SERVER_ON[@]}" node "$BENCH/peers/ws-echo.js" 0 127.0.0.1 >"$log" 2>&1 &
      ;;
    uws)
      "${SERVER_ON[@]}" node "$BENCH/peers/uws-echo.js" 0 127.0.0.1 >"$log" 2>&1 &
      ;;
    uws-native)
      "${SERVER_ON[@]}" "$UWS_NATIVE_BIN" echo 0 127.0.0.1 >"$log" 2>&1 &
      ;;
  esac
  SERVER_PID=$!
  SERVER_PORT=""
  for _ in $(seq 1 200); do
    SERVER_PORT=$(grep -oE 'listening on [^ ]+:[0-9]+' "$log" 2>/dev/null | head -1 | grep -oE '[0-9]+$' || true)
    [[ -n "$SERVER_PORT" ]] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.05
  done
  if [[ -z "$SERVER_PORT" ]]; then
    echo "[run_echo] $kind did not start; its log:" >&2
    cat "$log" >&2
    exit 1
  fi
  [[ $kind == workers ]] || return 0
  # Workers link to every link-<thread>.sock; the gateway logs one
  # "worker 'wK' (pid P, ...) registered" line per worker.
  local k registered=0
  for ((k = 1; k <= WORKERS; k++)); do
    "${SERVER_ON[@]}" "$WORKER" --id "w$k" --link-dir "$LINK_DIR" >"${log%.server.log}.worker-w$k.log" 2>&1 &
    WORKER_PIDS+=("$!")
    WORKER_IDS+=("w$k")
  done
  for _ in $(seq 1 200); do
    registered=$(grep -cE "worker '.*' \(pid [0-9]+.*registered" "$log" 2>/dev/null || true)
    (( registered >= WORKERS )) && return 0
    sleep 0.05
  done
  echo "[run_echo] only $registered of $WORKERS workers registered within 10 s; gateway log:" >&2
  tail -20 "$log" >&2
  for k in "${!WORKER_IDS[@]}"; do
    echo "[run_echo] worker ${WORKER_IDS[$k]} log:" >&2
    tail -5 "${log%.server.log}.worker-${WORKER_IDS[$k]}.log" >&2
  done
  exit 1
}

# proc_sample PID: prints "utime+stime ticks" and "VmRSS KiB" of one process.
proc_sample() {
  local stat rss=0 k v _
  read -r stat <"/proc/$1/stat" 2>/dev/null || { echo "0 0"; return; }
  # Fields after "comm)": 3 state ... 14 utime, 15 stime.
  local -a f
  read -r -a f <<<"${stat##*) }"
  while read -r k v _; do [[ $k == VmRSS: ]] && rss=$v; done <"/proc/$1/status" 2>/dev/null || true
  echo "$((f[11] + f[12])) $rss"
}

# sample_workers PROGRESS_FILE OUT_JSON WARMUP DURATION LOADGEN_PID: run in the
# background during a workers-kind loadgen run. The load generator's JSON has
# no timestamps of its measured window, but it prints "[loadgen] ready:" right
# after fixing them: load starts 20 ms later, the window after --warmup, and
# lasts --duration. The worker processes' utime+stime and VmRSS are sampled
# at those edges (within ~10 ms: the polling below and 100 Hz ticks).
sample_workers() {
  local progress=$1 out=$2 warmup=$3 duration=$4 lg=$5
  local sfd t_ready t_start t_end i
  exec {sfd}<> <(:)  # `read -t` on this descriptor is a sleep without a fork
  local -a before start end
  for i in "${!WORKER_PIDS[@]}"; do before[i]=$(proc_sample "${WORKER_PIDS[$i]}"); done
  until grep -q 'ready:' "$progress" 2>/dev/null; do
    kill -0 "$lg" 2>/dev/null || return 0
    read -r -t 0.005 -u "$sfd" _ || true
  done
  t_ready=$EPOCHREALTIME
  nap_until() {
    local left
    left=$(awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN{d = a - b; printf "%.6f", (d > 0 ? d : 0)}')
    [[ $left == 0.000000 ]] || read -r -t "$left" -u "$sfd" _ || true
  }
  nap_until "$(awk -v t="$t_ready" -v w="$warmup" 'BEGIN{printf "%.6f", t + 0.02 + w}')"
  t_start=$EPOCHREALTIME
  for i in "${!WORKER_PIDS[@]}"; do start[i]=$(proc_sample "${WORKER_PIDS[$i]}"); done
  nap_until "$(awk -v t="$t_start" -v d="$duration" 'BEGIN{printf "%.6f", t + d}')"
  t_end=$EPOCHREALTIME
  for i in "${!WORKER_PIDS[@]}"; do end[i]=$(proc_sample "${WORKER_PIDS[$i]}"); done
  {
    printf '{"method": "loadgen ready line + 20 ms + warmup, for --duration", "clk_tck": %d, ' "$(getconf CLK_TCK)"
    printf '"warmup_s": %s, "duration_s": %s, "window_s": %s, "processes": [' "$warmup" "$duration" \
      "$(awk -v a="$t_start" -v b="$t_end" 'BEGIN{printf "%.3f", b - a}')"
    for i in "${!WORKER_PIDS[@]}"; do
      read -r b_ticks b_rss <<<"${before[$i]}"
      read -r s_ticks s_rss <<<"${start[$i]}"
      read -r e_ticks e_rss <<<"${end[$i]}"
      [[ $i == 0 ]] || printf ', '
      printf '{"id": "%s", "pid": %d, "ticks_before": %d, "ticks_start": %d, "ticks_end": %d, ' \
        "${WORKER_IDS[$i]}" "${WORKER_PIDS[$i]}" "$b_ticks" "$s_ticks" "$e_ticks"
      printf '"rss_before_kib": %d, "rss_start_kib": %d, "rss_end_kib": %d}' "$b_rss" "$s_rss" "$e_rss"
    done
    printf ']}\n'
  } >"$out"
}

arg_value() {  # arg_value NAME ARGS...: the value after NAME in ARGS (empty if absent)
  local name=$1
  shift
  while (($#)); do
    if [[ $1 == "$name" && $# -ge 2 ]]; then echo "$2"; return; fi
    shift
  done
}

# run_one WORKLOAD KIND ARGS...: fresh server, one loadgen run, server stopped.
run_one() {
  local workload=$1 kind=$2
  shift 2
  local json="$RAW_DIR/$workload.$kind.json" log="$RAW_DIR/$workload.$kind.server.log"
  local progress="$RAW_DIR/$workload.$kind.progress.txt"
  wait_quiet
  start_server "$kind" "$log"
  local what="pid $SERVER_PID"
  [[ $kind == workers ]] && what="gateway pid $SERVER_PID, workers ${WORKER_PIDS[*]}"
  echo "[run_echo] $workload against $kind ($what, port $SERVER_PORT): framegate-loadgen $*" >&2
  local rc=0 lg
  "${LOADGEN_ON[@]}" "$LOADGEN" --url "ws://127.0.0.1:$SERVER_PORT$SERVER_PATH" --opcode "$OPCODE" --server-pid "$SERVER_PID" \
    --json "$json" "$@" >"$RAW_DIR/$workload.$kind.summary.txt" 2>"$progress" &
  lg=$!
  if [[ $kind == workers ]]; then
    sample_workers "$progress" "$RAW_DIR/$workload.$kind.workers.json" \
      "$(arg_value --warmup "$@")" "$(arg_value --duration "$@")" "$lg" &
    SAMPLER_PID=$!
  fi
  wait "$lg" || rc=$?
  if [[ -n "$SAMPLER_PID" ]]; then
    # The sampler's window ends before the loadgen's drain, but on a busy
    # machine its last sample can come late: let it finish (its naps are
    # bounded by --duration), and stop it only if the load generator failed.
    [[ $rc == 0 ]] || kill -TERM "$SAMPLER_PID" 2>/dev/null || true
    wait "$SAMPLER_PID" 2>/dev/null || true
    SAMPLER_PID=""
  fi
  sed 's/^/    /' "$RAW_DIR/$workload.$kind.summary.txt" >&2
  local alive=1 dead=""
  kill -0 "$SERVER_PID" 2>/dev/null || { alive=0; dead="the gateway"; }
  [[ $kind == framegate || $kind == workers ]] || dead=${dead/the gateway/the $kind server}
  local i
  for i in "${!WORKER_PIDS[@]}"; do
    kill -0 "${WORKER_PIDS[$i]}" 2>/dev/null || { alive=0; dead="$dead worker ${WORKER_IDS[$i]}"; }
  done
  if [[ $alive == 0 ]]; then
    echo "[run_echo] $kind DIED during $workload ($dead); the gateway/server log:" >&2
    tail -20 "$log" >&2
    FAILED=1
  fi
  if [[ $rc != 0 ]]; then
    echo "[run_echo] $workload against $kind: load generator exit code $rc (echo checks failed or no connection)" >&2
    FAILED=1
  fi
  printf '{"exit_code": %d, "server_alive": %s, "workers": %d}\n' "$rc" "$([[ $alive == 1 ]] && echo true || echo false)" \
    "$([[ $kind == workers ]] && echo "$WORKERS" || echo 0)" >"$RAW_DIR/$workload.$kind.status.json"
  stop_servers
  sleep 1  # let TIME_WAIT sockets and the freed memory settle between runs
}

# The first run of a benchmark on this VM has had the worst tail of its
# server, whichever server that was (native uWS first: p99 54 ms, then
# 1.0 ms; docs/BENCHMARKS.md, "Seventh step"). A run that is not recorded
# takes that penalty: the first peer, the 50k/s open loop's shape, 10 s.
if ((!QUICK)); then
  first_peer=${PEERS%% *}
  echo "[run_echo] warm-up run against $first_peer (not recorded)" >&2
  run_one warmup "$first_peer" "${RATE50K_SHAPE[@]}" --warmup 1 --duration 10
fi

# PEERS in order for each workload (default framegate, workers, ws, uws), so
# slow drift of the machine hits them all alike. Idle: all but workers.
if wants rate; then for kind in $PEERS; do run_one rate "$kind" "${RATE_ARGS[@]}"; done; fi
if wants rate50k; then
  for kind in $PEERS; do run_one rate50k "$kind" "${RATE50K_ARGS[@]}"; done
  for ((round = 2; round <= TAIL_ROUNDS; round++)); do
    for kind in $PEERS; do
      case $kind in framegate | workers | uws-native) run_one "rate50k-r$round" "$kind" "${RATE50K_ARGS[@]}" ;; esac
    done
  done
fi
if wants window64; then for kind in $PEERS; do run_one window64 "$kind" "${W64_ARGS[@]}"; done; fi
if wants window1k; then for kind in $PEERS; do run_one window1k "$kind" "${W1K_ARGS[@]}"; done; fi
# One more round of WORKLOAD for the peers the round checks compare, back to back.
extra_round() { # WORKLOAD ROUND LOADGEN_ARGS...
  local workload=$1 round=$2 kind
  shift 2
  wants "$workload" || return 0
  for kind in $PEERS; do
    case $kind in framegate | workers | uws-native) run_one "$workload-r$round" "$kind" "$@" ;; esac
  done
}
for ((round = 2; round <= WINDOW_ROUNDS; round++)); do
  extra_round window64 "$round" "${W64_ARGS[@]}"
  extra_round window1k "$round" "${W1K_ARGS[@]}"
done
if wants idle; then
  for kind in $PEERS; do [[ $kind == workers ]] || run_one idle "$kind" "${IDLE_ARGS[@]}"; done
fi

OUT_JSON="$RESULTS_DIR/echo-$STAMP.json"
python3 "$BENCH/echo_report.py" --raw "$RAW_DIR" --out "$OUT_JSON" --quick "$QUICK" --peers "$PEERS" \
  --gateway "$GATEWAY" --worker "$WORKER" --workers "$WORKERS" \
  --gateway-threads "$GATEWAY_THREADS" --opcode "$OPCODE" --idle-connections "$IDLE_N" \
  --uws-native "${UWS_NATIVE_BIN:-}" --placement "$PLACEMENT"
echo "[run_echo] results: $OUT_JSON" >&2
# Debian's python3-matplotlib lives in the system interpreter, which may not be
# the python3 first on PATH (pyenv, venv): use whichever can import it.
PLOT_PY=python3
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null && "$py" -c 'import matplotlib' 2>/dev/null; then PLOT_PY=$py; break; fi
done
"$PLOT_PY" "$BENCH/plot_echo.py" "$OUT_JSON" || echo "[run_echo] plotting failed (results are still in $OUT_JSON)" >&2
exit $FAILED
