#!/usr/bin/env bash
# How long each process of an echo run waits for a CPU, framegate beside its
# peers, in an open loop (1,000 connections x 256 B every 20 ms: 50k msg/s;
# RATE_MS changes it). A tail latency says that messages waited; this says
# who waited, and whether for a CPU: from the kernel's per-thread scheduler
# accounting (/proc/PID/task/TID/schedstat and status) over a window in the
# middle of the load.
#
#   bench/sched_waits.sh                          framegate and workers (and uws-native when UWS_NATIVE_BIN is set)
#   PEERS="framegate workers uws-native" ROUNDS=3 bench/sched_waits.sh
#
# Per process (the server, the worker of the `workers` kind, the load
# generator; every thread summed):
#   cpu        time on a CPU, % of one core
#   run queue  time runnable but waiting for a CPU, % of the window: on two
#              cores shared by the load generator and the servers, this is
#              where a saturated machine's tail comes from
#   wake-ups/s voluntary context switches (went to sleep, was woken)
#   preempted/s involuntary ones (taken off a CPU while it had work)
#   on CPUs    where its threads may run (SERVER_CPUS, LOADGEN_CPUS; all of them by default)
# and the load generator's p50 / p99 of the same run.
#
# Environment: FRAMEGATE_GATEWAY_BIN, FRAMEGATE_WORKER_BIN, FRAMEGATE_LOADGEN_BIN,
# UWS_NATIVE_BIN, PEERS, ROUNDS (1), WINDOW seconds (5), RATE_MS (20),
# CONNECTIONS (1000), QUIET_WAIT, SERVER_CPUS and LOADGEN_CPUS (taskset lists:
# the load generator on cores of its own; default: the scheduler's placement).
# Output: a markdown table on stdout. Exit code 1 if a run failed.
set -euo pipefail

LOG_TAG=sched_waits
# shellcheck source=bench/bench_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
parse_bench_args 25 "$@"
GATEWAY=${FRAMEGATE_GATEWAY_BIN:-$ROOT/build/bin/framegate-gateway}
WORKER=$(bin_beside "${FRAMEGATE_WORKER_BIN:-}" "$GATEWAY" framegate-worker)
LOADGEN=$(bin_beside "${FRAMEGATE_LOADGEN_BIN:-}" "$GATEWAY" framegate-loadgen)
PEERS_EXPLICIT=$([[ -n "${PEERS:-}" ]] && echo 1 || echo 0)
PEERS=${PEERS:-framegate workers${UWS_NATIVE_BIN:+ uws-native}}
ROUNDS=${ROUNDS:-1}
WINDOW=${WINDOW:-5}
RATE_MS=${RATE_MS:-20}
CONNECTIONS=${CONNECTIONS:-1000}
((QUICK)) && { WINDOW=1; CONNECTIONS=200; }
[[ -x "$GATEWAY" ]] || die "gateway binary not found: $GATEWAY"
[[ -x "$LOADGEN" ]] || die "load generator not found: $LOADGEN"
if [[ " $PEERS " == *" workers "* ]]; then [[ -x "$WORKER" ]] || die "worker binary not found: $WORKER"; fi
if [[ " $PEERS " == *" ws "* || " $PEERS " == *" uws "* ]]; then need_node_modules ws; fi
check_uws_peers "$PEERS_EXPLICIT"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

WORK=$(mktemp -d "${TMPDIR:-/tmp}/framegate-sched.XXXXXX")
SERVER_PID=""
WORKER_PID=""
LOADGEN_PID=""
trap 'stop_pid "$LOADGEN_PID" loadgen; stop_pid "$WORKER_PID" worker; stop_server; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

