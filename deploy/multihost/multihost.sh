#!/bin/bash
# multihost.sh: N framegate hosts on one machine, each a network namespace
# behind a simulated switch, with Redis (one server, or a 6-node cluster)
# spread over them, optionally nginx in front and Prometheus scraping them.
# Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN for namespaces). See README.md
# beside this file for the address plan and the cleanup guarantees.
#
#   multihost.sh up [--hosts N] [--redis-mode cluster|single] [--nginx] [--prometheus]
#                   [--delay-ms D] [--workers-per-host K] [--state-dir DIR] [--build-dir DIR]
#                   [--slot S] [--client-addrs M] [--redis-only]
#   multihost.sh status | down | link-down I | link-up I | exec I|edge|switch CMD...
#   multihost.sh kill-redis-primary --on-host I [--down-for SECONDS] [--no-restart]
#   (every command but up also takes --state-dir DIR)
#
# Why bash: almost every step is one `ip`/`tc` command; the two generated
# files with structure (Prometheus's config, the run description) are small.
set -Eeuo pipefail

SELF_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "$SELF_DIR/../.." && pwd)"
readonly SELF_DIR REPO_DIR
readonly DEFAULT_STATE_DIR=/run/framegate-multihost
readonly NGINX_BASE="$REPO_DIR/deploy/nginx/nginx.conf"
readonly PROMETHEUS_BASE="$REPO_DIR/deploy/prometheus/prometheus.yml"
readonly STREAM_MODULE=/usr/lib/nginx/modules/ngx_stream_module.so

# Ports, the same inside every host namespace.
readonly GATEWAY_PORT=8080 ADMIN_PORT=9090 WORKER_ADMIN_PORT=9091
readonly REDIS_PORT=6379 CLUSTER_BASE_PORT=7000 CLUSTER_NODES=6
readonly ENTRY_PORT=8080 PROMETHEUS_PORT=9090
readonly EDGE_OCTET=254 ROOT_OCTET=1 EDGE_UPLINK_OCTET=2 CLIENT_FIRST_OCTET=10

die() {
  echo "multihost: $*" >&2
  exit 1
}
say() { echo "multihost: $*" >&2; }

usage() {
  sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

# --- the state directory -------------------------------------------------------
# state:     KEY=VALUE lines describing the run (sourced by every command)
# resources: one line per thing made, written BEFORE it is made, so that
#            `down` (and the failure trap of `up`) removes exactly those:
#              netns NAME | link NAME (root namespace) | pid PID STARTTIME LABEL
# run.json:  the run for tests and tools (hosts, addresses, endpoints)

state_dir="$DEFAULT_STATE_DIR"

record() { echo "$*" >>"$state_dir/resources"; }
set_state() { printf '%s=%q\n' "$1" "$2" >>"$state_dir/state"; }

load_state() {
  [[ -f "$state_dir/state" ]] || die "no run recorded in $state_dir (pass --state-dir, or run up first)"
  # shellcheck source=/dev/null
  source "$state_dir/state"
}

require_root() {
  if [[ $EUID -ne 0 ]]; then
    die "needs root: network namespaces, veth pairs and bridges need CAP_NET_ADMIN and CAP_SYS_ADMIN (running as uid $EUID)"
  fi
  local probe="fgmh-probe-$$"
  if ! ip netns add "$probe" 2>/dev/null; then
    die "cannot create a network namespace here ('ip netns add' failed: no CAP_SYS_ADMIN/CAP_NET_ADMIN, or a container without them)"
  fi
  ip netns del "$probe"
}

# Field 22 of /proc/PID/stat: when the process started, in clock ticks. A
# PID recorded with it is never confused with a later process reusing it.
start_time() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  # shellcheck disable=SC2086
  set -- $stat
  echo "${20}"
}

pid_is_ours() { # PID STARTTIME
  [[ "$(start_time "$1" 2>/dev/null)" == "$2" ]]
}

# spawn LABEL NAMESPACE LOG CMD...: runs CMD in NAMESPACE in its own session
# (a Ctrl-C at the caller's terminal does not reach it) and records its PID.
# setsid and `ip netns exec` both exec, so $! is CMD itself.
spawn() {
  local label=$1 ns=$2 log=$3
  shift 3
  setsid ip netns exec "$ns" "$@" </dev/null >>"$log" 2>&1 &
  local pid=$! st
  st=$(start_time "$pid") || st=gone
  record "pid $pid $st $label"
  echo "$pid"
}

# The recorded PID of LABEL's newest process, if that process still runs.
pid_of() {
  local pid st label found=""
  while read -r kind pid st label; do
    [[ $kind == pid && $label == "$1" ]] && pid_is_ours "$pid" "$st" && found=$pid
  done <"$state_dir/resources"
  [[ -n $found ]] && echo "$found"
}

# --- names and addresses ---------------------------------------------------------

host_ns() { echo "$PREFIX-h$1"; }
host_addr() { echo "$HOST_NET.$1"; }
edge_addr() { echo "$HOST_NET.$EDGE_OCTET"; }
entry_addr() { echo "$ENTRY_NET.$EDGE_UPLINK_OCTET"; }
root_addr() { echo "$ENTRY_NET.$ROOT_OCTET"; }

