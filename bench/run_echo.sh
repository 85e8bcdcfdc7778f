#!/usr/bin/env bash
# Side-by-side echo benchmark: the same workloads, one after another, against
# `framegate-gateway --echo` and against the Node.js `ws` peer (bench/peers/ws-echo.js),
# each server fresh for each workload on a free 127.0.0.1 port and stopped by PID.
#
#   bench/run_echo.sh            full run (about 4 minutes, plus waits for a quiet machine)
#   bench/run_echo.sh --quick    small sizes and durations (smoke test, ~30 s)
#
# Environment:
#   FRAMEGATE_GATEWAY_BIN   gateway binary   (default build/bin/framegate-gateway)
#   FRAMEGATE_LOADGEN_BIN   load generator   (default: next to the gateway, else build/bin)
#   GATEWAY_THREADS         gateway --threads (default 1: the same one core Node's event loop gets)
#   OPCODE                  text|binary (default text: both servers validate UTF-8, as in production)
#   RESULTS_DIR             where echo-<date>.json goes (default bench/results)
#   QUIET_WAIT              before each run, seconds to wait for other processes to go quiet
#                           (default 120; 0 with --quick)
# Output: a markdown table on stdout, bench/results/echo-<date>.json, and a PNG
# of the ratios if python3-matplotlib is installed. Exit code 1 if a run failed
# its echo checks or a server died.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH="$ROOT/bench"
GATEWAY=${FRAMEGATE_GATEWAY_BIN:-$ROOT/build/bin/framegate-gateway}
if [[ -z "${FRAMEGATE_LOADGEN_BIN:-}" ]]; then
  FRAMEGATE_LOADGEN_BIN="$(dirname "$GATEWAY")/framegate-loadgen"
  [[ -x "$FRAMEGATE_LOADGEN_BIN" ]] || FRAMEGATE_LOADGEN_BIN="$ROOT/build/bin/framegate-loadgen"
fi
LOADGEN=$FRAMEGATE_LOADGEN_BIN
GATEWAY_THREADS=${GATEWAY_THREADS:-1}
OPCODE=${OPCODE:-text}
RESULTS_DIR=${RESULTS_DIR:-$BENCH/results}
QUICK=0

for arg in "$@"; do
  case "$arg" in
    --quick) QUICK=1 ;;
    -h|--help) sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run_echo.sh: unknown argument $arg (try --help)" >&2; exit 2 ;;
  esac
done

die() { echo "run_echo.sh: $*" >&2; exit 2; }
[[ -x "$GATEWAY" ]] || die "gateway binary not found: $GATEWAY (build it, or set FRAMEGATE_GATEWAY_BIN)"
[[ -x "$LOADGEN" ]] || die "load generator not found: $LOADGEN (build the framegate-loadgen target, or set FRAMEGATE_LOADGEN_BIN)"
command -v node >/dev/null || die "node is required for the ws peer"
command -v python3 >/dev/null || die "python3 is required for the report"

if [[ ! -d "$BENCH/node_modules/ws" ]]; then
  echo "[run_echo] installing the Node peer's packages (npm ci in bench/)" >&2
  (cd "$BENCH" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi

# Both servers and the load generator need thousands of descriptors.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# Workloads: name, then loadgen arguments. The source addresses only matter
# for the idle test (more connections than one address's ephemeral ports
# would comfortably hold on a busy machine).
if [[ $QUICK == 1 ]]; then
  RATE_ARGS=(--mode rate --connections 200 --size 256 --rate-per-conn-ms 10 --warmup 0.5 --duration 2)
  W64_ARGS=(--mode window --connections 20 --window 16 --size 64 --warmup 0.5 --duration 2)
  W1K_ARGS=(--mode window --connections 20 --window 16 --size 1024 --warmup 0.5 --duration 2)
  IDLE_N=1000
  IDLE_ARGS=(--mode idle --connections $IDLE_N --duration 1 --source-ips 127.0.0.2,127.0.0.3)
else
  RATE_ARGS=(--mode rate --connections 1000 --size 256 --rate-per-conn-ms 10 --warmup 2 --duration 20)
  W64_ARGS=(--mode window --connections 100 --window 16 --size 64 --warmup 1 --duration 10)
  W1K_ARGS=(--mode window --connections 100 --window 16 --size 1024 --warmup 1 --duration 10)
  IDLE_N=15000
  IDLE_ARGS=(--mode idle --connections $IDLE_N --duration 5 --source-ips 127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5)
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
# A smoke test does not care about the figures: no waiting by default.
if [[ $QUICK == 1 ]]; then QUIET_WAIT=${QUIET_WAIT:-0}; else QUIET_WAIT=${QUIET_WAIT:-120}; fi
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
SERVER_PID=""
SERVER_PORT=""
FAILED=0

stop_server() {
  [[ -n "$SERVER_PID" ]] || return 0
  if kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 "$SERVER_PID" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$SERVER_PID" 2>/dev/null; then
      echo "[run_echo] server $SERVER_PID ignored SIGTERM for 10 s: SIGKILL" >&2
      kill -KILL "$SERVER_PID" 2>/dev/null || true
    fi
  fi
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}
cleanup() {
  stop_server
  rm -rf "$RAW_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_server framegate|ws LOGFILE: sets SERVER_PID and SERVER_PORT.
start_server() {
  local kind=$1 log=$2
  case "$kind" in
    framegate)
      "$GATEWAY" --echo --listen 127.0.0.1:0 --threads "$GATEWAY_THREADS" >"$log" 2>&1 &
      ;;
    ws)
      node "$BENCH/peers/ws-echo.js" 0 127.0.0.1 >"$log" 2>&1 &
      ;;
  esac
  SERVER_PID=$!
  SERVER_PORT=""
  for _ in $(seq 1 200); do
    SERVER_PORT=$(grep -oE 'listening on [^ ]+:[0-9]+' "$log" 2>/dev/null | head -1 | grep -oE '[0-9]+$' || true)
    [[ -n "$SERVER_PORT" ]] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.05
  done
  echo "[run_echo] $kind did not start; its log:" >&2
  cat "$log" >&2
  exit 1
}