# snapshot NAME PID: one line per thread of PID: "NAME TID run_ns wait_ns voluntary involuntary cpus"
# (cpus: the CPUs the thread may run on, Cpus_allowed_list).
# One awk for all of a process's threads: a fork per thread would take CPU
# from the run it measures, and bash's `read` re-reads a /proc file at every
# line (an lseek regenerates it), so a busy thread's counters could tear.
snapshot() {
  local files=() t
  for t in /proc/"$2"/task/*; do files+=("$t/schedstat" "$t/status"); done
  awk -v name="$1" '
    FILENAME ~ /schedstat$/ { tid = FILENAME; sub(/^.*task\//, "", tid); sub(/\/.*$/, "", tid); run = $1; wait = $2 }
    /^Cpus_allowed_list:/ { cpus = $2 }
    /^voluntary_ctxt_switches:/ { vol = $2 }
    /^nonvoluntary_ctxt_switches:/ { print name, tid, run, wait, vol, $2, cpus }
  ' "${files[@]}" 2>/dev/null || true
}

snapshot_run() {  # snapshot_run KIND: the server's, the worker's and the load generator's threads
  snapshot "$1" "$SERVER_PID"
  [[ -z "$WORKER_PID" ]] || snapshot worker "$WORKER_PID"
  snapshot loadgen "$LOADGEN_PID"
}

# measure KIND ROUND: appends the run's snapshots and latency to $WORK/ROUND.KIND.*.
measure() {
  local kind=$1 round=$2 out=$WORK/$2.$1
  start_echo_kind "$kind" "$WORK" || return 1
  "${LOADGEN_ON[@]}" "$LOADGEN" --url "ws://127.0.0.1:$PORT$ECHO_PATH" --mode rate --connections "$CONNECTIONS" --size 256 \
    --rate-per-conn-ms "$RATE_MS" --warmup 2 --duration $((WINDOW + 2)) --json "$out.json" \
    >"$out.loadgen" 2>&1 &
  LOADGEN_PID=$!
  wait_loadgen_ready "$out.loadgen" "$LOADGEN_PID"
  sleep 2.5  # the warm-up (2 s), and the first half second of the measured window
  snapshot_run "$kind" >"$out.before"
  sleep "$WINDOW"
  snapshot_run "$kind" >"$out.after"
  local rc=0
  wait "$LOADGEN_PID" || rc=$?
  LOADGEN_PID=""
  stop_pid "$WORKER_PID" worker
  WORKER_PID=""
  stop_server "$kind"
  ((rc == 0)) || { echo "[$LOG_TAG] $kind: the load generator failed (exit $rc):" >&2; tail -5 "$out.loadgen" >&2; }
  return "$rc"
}

FAILED=0
wait_quiet
for ((round = 1; round <= ROUNDS; ++round)); do
  for kind in $PEERS; do
    echo "[$LOG_TAG] round $round: $kind at $((CONNECTIONS * 1000 / RATE_MS)) msg/s, a ${WINDOW} s window" >&2
    measure "$kind" "$round" || FAILED=1
  done
done
python3 - "$WORK" "$WINDOW" "$ROUNDS" "$PEERS" "$PLACEMENT" <<'PY'
import json, os, sys
work, window, rounds, peers, placement = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split(), sys.argv[5]

def threads(path):
    out, cpus = {}, {}
    for line in open(path):
        name, tid, *nums, allowed = line.split()
        out[(name, tid)] = [int(n) for n in nums]
        cpus.setdefault(name, set()).add(allowed)
    return out, cpus

print(f"Scheduler accounting over a {window:g} s window (cpu and run queue: % of one core's time); "
      f"CPU placement: {placement}.\n")
print("| server | round | p50 / p99 | process | cpu | run queue | wake-ups/s | preempted/s | on CPUs |")
print("|---|---:|---|---|---:|---:|---:|---:|---|")
for r in range(1, rounds + 1):
    for kind in peers:
        base = os.path.join(work, f"{r}.{kind}")
        if not os.path.exists(base + ".after"):
            continue
        (before, _), (after, allowed) = threads(base + ".before"), threads(base + ".after")
        per = {}
        for key, b in before.items():
            a = after.get(key)
            if a:  # threads present at both ends
                tot = per.setdefault(key[0], [0, 0, 0, 0])
                for i in range(4):
                    tot[i] += a[i] - b[i]
        try:
            lat = json.load(open(base + ".json"))["latency_us"]
            latency = f"{lat['p50'] / 1000:.3f} / {lat['p99'] / 1000:.2f} ms"
        except (OSError, KeyError, ValueError):
            latency = "-"
        for name, (run, wait, vol, inv) in per.items():
            print(f"| {kind} | {r} | {latency} | {name} | {run / window / 1e7:.1f}% | {wait / window / 1e7:.1f}% "
                  f"| {vol / window:,.0f} | {inv / window:,.0f} | {' '.join(sorted(allowed[name]))} |")
PY
exit "$FAILED"