# Redis cluster node J (0-based) lives on host (J mod N)+1 with port 7000+J, so
# consecutive nodes land on different hosts and redis-cli's replica placement
# can keep each replica away from its primary's host.
cluster_node_host() { echo $(($1 % HOSTS + 1)); }
cluster_node_addr() { echo "$(host_addr "$(cluster_node_host "$1")"):$((CLUSTER_BASE_PORT + $1))"; }
host_of_addr() { # IP -> host index
  local ip=${1%%:*}
  echo "${ip##*.}"
}

# --- up ------------------------------------------------------------------------------

pick_slot() {
  local s
  for ((s = 0; s < 128; s++)); do
    if ! ip -4 -o addr show | grep -q " 198\.18\.$((2 * s + 1))\.[0-9]*/" &&
      ! ip -4 route show | grep -q "^198\.18\.$((2 * s))\.0/24 "; then
      echo "$s"
      return
    fi
  done
  die "every address slot of 198.18.0.0/15 is in use by other runs"
}

make_network() {
  local sw="$PREFIX-sw" edge="$PREFIX-edge" i ns
  record "netns $sw"
  ip netns add "$sw"
  record "netns $edge"
  ip netns add "$edge"
  ip -n "$sw" link set lo up
  ip -n "$edge" link set lo up
  ip -n "$sw" link add br0 type bridge
  ip -n "$sw" link set br0 up

  # The edge: the only way in from the root namespace, a router between the
  # entry network and the hosts' network, and where nginx and Prometheus run.
  ip -n "$sw" link add edge type veth peer name lan0 netns "$edge"
  ip -n "$sw" link set edge master br0 up
  ip -n "$edge" addr add "$(edge_addr)/24" dev lan0
  ip -n "$edge" link set lan0 up
  ip netns exec "$edge" sysctl -q -w net.ipv4.ip_forward=1

  # The root namespace's one leg: its address, the test clients' source
  # addresses (nginx hashes on them) and one route to the hosts.
  record "link $ROOT_LINK"
  ip link add "$ROOT_LINK" type veth peer name uplink netns "$edge"
  ip -n "$edge" addr add "$(entry_addr)/24" dev uplink
  ip -n "$edge" link set uplink up
  ip addr add "$(root_addr)/24" dev "$ROOT_LINK"
  for ((i = 0; i < CLIENT_ADDRS; i++)); do
    ip addr add "$ENTRY_NET.$((CLIENT_FIRST_OCTET + i))/32" dev "$ROOT_LINK"
  done
  ip link set "$ROOT_LINK" up
  ip route add "$HOST_NET.0/24" via "$(entry_addr)" dev "$ROOT_LINK"

  for ((i = 1; i <= HOSTS; i++)); do
    ns=$(host_ns "$i")
    record "netns $ns"
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    ip -n "$sw" link add "h$i" type veth peer name eth0 netns "$ns"
    ip -n "$sw" link set "h$i" master br0 up
    ip -n "$ns" addr add "$(host_addr "$i")/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" route add "$ENTRY_NET.0/24" via "$(edge_addr)"
    if ((DELAY_MS > 0)); then
      # Egress of every host: host-to-host round trips take 2 x D.
      ip netns exec "$ns" tc qdisc add dev eth0 root netem delay "${DELAY_MS}ms" 2>/dev/null ||
        die "--delay-ms: 'tc qdisc add ... netem' failed: this kernel has no sch_netem (or tc is missing)"
    fi
  done
}

