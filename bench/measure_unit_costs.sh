#!/usr/bin/env bash
# Per-unit costs of framegate on this machine (issue #13, the inputs of
# docs/CAPACITY.md): one `framegate up --workers 1` with its own fresh
# redis-server on loopback, fresh for each step, and framegate-loadgen:
#   memory per idle connection   gateway and worker VmRSS with 1,000 and 10,000
#                                idle /rooms connections open, minus before; the
#                                kernel's Slab (/proc/meminfo), halved (both ends here)
#   memory per room membership   10,000 members (in 10,000 rooms of 1, and in 100
#                                rooms of 100), minus 10,000 idle connections;
#                                Redis INFO used_memory minus before
#   CPU per message              1,000 rooms of 1 member, 1,000 publishers x 5/s:
#                                every publish delivered once (fan-out 1);
#                                CPU seconds (utime + stime, /proc/PID/stat) of
#                                gateway, worker, Redis over the window / messages
#   CPU per delivery (fan-out)   1 room x 1,000 members, 5 publishers x 20/s
#                                (100k deliveries/s): CPU / deliveries, and the
#                                marginal cost once the per-publish part is taken off;
#                                again at 10 x 50/s (500k/s: each member receives 500
#                                messages/s, so several leave in one write)
#
#   bench/measure_unit_costs.sh          full run (~2.5 minutes plus waits for a quiet machine)
#   bench/measure_unit_costs.sh --quick  shorter holds and windows (smoke test)
#
# Environment: FRAMEGATE_BIN (default build/bin/framegate), FRAMEGATE_LOADGEN_BIN,
# DURATION (CPU windows, default 15 s; 5 with --quick), RESULTS_DIR,
# QUIET_WAIT (default 120; 0 with --quick).
# Output: a markdown table on stdout and bench/results/unit-costs-<date>.json.
set -euo pipefail

LOG_TAG=measure_unit_costs
# shellcheck source=bench/bench_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
COMMAND_LINE="$0 $*"
FRAMEGATE=${FRAMEGATE_BIN:-$ROOT/build/bin/framegate}
LOADGEN=$(bin_beside "${FRAMEGATE_LOADGEN_BIN:-}" "$FRAMEGATE" framegate-loadgen)
WORKERS=1

parse_bench_args 24 "$@"
if ((QUICK)); then DURATION=${DURATION:-5}; HOLD=4; else DURATION=${DURATION:-15}; HOLD=6; fi

[[ -x "$FRAMEGATE" ]] || die "framegate not found: $FRAMEGATE (build it, or set FRAMEGATE_BIN)"
[[ -x "$LOADGEN" ]] || die "load generator not found: $LOADGEN"
command -v redis-server >/dev/null || die "redis-server is required"
(($(ulimit -n) >= 10100)) || die "needs 'ulimit -n' of at least 10100 (10,000 connections in one process)"

WORK=$(mktemp -d /tmp/unitcosts.XXXXXX)
REDIS_PID="" SERVER_PID=""
declare -a PROBES=()
stop_all_on_exit
SAMPLES="$WORK/samples.jsonl"
: >"$SAMPLES"

redis_used_memory() {
  redis-cli -u "$REDIS_URL" INFO memory | tr -d '\r' | awk -F: '$1 == "used_memory" {print $2}'
}

# The kernel's slab (socket structures live there: not in any process's RSS).
# Machine-wide, so another process's activity shows up in it too.
slab_kib() { awk '$1 == "Slab:" {print $2}' /proc/meminfo; }

