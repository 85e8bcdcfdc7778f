#!/usr/bin/env bash
# System calls per echoed message, framegate's gateway beside its peers, in
# the open-loop workload (500 connections x 256 B every 20 ms, 25k msg/s).
# A count is not a timing: it does not depend on how busy the machine is,
# so this shows what each server asks of the kernel per message even on a
# shared VM where CPU and latency figures drift. strace slows the server
# down, so the counts are divided by the reads the server made in the same
# window (one read per readable event), not by the messages offered.
#
#   bench/count_syscalls.sh           framegate, ws, uws (and uws-native when UWS_NATIVE_BIN is set)
#   PEERS="framegate uws-native" bench/count_syscalls.sh
#
# Environment: FRAMEGATE_GATEWAY_BIN, FRAMEGATE_LOADGEN_BIN, UWS_NATIVE_BIN,
# PEERS (as bench/run_echo.sh), TRACE_SECONDS (default 3).
# Output: a markdown table on stdout (calls per read, by system call).
# Needs strace. Exit code 1 if a server did not start or was not traced.
set -euo pipefail

LOG_TAG=count_syscalls
# shellcheck source=bench/bench_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
parse_bench_args 16 "$@"
GATEWAY=${FRAMEGATE_GATEWAY_BIN:-$ROOT/build/bin/framegate-gateway}
LOADGEN=$(bin_beside "${FRAMEGATE_LOADGEN_BIN:-}" "$GATEWAY" framegate-loadgen)
PEERS_EXPLICIT=$([[ -n "${PEERS:-}" ]] && echo 1 || echo 0)
PEERS=${PEERS:-framegate ws $(default_uws_peers)}
TRACE_SECONDS=${TRACE_SECONDS:-3}
command -v strace >/dev/null || die "strace is required (apt-get install strace)"
[[ -x "$GATEWAY" ]] || die "gateway binary not found: $GATEWAY"
[[ -x "$LOADGEN" ]] || die "load generator not found: $LOADGEN"
if [[ " $PEERS " == *" ws "* || " $PEERS " == *" uws "* ]]; then need_node_modules ws; fi
check_uws_peers "$PEERS_EXPLICIT"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/framegate-syscalls.XXXXXX")
SERVER_PID=""
REDIS_PID=""
stop_all_on_exit

# count KIND: prints "KIND syscall=calls ..." for the traced window.
count() {
  local kind=$1 log=$WORK/$1.log trace=$WORK/$1.strace loadgen_pid tids
  case "$kind" in
    framegate) "$GATEWAY" --echo --listen 127.0.0.1:0 --threads 1 --admin off >"$log" 2>&1 & ;;
    ws) node "$BENCH/peers/ws-echo.js" 0 127.0.0.1 >"$log" 2>&1 & ;;
    uws) node "$BENCH/peers/uws-echo.js" 0 127.0.0.1 >"$log" 2>&1 & ;;
    uws-native) "$UWS_NATIVE_BIN" echo 0 127.0.0.1 >"$log" 2>&1 & ;;
    *) die "unknown server kind '$kind' (framegate, ws, uws, uws-native)" ;;
  esac
  SERVER_PID=$!
  wait_listening "$log" 'listening on [^ ]+:[0-9]+'
  "$LOADGEN" --url "ws://127.0.0.1:$PORT/" --mode rate --connections 500 --size 256 --rate-per-conn-ms 20 \
    --warmup 1 --duration $((TRACE_SECONDS + 3)) >"$WORK/$kind.loadgen" 2>&1 &
  loadgen_pid=$!
  sleep 2
  # Every thread of the server: strace -p follows only the ones it is given.
  tids=$(ls "/proc/$SERVER_PID/task" | paste -sd, -)
  timeout -s INT "$TRACE_SECONDS" strace -c -p "$tids" -o "$trace" >/dev/null 2>&1 || true
  wait "$loadgen_pid" || true
  stop_server "$kind"
  [[ -s "$trace" ]] || { echo "[$LOG_TAG] $kind: strace recorded nothing" >&2; return 1; }
  awk -v kind="$kind" '$NF != "total" && $4 ~ /^[0-9]+$/ { printf " %s=%s", $NF, $4 } END { print "" }' "$trace" |
    sed "s/^/$kind/"
}

RESULTS=$WORK/results
FAILED=0
for kind in $PEERS; do
  echo "[$LOG_TAG] tracing $kind for $TRACE_SECONDS s under 25k msg/s" >&2
  count "$kind" >>"$RESULTS" || FAILED=1
done
[[ -s "$RESULTS" ]] || die "nothing was traced"
python3 - "$RESULTS" <<'PY'
import sys
rows = []
for line in open(sys.argv[1]):
    kind, *pairs = line.split()
    calls = {k: int(v) for k, v in (p.split("=") for p in pairs)}
    reads = sum(calls.get(k, 0) for k in ("read", "recvfrom", "recvmsg", "readv"))
    rows.append((kind, calls, reads))
# Calls that no server makes at least once per 200 reads are left to the total.
names = sorted((k for k in {k for _, calls, _ in rows for k in calls}
                if any(reads and calls.get(k, 0) / reads >= 0.005 for _, calls, reads in rows)),
               key=lambda k: -max(c.get(k, 0) / max(1, r) for _, c, r in rows))
print("| server | reads traced | " + " | ".join(names) + " | all per read |")
print("|---" * (len(names) + 3) + "|")
for kind, calls, reads in rows:
    per = lambda n: f"{n / reads:.2f}" if reads else "-"
    print(f"| {kind} | {reads} | " + " | ".join(per(calls.get(k, 0)) for k in names) + f" | {per(sum(calls.values()))} |")
PY
exit "$FAILED"