whole_in() { # VALUE MIN MAX: VALUE is a whole number (decimal) from MIN to MAX
  [[ $1 =~ ^[0-9]+$ ]] && ((10#$1 >= $2 && 10#$1 <= $3))
}

wait_for() { # SECONDS CMD...: polls CMD every 0.2 s
  local deadline=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}

redis_cli() { # HOST_INDEX ADDR:PORT ARGS...
  local ns addr=$2
  ns=$(host_ns "$1")
  shift 2
  ip netns exec "$ns" timeout 5 redis-cli -h "${addr%:*}" -p "${addr##*:}" "$@"
}

start_redis_single() {
  local dir="$state_dir/redis/$REDIS_PORT" addr
  addr=$(host_addr 1)
  mkdir -p "$dir"
  spawn "redis:$addr:$REDIS_PORT" "$(host_ns 1)" "$state_dir/logs/redis-$REDIS_PORT.log" \
    redis-server --bind "$addr" --port "$REDIS_PORT" --protected-mode no --save "" --appendonly no \
    --dir "$dir" --daemonize no >/dev/null
  wait_for 10 redis_cli 1 "$addr:$REDIS_PORT" ping ||
    die "redis-server on $addr:$REDIS_PORT did not answer within 10 s: $(tail -5 "$state_dir/logs/redis-$REDIS_PORT.log")"
}

start_cluster_node() { # J
  local j=$1 port=$((CLUSTER_BASE_PORT + $1)) h addr dir
  h=$(cluster_node_host "$j")
  addr=$(host_addr "$h")
  dir="$state_dir/redis/$port"
  mkdir -p "$dir"
  # node-timeout 2 s: a killed primary is replaced within a few seconds.
  # Replicas sync at once (no 5 s diskless delay) and may always take over
  # (validity factor 0): a host cut off right after `up` must not leave its
  # primary's replica unable to fail over ("disconnected for too long").
  spawn "redis:$addr:$port" "$(host_ns "$h")" "$state_dir/logs/redis-$port.log" \
    redis-server --bind "$addr" --port "$port" --protected-mode no --save "" --appendonly no \
    --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 2000 \
    --cluster-replica-validity-factor 0 --repl-diskless-sync-delay 0 --repl-ping-replica-period 1 \
    --dir "$dir" --daemonize no >/dev/null
  wait_for 10 redis_cli "$h" "$addr:$port" ping ||
    die "redis-server on $addr:$port did not answer within 10 s: $(tail -5 "$state_dir/logs/redis-$port.log")"
}

# Every node says the cluster is ok and knows every replica as one (just after
# `--cluster create` the replicas' roles are still spreading by gossip), and
# every replica has finished its first sync.
cluster_ok_everywhere() {
  local j h addr
  for ((j = 0; j < CLUSTER_NODES; j++)); do
    h=$(cluster_node_host "$j")
    addr=$(cluster_node_addr "$j")
    redis_cli "$h" "$addr" cluster info | grep -q '^cluster_state:ok' || return 1
    [[ $(redis_cli "$h" "$addr" cluster nodes | grep -cE ' (myself,)?slave ') -eq $((CLUSTER_NODES / 2)) ]] || return 1
    # A replica counts once its first sync is done.
    local info
    info=$(redis_cli "$h" "$addr" info replication)
    [[ $info != *role:slave* || $info == *master_link_status:up* ]] || return 1
  done
}

start_redis_cluster() {
  local j nodes=()
  for ((j = 0; j < CLUSTER_NODES; j++)); do
    start_cluster_node "$j"
    nodes+=("$(cluster_node_addr "$j")")
  done
  ip netns exec "$(host_ns 1)" redis-cli --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes \
    >>"$state_dir/logs/redis-cluster-create.log" 2>&1 ||
    die "redis-cli --cluster create failed: $(tail -5 "$state_dir/logs/redis-cluster-create.log")"
  wait_for 30 cluster_ok_everywhere || die "the Redis cluster did not reach cluster_state:ok within 30 s"
}

# The arguments each host's `framegate up` gets for Redis.
redis_args() {
  if [[ $REDIS_MODE == single ]]; then
    echo "--redis redis://$(host_addr 1):$REDIS_PORT"
  else
    local j seeds=()
    for ((j = 0; j < CLUSTER_NODES; j++)); do seeds+=("$(cluster_node_addr "$j")"); done
    echo "--redis-cluster $(
      IFS=,
      echo "${seeds[*]}"
    )"
  fi
}

framegate_ready() { # HOST_INDEX
  ip netns exec "$(host_ns "$1")" curl -sf -m 2 "http://$(host_addr "$1"):$ADMIN_PORT/readyz"
}

# The command line of host I's supervisor (after the binary's path).
framegate_up_args() { # HOST_INDEX
  local addr
  addr=$(host_addr "$1")
  echo "up --listen $addr:$GATEWAY_PORT --workers $WORKERS_PER_HOST --admin $addr:$ADMIN_PORT" \
    "--worker-admin $addr:$WORKER_ADMIN_PORT --link-dir $state_dir/h$1/link --no-demo $(redis_args)"
}

start_framegate() { # HOST_INDEX
  local i=$1 log pid
  log="$state_dir/logs/h$i-framegate.log"
  mkdir -p "$state_dir/h$i"
  # shellcheck disable=SC2046 # the arguments are words without spaces
  pid=$(spawn "framegate:h$i" "$(host_ns "$i")" "$log" "$BUILD_DIR/bin/framegate" $(framegate_up_args "$i"))
  local deadline=$((SECONDS + 30))
  until framegate_ready "$i" >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || die "framegate up on h$i exited: $(tail -5 "$log")"
    ((SECONDS < deadline)) || die "framegate on h$i not ready within 30 s: $(tail -5 "$log")"
    sleep 0.2
  done
}

# nginx's config, derived from deploy/nginx/nginx.conf (the docker-compose
# scale-out balancer): the same stream proxy, hash and failure settings, with
# the hosts' gateways as upstreams and the entry address to listen on.
write_nginx_conf() {
  local out="$state_dir/nginx/nginx.conf" servers="" i
  mkdir -p "$state_dir/nginx/logs"
  for ((i = 1; i <= HOSTS; i++)); do
    servers+="    server $(host_addr "$i"):$GATEWAY_PORT max_fails=1 fail_timeout=10s;\n"
  done
  {
    if nginx -V 2>&1 | grep -q -- '--with-stream=dynamic'; then echo "load_module $STREAM_MODULE;"; fi
    awk -v servers="$servers" -v listen="$(entry_addr):$ENTRY_PORT" '
      /^[[:space:]]*server [^ ]+:8080 / { if (!done) { printf "%s", servers; done = 1; replaced++ } next }
      /^[[:space:]]*listen 8080;/ { sub(/listen 8080;/, "listen " listen ";"); replaced++ }
      /^[[:space:]]*proxy_connect_timeout/ {
        print
        # A host whose link is down does not refuse, it is silent: the connect
        # timeout marks it failed and the connection moves on along the ring.
        print "    proxy_next_upstream on;"
        print "    proxy_next_upstream_tries 0;"
        replaced++
        next
      }
      { print }
      END { if (replaced != 3) exit 3 }' "$NGINX_BASE"
  } >"$out" || die "$NGINX_BASE no longer has the shape this script derives from (upstream servers on :8080, listen 8080, proxy_connect_timeout)"
}

start_nginx() {
  write_nginx_conf
  local dir="$state_dir/nginx" pid
  ip netns exec "$PREFIX-edge" nginx -t -q -p "$dir" -c "$dir/nginx.conf" -e stderr -g "pid $dir/nginx.pid;" \
    >>"$state_dir/logs/nginx.log" 2>&1 || die "nginx -t refused $dir/nginx.conf: $(tail -5 "$state_dir/logs/nginx.log")"
  pid=$(spawn nginx "$PREFIX-edge" "$state_dir/logs/nginx.log" \
    nginx -p "$dir" -c "$dir/nginx.conf" -e stderr -g "daemon off; pid $dir/nginx.pid;")
  wait_for 10 ip netns exec "$PREFIX-edge" bash -c "exec 3<>/dev/tcp/$(entry_addr)/$ENTRY_PORT" ||
    die "nginx did not listen on $(entry_addr):$ENTRY_PORT: $(tail -5 "$state_dir/logs/nginx.log")"
}

# Prometheus file-based service discovery: one file per job, each target with
# the host it runs on as the `host` label (the dashboard's per-host row).
write_targets() {
  local dir="$state_dir/prometheus/targets" i w sep
  mkdir -p "$dir"
  {
    echo "["
    for ((i = 1; i <= HOSTS; i++)); do
      sep=""; [[ $i -lt $HOSTS ]] && sep=,
      echo "  {\"targets\": [\"$(host_addr "$i"):$ADMIN_PORT\"], \"labels\": {\"host\": \"h$i\"}}$sep"
    done
    echo "]"
  } >"$dir/gateways.json"
  {
    echo "["
    for ((i = 1; i <= HOSTS; i++)); do
      local targets=()
      for ((w = 0; w < WORKERS_PER_HOST; w++)); do targets+=("\"$(host_addr "$i"):$((WORKER_ADMIN_PORT + w))\""); done
      sep=""; [[ $i -lt $HOSTS ]] && sep=,
      echo "  {\"targets\": [$(
        IFS=,
        echo "${targets[*]}"
      )], \"labels\": {\"host\": \"h$i\"}}$sep"
    done
    echo "]"
  } >"$dir/workers.json"
}