probe_pid() {  # probe_pid NAME: the PID in PROBES for NAME
  local i
  for ((i = 1; i < ${#PROBES[@]}; i += 2)); do
    [[ ${PROBES[i]} == "$1="* ]] && { echo "${PROBES[i]#*=}"; return; }
  done
}

# sample STEP LOADGEN-ARGS...: fresh Redis and server; memory before; the
# loadgen started; memory again HOLD/2 s after its "ready" line (everything
# connected and joined, held or publishing); then the loadgen's own JSON.
sample() {
  local step=$1 gw wk before_gw before_wk before_redis before_slab lg
  shift
  wait_quiet
  start_redis
  start_rooms_server framegate
  gw=$(probe_pid gateway)
  wk=$(probe_pid worker0)
  sleep 1
  before_gw=$(rss_kib "$gw") before_wk=$(rss_kib "$wk") before_redis=$(redis_used_memory) before_slab=$(slab_kib)
  echo "[$LOG_TAG] $step (load $LOAD_BEFORE): $*" >&2
  "$LOADGEN" --url "ws://127.0.0.1:$PORT/rooms" "$@" "${PROBES[@]}" --json "$WORK/$step.json" --no-progress \
    >"$WORK/$step.txt" 2>"$WORK/$step.err" &
  lg=$!
  wait_loadgen_ready "$WORK/$step.err" "$lg"
  sleep "$(python3 -c "print($HOLD / 2)")"
  python3 - "$SAMPLES" "$step" "$*" "$before_gw" "$before_wk" "$before_redis" \
    "$(rss_kib "$gw")" "$(rss_kib "$wk")" "$(redis_used_memory)" "$LOAD_BEFORE" "$DISTURBED" \
    "$before_slab" "$(slab_kib)" <<'EOF'
import json, sys
out, step, args, bg, bw, br, ag, aw, ar, load, disturbed, bs, as_ = sys.argv[1:]
with open(out, "a") as f:
    f.write(json.dumps({"step": step, "loadgen_args": args, "gateway_rss_kib": [int(bg), int(ag)],
                        "worker_rss_kib": [int(bw), int(aw)], "redis_used_memory": [int(br), int(ar)],
                        "kernel_slab_kib": [int(bs), int(as_)],
                        "load_before": float(load), "disturbed": disturbed == "true"}) + "\n")
EOF
  wait "$lg" || echo "[$LOG_TAG] $step: loadgen exit code $? (see below)" >&2
  sed 's/^/    /' "$WORK/$step.txt" >&2
  stop_server server
  stop_redis
}

idle() { echo "--mode idle --connections $1 --duration $HOLD --connect-rate 5000"; }
# shellcheck disable=SC2046
sample idle-1k $(idle 1000)
# shellcheck disable=SC2046
sample idle-10k $(idle 10000)
sample members-10k-rooms-10k --mode rooms --rooms 10000 --members 10000 --publishers 1 --publish-rate 1 \
  --duration "$HOLD" --join-settle 1 --drain 1 --drain-max 5 --connect-rate 5000
sample members-10k-rooms-100 --mode rooms --rooms 100 --members 10000 --publishers 1 --publish-rate 1 \
  --duration "$HOLD" --join-settle 1 --drain 1 --drain-max 5 --connect-rate 5000
sample msg-fanout1 --mode rooms --rooms 1000 --members 1000 --publishers 1000 --publish-rate 5 \
  --duration "$DURATION" --join-settle 1 --drain 2 --drain-max 10 --connect-rate 2000
sample fanout-1x1000 --mode rooms --rooms 1 --members 1000 --publishers 5 --publish-rate 20 \
  --duration "$DURATION" --join-settle 1 --drain 2 --drain-max 10 --connect-rate 2000
sample fanout-1x1000-fast --mode rooms --rooms 1 --members 1000 --publishers 10 --publish-rate 50 \
  --duration "$DURATION" --join-settle 1 --drain 2 --drain-max 10 --connect-rate 2000

result=$(results_file unit-costs)
python3 - "$result" "$SAMPLES" "$WORK" "$COMMAND_LINE" "$QUICK" "$(sha256sum "$FRAMEGATE" | cut -c1-16)" <<'EOF'
import json, os, platform, sys, datetime
out, samples_path, work, command, quick, sha = sys.argv[1:]
samples = {}
for line in open(samples_path):
    s = json.loads(line)
    try:
        s["loadgen"] = json.load(open(os.path.join(work, s["step"] + ".json")))
    except (OSError, ValueError) as e:
        s["loadgen"] = {"error": str(e)}
    samples[s["step"]] = s

def delta(step, key):
    a, b = samples[step][key]
    return b - a

costs = {}
# Memory per idle connection, KiB (after minus before, per connection).
for step, n in (("idle-1k", 1000), ("idle-10k", 10000)):
    costs[f"{step}_gateway_kib_per_conn"] = delta(step, "gateway_rss_kib") / n
    costs[f"{step}_worker_kib_per_conn"] = delta(step, "worker_rss_kib") / n
    costs[f"{step}_redis_bytes_per_conn"] = delta(step, "redis_used_memory") / n
    # Both ends of each connection are on this machine: half is the server's.
    costs[f"{step}_kernel_slab_kib_per_conn"] = delta(step, "kernel_slab_kib") / n / 2
# Per membership: 10,000 members minus 10,000 idle connections.
for step in ("members-10k-rooms-10k", "members-10k-rooms-100"):
    for proc in ("gateway", "worker"):
        costs[f"{step}_{proc}_bytes_per_membership"] = (
            (delta(step, f"{proc}_rss_kib") - delta("idle-10k", f"{proc}_rss_kib")) * 1024 / 10000)
    costs[f"{step}_redis_bytes_per_membership"] = (
        delta(step, "redis_used_memory") - delta("idle-10k", "redis_used_memory")) / 10000

def cpu_us(step, proc, per):
    lg = samples[step]["loadgen"]
    c = lg["cpu"].get(proc)
    n = lg["window"][per]
    return (c["user_s"] + c["sys_s"]) / n * 1e6 if c and n else None

for proc in ("gateway", "worker0", "redis", "loadgen"):
    name = proc.rstrip("0")
    costs[f"msg_{name}_us_per_message"] = cpu_us("msg-fanout1", proc, "publishes")
    costs[f"fanout_{name}_us_per_delivery"] = cpu_us("fanout-1x1000", proc, "deliveries")
    costs[f"fanout_{name}_us_per_publish"] = cpu_us("fanout-1x1000", proc, "publishes")
    costs[f"fanout_fast_{name}_us_per_delivery"] = cpu_us("fanout-1x1000-fast", proc, "deliveries")
# The fan-out's marginal cost per delivery: take each publish's fixed cost
# (measured at fan-out 1, which also includes its one delivery) off.
fw = samples["fanout-1x1000"]["loadgen"]["window"]
for name in ("gateway", "worker", "redis"):
    per_msg = costs[f"msg_{name}_us_per_message"]
    total = costs[f"fanout_{name}_us_per_delivery"]
    if per_msg is not None and total is not None and fw["deliveries"]:
        costs[f"fanout_{name}_marginal_us_per_delivery"] = max(
            0.0, (total * fw["deliveries"] - per_msg * fw["publishes"]) / (fw["deliveries"] - fw["publishes"]))

doc = {
    "meta": {"benchmark": "unit-costs", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
             "command": command, "quick": quick == "1", "framegate_sha256_16": sha,
             "server": "framegate up --workers 1 --redis URL --admin 127.0.0.1:PORT (loopback, fresh redis-server per step)",
             "machine": {"cores": os.cpu_count(), "kernel": platform.release(),
                         "loadavg_at_report": open("/proc/loadavg").read().split()[:3]}},
    "costs": costs,
    "samples": samples,
}
with open(out, "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")

def f(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"

busy = [s for s in samples.values() if s["disturbed"]]
print("| cost | gateway | worker | redis-server |")
print("|---|---:|---:|---:|")
for step in ("idle-1k", "idle-10k"):
    print(f"| idle connection, KiB ({step}) | {f(costs[step + '_gateway_kib_per_conn'])} | "
          f"{f(costs[step + '_worker_kib_per_conn'])} | {f(costs[step + '_redis_bytes_per_conn'] / 1024)} |")
    print(f"| idle connection, kernel slab KiB (server's half, {step}) | "
          f"{f(costs[step + '_kernel_slab_kib_per_conn'])} | | |")
for step in ("members-10k-rooms-10k", "members-10k-rooms-100"):
    print(f"| membership, bytes ({step}) | {f(costs[step + '_gateway_bytes_per_membership'], 0)} | "
          f"{f(costs[step + '_worker_bytes_per_membership'], 0)} | {f(costs[step + '_redis_bytes_per_membership'], 0)} |")
print(f"| CPU per message at fan-out 1, µs (msg-fanout1) | {f(costs['msg_gateway_us_per_message'])} | "
      f"{f(costs['msg_worker_us_per_message'])} | {f(costs['msg_redis_us_per_message'])} |")
print(f"| CPU per publish at 1 x 1,000, µs (fanout-1x1000) | {f(costs['fanout_gateway_us_per_publish'], 0)} | "
      f"{f(costs['fanout_worker_us_per_publish'], 0)} | {f(costs['fanout_redis_us_per_publish'], 0)} |")
print(f"| CPU per delivery at 1 x 1,000, µs (fanout-1x1000) | {f(costs['fanout_gateway_us_per_delivery'])} | "
      f"{f(costs['fanout_worker_us_per_delivery'], 3)} | {f(costs['fanout_redis_us_per_delivery'], 3)} |")
print(f"| CPU per delivery at 1 x 1,000, 500k/s offered, µs (fanout-1x1000-fast) | "
      f"{f(costs['fanout_fast_gateway_us_per_delivery'])} | {f(costs['fanout_fast_worker_us_per_delivery'], 3)} | "
      f"{f(costs['fanout_fast_redis_us_per_delivery'], 3)} |")
print(f"| marginal CPU per delivery (100k/s), µs | {f(costs.get('fanout_gateway_marginal_us_per_delivery'))} | "
      f"{f(costs.get('fanout_worker_marginal_us_per_delivery'), 3)} | {f(costs.get('fanout_redis_marginal_us_per_delivery'), 3)} |")
for step in ("msg-fanout1", "fanout-1x1000", "fanout-1x1000-fast"):
    w = samples[step]["loadgen"].get("window", {})
    lg = samples[step]["loadgen"].get("cpu", {}).get("loadgen", {})
    print(f"\n{step}: {w.get('publishes_per_s', 0):.0f} publishes/s, {w.get('deliveries_per_s', 0):.0f} deliveries/s, "
          f"loadgen {lg.get('pct', 0):.0f}% of a core", end="")
print()
if busy:
    print("disturbed (load average >= 1.0 at the start): " + ", ".join(s["step"] for s in busy))
EOF
echo "[$LOG_TAG] results: $result" >&2
