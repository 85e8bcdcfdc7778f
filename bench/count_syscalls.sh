#!/usr/bin/env bash
# System calls per echoed message, framegate beside its peers, in an open
# loop (500 connections x 256 B every 20 ms: 25k msg/s; RATE_MS changes it).
# A count is not a timing: it hardly depends on how busy the machine is, so
# it shows what each server asks of the kernel per message even on a shared
# VM where CPU and latency figures drift.
#
#   bench/count_syscalls.sh           framegate, workers, ws, uws (and uws-native when UWS_NATIVE_BIN is set)
#   PEERS="framegate workers uws-native" bench/count_syscalls.sh
#
# Kinds: as bench/run_echo.sh; `workers` is the gateway plus one
# framegate-worker (/echo), each counted on its own row.
# Counting: with perf (tracepoints; the server runs at full speed, so calls
# are divided by the messages echoed in the window: batches are as large as
# they really are at this rate), else strace -c (it slows the server, which
# then batches more: calls are divided by its reads instead, and waits per
# message come out too low). COUNT_WITH=perf|strace chooses.
#
# Environment: FRAMEGATE_GATEWAY_BIN, FRAMEGATE_WORKER_BIN, FRAMEGATE_LOADGEN_BIN,
# UWS_NATIVE_BIN, PEERS, TRACE_SECONDS (default 4), RATE_MS (default 20), COUNT_WITH.
# Output: a markdown table on stdout. Exit code 1 if a server did not start or
# was not traced.
set -euo pipefail

LOG_TAG=count_syscalls
# shellcheck source=bench/bench_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
parse_bench_args 22 "$@"
GATEWAY=${FRAMEGATE_GATEWAY_BIN:-$ROOT/build/bin/framegate-gateway}
WORKER=$(bin_beside "${FRAMEGATE_WORKER_BIN:-}" "$GATEWAY" framegate-worker)
LOADGEN=$(bin_beside "${FRAMEGATE_LOADGEN_BIN:-}" "$GATEWAY" framegate-loadgen)
PEERS_EXPLICIT=$([[ -n "${PEERS:-}" ]] && echo 1 || echo 0)
PEERS=${PEERS:-framegate workers ws $(default_uws_peers)}
TRACE_SECONDS=${TRACE_SECONDS:-4}
RATE_MS=${RATE_MS:-20}
CONNECTIONS=500
perf_counts_syscalls() { perf stat -e syscalls:sys_enter_sendto -- true >/dev/null 2>&1; }
if [[ -z "${COUNT_WITH:-}" ]]; then
  COUNT_WITH=strace
  if perf_counts_syscalls; then COUNT_WITH=perf; fi
fi
case "$COUNT_WITH" in
  perf) perf_counts_syscalls ||
    die "perf cannot count syscall tracepoints here (apt-get install linux-perf; needs root or perf_event_paranoid <= -1)" ;;
  strace) command -v strace >/dev/null || die "strace is required (apt-get install strace)" ;;
  *) die "COUNT_WITH: perf or strace, not '$COUNT_WITH'" ;;
esac
[[ -x "$GATEWAY" ]] || die "gateway binary not found: $GATEWAY"
[[ -x "$LOADGEN" ]] || die "load generator not found: $LOADGEN"
if [[ " $PEERS " == *" workers "* ]]; then [[ -x "$WORKER" ]] || die "worker binary not found: $WORKER"; fi
if [[ " $PEERS " == *" ws "* || " $PEERS " == *" uws "* ]]; then need_node_modules ws; fi
check_uws_peers "$PEERS_EXPLICIT"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/framegate-syscalls.XXXXXX")
SERVER_PID=""
WORKER_PID=""
trap 'stop_pid "$WORKER_PID" worker; stop_server; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