# Prometheus's config, derived from deploy/prometheus/prometheus.yml: the same
# jobs, intervals and alerting rules, file_sd_configs instead of Docker's DNS.
write_prometheus_conf() {
  /usr/bin/python3 - "$PROMETHEUS_BASE" "$state_dir/prometheus" <<'EOF' || die "could not derive prometheus.yml (python3 with PyYAML needed)"
import os, sys, yaml
base, out = sys.argv[1], sys.argv[2]
with open(base) as f:
    config = yaml.safe_load(f)
# The alerting rules stay where they are: named relative to the base config.
config["rule_files"] = [os.path.join(os.path.dirname(base), r) for r in config.get("rule_files", [])]
files = {"framegate-gateway": "gateways.json", "framegate-worker": "workers.json"}
for job in config["scrape_configs"]:
    job.pop("dns_sd_configs", None)
    job["file_sd_configs"] = [{"files": [f"{out}/targets/{files[job['job_name']]}"], "refresh_interval": "5s"}]
with open(f"{out}/prometheus.yml", "w") as f:
    f.write("# Generated by deploy/multihost/multihost.sh from deploy/prometheus/prometheus.yml\n")
    yaml.safe_dump(config, f, sort_keys=False)
EOF
}

start_prometheus() {
  local dir="$state_dir/prometheus"
  write_prometheus_conf
  spawn prometheus "$PREFIX-edge" "$state_dir/logs/prometheus.log" \
    prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
    --web.listen-address="$(entry_addr):$PROMETHEUS_PORT" >/dev/null
  wait_for 20 ip netns exec "$PREFIX-edge" curl -sf -m 2 "http://$(entry_addr):$PROMETHEUS_PORT/-/ready" ||
    die "prometheus not ready within 20 s: $(tail -5 "$state_dir/logs/prometheus.log")"
}