# run_one WORKLOAD KIND ARGS...: fresh server, one loadgen run, server stopped.
run_one() {
  local workload=$1 kind=$2
  shift 2
  local json="$RAW_DIR/$workload.$kind.json" log="$RAW_DIR/$workload.$kind.server.log"
  wait_quiet
  start_server "$kind" "$log"
  echo "[run_echo] $workload against $kind (pid $SERVER_PID, port $SERVER_PORT): framegate-loadgen $*" >&2
  local rc=0
  "$LOADGEN" --url "ws://127.0.0.1:$SERVER_PORT/" --opcode "$OPCODE" --server-pid "$SERVER_PID" \
    --json "$json" "$@" >"$RAW_DIR/$workload.$kind.summary.txt" 2>"$RAW_DIR/$workload.$kind.progress.txt" || rc=$?
  sed 's/^/    /' "$RAW_DIR/$workload.$kind.summary.txt" >&2
  local alive=1
  kill -0 "$SERVER_PID" 2>/dev/null || alive=0
  if [[ $alive == 0 ]]; then
    echo "[run_echo] $kind DIED during $workload; its log:" >&2
    tail -20 "$log" >&2
    FAILED=1
  fi
  if [[ $rc != 0 ]]; then
    echo "[run_echo] $workload against $kind: load generator exit code $rc (echo checks failed or no connection)" >&2
    FAILED=1
  fi
  printf '{"exit_code": %d, "server_alive": %s}\n' "$rc" "$([[ $alive == 1 ]] && echo true || echo false)" \
    >"$RAW_DIR/$workload.$kind.status.json"
  stop_server
  sleep 1  # let TIME_WAIT sockets and the freed memory settle between runs
}

# framegate then ws for each workload, so slow drift of the machine hits both alike.
for kind in framegate ws; do run_one rate "$kind" "${RATE_ARGS[@]}"; done
for kind in framegate ws; do run_one window64 "$kind" "${W64_ARGS[@]}"; done
for kind in framegate ws; do run_one window1k "$kind" "${W1K_ARGS[@]}"; done
for kind in framegate ws; do run_one idle "$kind" "${IDLE_ARGS[@]}"; done

OUT_JSON="$RESULTS_DIR/echo-$STAMP.json"
python3 "$BENCH/echo_report.py" --raw "$RAW_DIR" --out "$OUT_JSON" --quick "$QUICK" \
  --gateway "$GATEWAY" --gateway-threads "$GATEWAY_THREADS" --opcode "$OPCODE" --idle-connections "$IDLE_N"
echo "[run_echo] results: $OUT_JSON" >&2
# Debian's python3-matplotlib lives in the system interpreter, which may not be
# the python3 first on PATH (pyenv, venv): use whichever can import it.
PLOT_PY=python3
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null && "$py" -c 'import matplotlib' 2>/dev/null; then PLOT_PY=$py; break; fi
done
"$PLOT_PY" "$BENCH/plot_echo.py" "$OUT_JSON" || echo "[run_echo] plotting failed (results are still in $OUT_JSON)" >&2
exit $FAILED