# trace NAME PID: writes "NAME syscall=calls ..." for TRACE_SECONDS of PID's threads.
trace() {
  local name=$1 pid=$2 out=$WORK/$1.trace tids
  case "$COUNT_WITH" in
    perf)
      timeout -s INT $((TRACE_SECONDS + 5)) perf stat -x, -e 'syscalls:sys_enter_*' -p "$pid" -o "$out" \
        -- sleep "$TRACE_SECONDS" >/dev/null 2>&1 || true
      [[ -s "$out" ]] || return 1
      awk -F, -v name="$name" '$1 ~ /^[0-9]+$/ && $1 > 0 { sub("syscalls:sys_enter_", "", $3); printf " %s=%s", $3, $1 }
        END { print "" }' "$out" | sed "s/^/$name/"
      ;;
    strace)
      # Every thread: strace -p follows only the ones it is given.
      tids=$(find "/proc/$pid/task" -mindepth 1 -maxdepth 1 -printf '%f\n' | paste -sd, -)
      timeout -s INT "$TRACE_SECONDS" strace -c -p "$tids" -o "$out" >/dev/null 2>&1 || true
      [[ -s "$out" ]] || return 1
      awk -v name="$name" '$NF != "total" && $4 ~ /^[0-9]+$/ { printf " %s=%s", $NF, $4 } END { print "" }' "$out" |
        sed "s/^/$name/"
      ;;
  esac
}

# count KIND: prints one line per process of KIND (see trace).
count() {
  local kind=$1 loadgen_pid rc=0
  start_echo_kind "$kind" "$WORK" || return 1
  "${LOADGEN_ON[@]}" "$LOADGEN" --url "ws://127.0.0.1:$PORT$ECHO_PATH" --mode rate --connections "$CONNECTIONS" --size 256 \
    --rate-per-conn-ms "$RATE_MS" --warmup 1 --duration $((TRACE_SECONDS + 3)) >"$WORK/$kind.loadgen" 2>&1 &
  loadgen_pid=$!
  sleep 2
  if [[ $kind == workers ]]; then
    trace "workers:gateway" "$SERVER_PID" &
    local gw=$!
    trace "workers:worker" "$WORKER_PID" || rc=1
    wait "$gw" || rc=1
  else
    trace "$kind" "$SERVER_PID" || rc=1
  fi
  wait "$loadgen_pid" || true
  stop_pid "$WORKER_PID" worker
  WORKER_PID=""
  stop_server "$kind"
  ((rc == 0)) || echo "[$LOG_TAG] $kind: nothing was counted" >&2
  return "$rc"
}

RESULTS=$WORK/results
FAILED=0
for kind in $PEERS; do
  echo "[$LOG_TAG] counting $kind's system calls with $COUNT_WITH for $TRACE_SECONDS s at $((CONNECTIONS * 1000 / RATE_MS)) msg/s" >&2
  count "$kind" >>"$RESULTS" || FAILED=1
done
[[ -s "$RESULTS" ]] || die "nothing was counted"
python3 - "$RESULTS" "$COUNT_WITH" "$((CONNECTIONS * 1000 * TRACE_SECONDS / RATE_MS))" <<'PY'
import sys
path, how, messages = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = []
for line in open(path):
    kind, *pairs = line.split()
    calls = {k: int(v) for k, v in (p.split("=") for p in pairs)}
    reads = sum(calls.get(k, 0) for k in ("read", "recvfrom", "recvmsg", "readv"))
    rows.append((kind, calls, messages if how == "perf" else reads))
# Calls that no process makes at least once per 200 messages (reads) are left to the total.
names = sorted((k for k in {k for _, calls, _ in rows for k in calls}
                if any(d and calls.get(k, 0) / d >= 0.005 for _, calls, d in rows)),
               key=lambda k: -max(c.get(k, 0) / max(1, d) for _, c, d in rows))
unit = "message (offered in the window)" if how == "perf" else "read (strace slows the server: see the header)"
print(f"System calls per {unit}, counted with {how}:\n")
print("| process | " + ("messages" if how == "perf" else "reads traced") + " | " + " | ".join(names) + " | all |")
print("|---" * (len(names) + 3) + "|")
for kind, calls, d in rows:
    per = lambda n: f"{n / d:.2f}" if d else "-"
    print(f"| {kind} | {d} | " + " | ".join(per(calls.get(k, 0)) for k in names) + f" | {per(sum(calls.values()))} |")
PY
exit "$FAILED"