write_run_json() {
  local i w out="$state_dir/run.json" sep
  {
    echo "{"
    echo "  \"id\": \"$RUN_ID\", \"prefix\": \"$PREFIX\", \"slot\": $SLOT, \"root_link\": \"$ROOT_LINK\","
    echo "  \"redis_mode\": \"$REDIS_MODE\", \"redis_args\": \"$(redis_args)\","
    echo "  \"namespaces\": [\"$PREFIX-sw\", \"$PREFIX-edge\"$(for ((i = 1; i <= HOSTS; i++)); do printf ', "%s"' "$(host_ns "$i")"; done)],"
    echo "  \"entry\": $([[ $NGINX == 1 ]] && echo "\"$(entry_addr):$ENTRY_PORT\"" || echo null),"
    echo "  \"prometheus\": $([[ $PROMETHEUS == 1 ]] && echo "\"$(entry_addr):$PROMETHEUS_PORT\"" || echo null),"
    echo "  \"root_addr\": \"$(root_addr)\","
    echo "  \"client_addrs\": [$(for ((i = 0; i < CLIENT_ADDRS; i++)); do
      printf '%s"%s"' "$([[ $i -gt 0 ]] && echo ', ')" "$ENTRY_NET.$((CLIENT_FIRST_OCTET + i))"
    done)],"
    echo "  \"hosts\": ["
    for ((i = 1; i <= HOSTS; i++)); do
      sep=""; [[ $i -lt $HOSTS ]] && sep=,
      echo "    {\"index\": $i, \"name\": \"h$i\", \"namespace\": \"$(host_ns "$i")\", \"addr\": \"$(host_addr "$i")\","
      echo "     \"gateway\": \"$(host_addr "$i"):$GATEWAY_PORT\", \"admin\": \"$(host_addr "$i"):$ADMIN_PORT\","
      echo "     \"framegate_up\": \"$BUILD_DIR/bin/framegate $(framegate_up_args "$i")\","
      echo "     \"worker_admin\": [$(for ((w = 0; w < WORKERS_PER_HOST; w++)); do
        printf '%s"%s:%s"' "$([[ $w -gt 0 ]] && echo ', ')" "$(host_addr "$i")" $((WORKER_ADMIN_PORT + w))
      done)]}$sep"
    done
    echo "  ]"
    echo "}"
  } >"$out"
}

up_failed() {
  local rc=$?
  trap - EXIT INT TERM
  if [[ ${UP_DONE:-0} != 1 ]]; then
    say "up failed (exit $rc): removing what it made"
    do_down || true
    exit $((rc == 0 ? 1 : rc))
  fi
}

cmd_up() {
  HOSTS=3 REDIS_MODE=cluster NGINX=0 PROMETHEUS=0 DELAY_MS=0 WORKERS_PER_HOST=1 CLIENT_ADDRS=32
  BUILD_DIR="$REPO_DIR/build" SLOT="" REDIS_ONLY=0
  while (($#)); do
    case $1 in
      --hosts) HOSTS=${2:?}; shift ;;
      --redis-mode) REDIS_MODE=${2:?}; shift ;;
      --nginx) NGINX=1 ;;
      --prometheus) PROMETHEUS=1 ;;
      --delay-ms) DELAY_MS=${2:?}; shift ;;
      --workers-per-host) WORKERS_PER_HOST=${2:?}; shift ;;
      --build-dir) BUILD_DIR=${2:?}; shift ;;
      --state-dir) state_dir=${2:?}; shift ;;
      --slot) SLOT=${2:?}; shift ;;
      --client-addrs) CLIENT_ADDRS=${2:?}; shift ;;
      --redis-only) REDIS_ONLY=1 ;;
      *) die "up: unknown option '$1' (see --help)" ;;
    esac
    shift
  done
  whole_in "$HOSTS" 1 200 || die "--hosts: 1 to 200"
  [[ $REDIS_MODE == cluster || $REDIS_MODE == single ]] || die "--redis-mode: cluster or single"
  [[ $DELAY_MS =~ ^[0-9]+$ ]] || die "--delay-ms: a whole number of milliseconds"
  whole_in "$WORKERS_PER_HOST" 1 1000 || die "--workers-per-host: 1 to 1000"
  whole_in "$CLIENT_ADDRS" 0 240 || die "--client-addrs: 0 to 240"
  BUILD_DIR=$(cd "$BUILD_DIR" 2>/dev/null && pwd) || die "--build-dir: no such directory"
  if ((!REDIS_ONLY)); then
    local bin
    for bin in framegate framegate-gateway framegate-worker; do
      [[ -x "$BUILD_DIR/bin/$bin" ]] || die "$BUILD_DIR/bin/$bin missing: build it, or pass --build-dir"
    done
    # An unknown option would be passed on to the children as an environment
    # variable and silently ignored, leaving each host on a private Redis.
    # (The help is read whole first: grep -q would stop reading early, and
    # the SIGPIPE of the writer would fail the pipeline under pipefail.)
    if [[ $REDIS_MODE == cluster ]] && [[ $("$BUILD_DIR/bin/framegate" up --help 2>&1) != *--redis-cluster* ]]; then
      die "--redis-mode cluster: $BUILD_DIR/bin/framegate up has no --redis-cluster option yet; use --redis-mode single (or --redis-only to bring up just the namespaces and the Redis cluster)"
    fi
  fi
  require_root
  if [[ -e "$state_dir" ]] && [[ -n "$(ls -A "$state_dir")" ]]; then
    die "$state_dir is not empty (another run? 'multihost.sh down --state-dir $state_dir' first, or pick another --state-dir)"
  fi
  mkdir -p "$state_dir/logs"
  state_dir=$(cd "$state_dir" && pwd)
  : >"$state_dir/resources"
  trap up_failed EXIT
  trap 'exit 130' INT TERM

  # Runs started together would pick the same free slot: choosing it and
  # claiming it (the root link's addresses, in make_network) is one step.
  local lock_fd
  exec {lock_fd}>"${TMPDIR:-/tmp}/framegate-multihost.lock"
  flock "$lock_fd"
  [[ -n $SLOT ]] || SLOT=$(pick_slot)
  whole_in "$SLOT" 0 127 || die "--slot: 0 to 127"
  RUN_ID=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
  PREFIX="fgmh-$RUN_ID"
  ROOT_LINK="fgmh$RUN_ID"
  HOST_NET="198.18.$((2 * SLOT))"
  ENTRY_NET="198.18.$((2 * SLOT + 1))"
  local key
  for key in RUN_ID PREFIX ROOT_LINK SLOT HOST_NET ENTRY_NET HOSTS REDIS_MODE NGINX PROMETHEUS DELAY_MS \
    WORKERS_PER_HOST CLIENT_ADDRS BUILD_DIR REDIS_ONLY; do
    set_state "$key" "${!key}"
  done

  say "run $PREFIX: $HOSTS hosts on $HOST_NET.0/24, entry network $ENTRY_NET.0/24, redis $REDIS_MODE"
  make_network
  exec {lock_fd}>&-
  if [[ $REDIS_MODE == single ]]; then start_redis_single; else start_redis_cluster; fi
  write_targets
  if ((!REDIS_ONLY)); then
    local i
    for ((i = 1; i <= HOSTS; i++)); do start_framegate "$i"; done
  fi
  ((NGINX)) && start_nginx
  ((PROMETHEUS)) && start_prometheus
  write_run_json
  UP_DONE=1
  trap - EXIT INT TERM
  say "up: state in $state_dir (run.json describes the run)"
  ((NGINX)) && say "entry: ws://$(entry_addr):$ENTRY_PORT/rooms"
  ((REDIS_ONLY)) || for ((i = 1; i <= HOSTS; i++)); do say "h$i: $(host_ns "$i") gateway ws://$(host_addr "$i"):$GATEWAY_PORT/ admin http://$(host_addr "$i"):$ADMIN_PORT/metrics"; done
  return 0
}

