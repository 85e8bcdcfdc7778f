# Shell helpers shared by the benchmark scripts (sourced, not run).
# Each script sets LOG_TAG (e.g. run_fanout) and WORK (its scratch directory).

die() { echo "$LOG_TAG: $*" >&2; exit 2; }

# The scripts' shared command line: --quick sets QUICK=1; -h/--help prints
# the calling script's header comment (lines 2..HELP_END) and exits.
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

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_redis() {  # a fresh redis-server on a free loopback port: sets REDIS_PID, REDIS_URL
  local port i
  port=$(free_port)
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --loglevel warning \
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

# Waits up to QUIET_WAIT s for the 1-minute load average to drop below 1.0;
# sets LOAD_BEFORE and DISTURBED.
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

# start_rooms_server framegate|node [SERVER ARGS...]: the cluster serving
# /rooms (framegate up with WORKERS workers, or the Node cluster peer) on a
# free port, sharing REDIS_URL; sets SERVER_PID, PORT and PROBES (the
# loadgen's --probe-pid arguments for every process of the cluster).
start_rooms_server() {
  local kind=$1 pids p i
  shift
  PROBES=("--probe-pid" "redis=$REDIS_PID")
  : >"$WORK/server.log"  # before the start: wait_listening must not find the last run's line
  case "$kind" in
    framegate)
      # --admin off: the admin listener's default port 9090 could be taken.
      "$FRAMEGATE" up --listen 127.0.0.1:0 --workers "$WORKERS" --redis "$REDIS_URL" --admin off \
        --log-level info "$@" >"$WORK/server.log" 2>&1 &
      SERVER_PID=$!
      wait_listening "$WORK/server.log" 'gateway listening on ws://[0-9.]+:[0-9]+/?'
      # The supervisor's children: the gateway and the workers (their pids for the CPU probes).
      for ((i = 0; i < 100; ++i)); do
        pids=$(ps --ppid "$SERVER_PID" -o pid=,comm= | awk '$2 ~ /framegate-worke/ {print $1}' | wc -l)
        ((pids >= WORKERS)) && break
        sleep 0.05
      done
      p=$(ps --ppid "$SERVER_PID" -o pid=,comm= | awk '$2 ~ /framegate-gatew/ {print $1}' | head -1)
      [[ -n "$p" ]] && PROBES+=("--probe-pid" "gateway=$p")
      i=0
      for p in $(ps --ppid "$SERVER_PID" -o pid=,comm= | awk '$2 ~ /framegate-worke/ {print $1}'); do
        PROBES+=("--probe-pid" "worker$i=$p")
        i=$((i + 1))
      done
      PROBES+=("--probe-pid" "supervisor=$SERVER_PID")
      ;;
    node)
      node "$BENCH/peers/node-cluster-rooms.js" --port 0 --workers "$WORKERS" --redis "$REDIS_URL" "$@" \
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
  esac
}

rss_kib() {  # rss_kib PID: VmRSS of a process in KiB (0 if gone)
  awk '/^VmRSS:/ {print $2; found=1} END {if (!found) print 0}' "/proc/$1/status" 2>/dev/null || echo 0
}