# --- down --------------------------------------------------------------------------

# Removes everything in the resources file, newest first, and the state dir.
# Safe to run twice and after any partial up. Returns 1 when something did
# not stop cleanly (unclean_stops), after removing everything all the same.
do_down() {
  local res="$state_dir/resources" kind a b label pids=() labels=() netns=() links=() pid deadline i
  local unclean=()
  [[ -f $res ]] || return 0
  while read -r kind a b label; do
    case $kind in
      pid) pid_is_ours "$a" "$b" && pids+=("$a") && labels+=("$label") ;;
      netns) netns=("$a" "${netns[@]}") ;;
      link) links+=("$a") ;;
    esac
  done <"$res"
  if ((${#pids[@]})); then
    kill -TERM "${pids[@]}" 2>/dev/null || true
    deadline=$((SECONDS + 15))
    for i in "${!pids[@]}"; do
      pid=${pids[i]}
      while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
      if kill -KILL "$pid" 2>/dev/null; then unclean+=("${labels[i]} (pid $pid) did not stop within 15 s of SIGTERM: killed"); fi
    done
  fi
  # Anything still inside our namespaces was started there by this run (a
  # gateway or worker whose supervisor was SIGKILLed, a redis-cli): a namespace
  # deleted with processes in it lives on, unnamed, so they go too.
  local ns left
  for ns in "${netns[@]}"; do
    ip netns list | grep -q "^$ns\( \|$\)" || continue
    left=$(ip netns pids "$ns" 2>/dev/null || true)
    if [[ -n $left ]]; then
      # shellcheck disable=SC2086
      kill -KILL $left 2>/dev/null || true
    fi
  done
  for pid in "${pids[@]}"; do
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  done
  for a in "${links[@]}"; do ip link del "$a" 2>/dev/null || true; done
  for ns in "${netns[@]}"; do
    if ip netns list | grep -q "^$ns\( \|$\)"; then
      ip netns del "$ns" || say "could not delete namespace $ns"
    fi
  done
  # The root route went with the link; the client addresses too.
  local line
  while IFS= read -r line; do unclean+=("$line"); done < <(unclean_stops)
  rm -rf "$state_dir"
  say "down: removed ${#netns[@]} namespaces, ${#links[@]} root link(s), ${#pids[@]} running process(es) and $state_dir"
  ((${#unclean[@]} == 0)) && return 0
  say "down: ${#unclean[@]} process(es) did not stop cleanly:"
  for line in "${unclean[@]}"; do say "  $line"; done
  return 1
}

# What each host's supervisor said of the children it stopped, when a
# child exited non-zero or by a signal (a crash at exit, a sanitizer's
# report) or had to be killed at the stop timeout: "hN: <its line>".
unclean_stops() {
  local log host
  for log in "$state_dir"/logs/h*-framegate.log; do
    [[ -f $log ]] || continue
    host=$(basename "$log" -framegate.log)
    grep -E '\[supervisor\] .*(stopped: (exited with status [1-9]|killed by|ended with)|did not exit within)' "$log" |
      sed "s/^.*\[supervisor\] /$host: /" || true
  done
}

cmd_down() {
  [[ $EUID -eq 0 ]] || die "down needs root"
  if [[ ! -f "$state_dir/resources" ]]; then
    say "nothing recorded in $state_dir: nothing to remove"
    return 0
  fi
  do_down
}

# --- status ------------------------------------------------------------------------

status_failures=0
check() { # OK? LABEL DETAIL
  if [[ $1 == ok ]]; then printf '  %-8s %s\n' ok "$2"; elif [[ $1 == warn ]]; then printf '  %-8s %s\n' WARN "$2"; else
    printf '  %-8s %s\n' FAIL "$2"
    status_failures=$((status_failures + 1))
  fi
}

status_redis_cluster() {
  local j h addr info nodes
  for ((j = 0; j < CLUSTER_NODES; j++)); do
    h=$(cluster_node_host "$j")
    addr=$(cluster_node_addr "$j")
    if info=$(redis_cli "$h" "$addr" cluster info 2>/dev/null) && [[ -n $info ]]; then
      if grep -q '^cluster_state:ok' <<<"$info"; then check ok "redis $addr (h$h): cluster_state ok"; else
        check fail "redis $addr (h$h): $(grep '^cluster_state' <<<"$info" | tr -d '\r')"
      fi
      [[ -n ${nodes:-} ]] || nodes=$(redis_cli "$h" "$addr" cluster nodes 2>/dev/null | tr -d '\r')
    else
      check fail "redis $addr (h$h): not answering"
    fi
  done
  [[ -n ${nodes:-} ]] || return 0
  # CLUSTER NODES: id ip:port@bus flags primary-id ping pong epoch link-state slots...
  local id ipport flags primary rest slotted=0
  declare -A addr_of=()
  while read -r id ipport flags primary rest; do addr_of[$id]=${ipport%@*}; done <<<"$nodes"
  while read -r id ipport flags primary rest; do
    ipport=${ipport%@*}
    # Flags are comma-separated; "fail?" is only suspected (PFAIL).
    if [[ ,$flags, == *,fail,* ]]; then check fail "cluster node $ipport is marked failed ($flags)"; fi
    if [[ ,$flags, == *,master,* && ,$flags, != *,fail,* ]]; then
      # shellcheck disable=SC2086
      set -- $rest
      (($# > 4)) && slotted=$((slotted + 1))
    fi
    if [[ ,$flags, == *,slave,* ]]; then
      local p=${addr_of[$primary]:-?}
      if [[ $p == ? ]]; then check fail "replica $ipport has an unknown primary"
      elif [[ $(host_of_addr "$p") == "$(host_of_addr "$ipport")" ]]; then
        check warn "replica $ipport shares host h$(host_of_addr "$ipport") with its primary $p"
      else check ok "replica $ipport (h$(host_of_addr "$ipport")) of primary $p (h$(host_of_addr "$p"))"; fi
    fi
  done <<<"$nodes"
  if ((slotted >= 3)); then check ok "$slotted primaries serve slots"; else check fail "only $slotted primaries serve slots"; fi
}

cmd_status() {
  load_state
  local i ns link st pid
  echo "run $PREFIX: $HOSTS hosts, redis $REDIS_MODE, $WORKERS_PER_HOST worker(s) per host, state $state_dir"
  echo "network: hosts $HOST_NET.1-$HOSTS/24, edge $(edge_addr) and $(entry_addr), root $(root_addr) on $ROOT_LINK"
  for ns in "$PREFIX-sw" "$PREFIX-edge"; do
    if ip netns list | grep -q "^$ns\( \|$\)"; then check ok "namespace $ns"; else check fail "namespace $ns missing"; fi
  done
  if ip link show "$ROOT_LINK" >/dev/null 2>&1; then check ok "root link $ROOT_LINK"; else check fail "root link $ROOT_LINK missing"; fi
  echo "hosts:"
  for ((i = 1; i <= HOSTS; i++)); do
    ns=$(host_ns "$i")
    if ! ip netns list | grep -q "^$ns\( \|$\)"; then
      check fail "h$i: namespace $ns missing"
      continue
    fi
    link=$(ip -n "$PREFIX-sw" -o link show "h$i" 2>/dev/null)
    if [[ $link == *"state UP"* || $link == *",UP"* ]]; then check ok "h$i $(host_addr "$i"): switch port up"; else
      check warn "h$i $(host_addr "$i"): switch port down (link-down $i)"
    fi
    ((REDIS_ONLY)) && continue
    if pid=$(pid_of "framegate:h$i"); then check ok "h$i: framegate up running (pid $pid)"; else check fail "h$i: framegate up not running"; fi
    if framegate_ready "$i" >/dev/null 2>&1; then check ok "h$i: gateway ready at $(host_addr "$i"):$GATEWAY_PORT"; else
      check fail "h$i: gateway not ready (http://$(host_addr "$i"):$ADMIN_PORT/readyz)"
    fi
  done
  echo "redis ($REDIS_MODE):"
  if [[ $REDIS_MODE == single ]]; then
    if [[ "$(redis_cli 1 "$(host_addr 1):$REDIS_PORT" ping 2>/dev/null)" == PONG ]]; then
      check ok "redis $(host_addr 1):$REDIS_PORT (h1) answers"
    else check fail "redis $(host_addr 1):$REDIS_PORT (h1) not answering"; fi
  else
    status_redis_cluster
  fi
  if ((NGINX)); then
    echo "nginx:"
    if pid=$(pid_of nginx) && ip netns exec "$PREFIX-edge" bash -c "exec 3<>/dev/tcp/$(entry_addr)/$ENTRY_PORT" 2>/dev/null; then
      check ok "nginx (pid $pid) on $(entry_addr):$ENTRY_PORT"
    else check fail "nginx not listening on $(entry_addr):$ENTRY_PORT"; fi
  fi
  if ((PROMETHEUS)); then
    echo "prometheus:"
    if ip netns exec "$PREFIX-edge" curl -sf -m 2 "http://$(entry_addr):$PROMETHEUS_PORT/-/ready" >/dev/null; then
      check ok "prometheus on http://$(entry_addr):$PROMETHEUS_PORT/"
    else check fail "prometheus not ready"; fi
  fi
  ((status_failures == 0)) || {
    echo "$status_failures check(s) failed"
    return 1
  }
}

# --- helpers for tests --------------------------------------------------------------

host_index_arg() {
  whole_in "${1:-}" 1 "$HOSTS" || die "a host index from 1 to $HOSTS expected, got '${1:-}'"
}

cmd_link() { # up|down I
  load_state
  host_index_arg "${2:-}"
  # The host's switch port: both ends of its veth lose carrier, as when a
  # cable is pulled; nothing is refused, packets just stop.
  ip -n "$PREFIX-sw" link set "h$2" "$1"
  say "h$2: link $1"
}

cmd_exec() {
  load_state
  local target=${1:-}
  shift || true
  (($#)) || die "exec: exec I|edge|switch CMD..."
  case $target in
    edge) exec ip netns exec "$PREFIX-edge" "$@" ;;
    switch) exec ip netns exec "$PREFIX-sw" "$@" ;;
    *) host_index_arg "$target"; exec ip netns exec "$(host_ns "$target")" "$@" ;;
  esac
}

# Whether node OTHER sees the cluster whole again with VICTIM failed and
# holding no slots (its replica took them).
failover_seen() { # VICTIM_ADDR OTHER_J
  local h addr line
  h=$(cluster_node_host "$2")
  addr=$(cluster_node_addr "$2")
  redis_cli "$h" "$addr" cluster info | grep -q '^cluster_state:ok' || return 1
  line=$(redis_cli "$h" "$addr" cluster nodes | grep " $1@") || return 1
  # shellcheck disable=SC2086
  set -- $line
  [[ ,$3, == *,fail,* && $# -eq 8 ]]
}

kill_recorded() { # LABEL: SIGKILL, and wait until it is gone
  local pid
  pid=$(pid_of "$1") || die "$1 is not running"
  kill -KILL "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  echo "$pid"
}

cmd_kill_redis_primary() {
  load_state
  local host="" down_for=1 restart=1
  while (($#)); do
    case $1 in
      --on-host) host=${2:?}; shift ;;
      --down-for) down_for=${2:?}; shift ;;
      --no-restart) restart=0 ;;
      *) die "kill-redis-primary: unknown option '$1'" ;;
    esac
    shift
  done
  host_index_arg "$host"
  if [[ $REDIS_MODE == single ]]; then
    ((host == 1)) || die "single mode: the one redis-server runs on h1, not h$host"
    local pid
    pid=$(kill_recorded "redis:$(host_addr 1):$REDIS_PORT")
    say "killed redis-server $(host_addr 1):$REDIS_PORT (pid $pid)"
    if ((restart)); then
      sleep "$down_for"
      start_redis_single
      say "restarted redis-server $(host_addr 1):$REDIS_PORT (empty: nothing is saved)"
    fi
    return 0
  fi
  # Cluster: the first node on that host that is a primary now.
  local j victim="" addr
  for ((j = 0; j < CLUSTER_NODES; j++)); do
    [[ $(cluster_node_host "$j") == "$host" ]] || continue
    addr=$(cluster_node_addr "$j")
    if redis_cli "$host" "$addr" role 2>/dev/null | head -1 | grep -q '^master'; then
      victim=$j
      break
    fi
  done
  [[ -n $victim ]] || die "no Redis primary runs on h$host now (see status)"
  addr=$(cluster_node_addr "$victim")
  local pid
  pid=$(kill_recorded "redis:$addr")
  say "killed Redis primary $addr on h$host (pid $pid); waiting for a replica to take over"
  wait_for 30 failover_seen "$addr" $(((victim + 1) % CLUSTER_NODES)) ||
    die "no failover within 30 s after killing $addr"
  say "failover done: a replica of $addr is primary now"
  if ((restart)); then
    start_cluster_node "$victim"
    wait_for 30 cluster_ok_everywhere || die "the cluster is not ok 30 s after $addr came back"
    say "restarted $addr: it rejoined as a replica"
  fi
}

# --- main ------------------------------------------------------------------------------

main() {
  local command=${1:-}
  shift || true
  # --state-dir may come anywhere among the arguments of every command but exec.
  local args=()
  if [[ $command != exec ]]; then
    while (($#)); do
      if [[ $1 == --state-dir && $command != up ]]; then state_dir=${2:?}; shift 2; continue; fi
      args+=("$1")
      shift
    done
  else
    if [[ ${1:-} == --state-dir ]]; then state_dir=${2:?}; shift 2; fi
    args=("$@")
  fi
  set -- "${args[@]+"${args[@]}"}"
  case $command in
    up) cmd_up "$@" ;;
    down) cmd_down ;;
    status) cmd_status ;;
    link-down) cmd_link down "$@" ;;
    link-up) cmd_link up "$@" ;;
    exec) cmd_exec "$@" ;;
    kill-redis-primary) cmd_kill_redis_primary "$@" ;;
    -h | --help | help) usage ;;
    *)
      usage >&2
      exit 2
      ;;
  esac
}

main "$@"
