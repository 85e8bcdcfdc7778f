#!/usr/bin/env bash
# The cost of verifying tokens on a reconnect storm (issue #15, "Measured"):
# handshakes per second of `framegate-gateway --echo` (no worker: the
# handshake is the whole job) under framegate-loadgen --mode storm, CLIENTS
# clients each connecting, upgrading, closing and connecting again, one
# after another in the same run against
#   none    no key configured (tokens are not looked at; none is sent)
#   hs256   --jwt-secret-file,     TOKENS distinct HS256 tokens (?token=)
#   es256   --jwt-public-key-file, TOKENS distinct ES256 tokens (P-256)
# each gateway fresh on a free 127.0.0.1 port and stopped by PID. Keys and
# tokens are made for the run (openssl, bench/make_tokens.py).
#
#   bench/run_handshake.sh           full run (ROUNDS x 3 runs of 10 s, ~1.5 minutes + waits)
#   bench/run_handshake.sh --quick   2 s per run, one round, no waiting (smoke test)
#
# Environment:
#   FRAMEGATE_GATEWAY_BIN   gateway binary (default build/bin/framegate-gateway)
#   FRAMEGATE_LOADGEN_BIN   load generator (default: next to the gateway, else build/bin)
#   KINDS                   which, in this order per round (default "none hs256 es256")
#   ROUNDS                  rounds of KINDS (default 2; 1 with --quick): drift hits all alike
#   CLIENTS                 concurrent storm clients (default 50)
#   TOKENS                  distinct tokens per algorithm (default 200)
#   GATEWAY_THREADS         gateway --threads (default 1: the load generator has the other core)
#   DURATION, WARMUP        seconds per run (default 10 and 1; 2 and 0.5 with --quick)
#   RESULTS_DIR             where handshake-<date>.json goes (default bench/results)
#   QUIET_WAIT              before each run, seconds to wait for the 1-minute load
#                           average to drop below 1.0 (default 120; 0 with --quick)
# Output: a markdown table on stdout (rates, ratios to "none", CPU of the
# gateway and of the load generator) and bench/results/handshake-<date>.json.
# Exit code 1 if a run refused a handshake, failed otherwise or the gateway died.
set -euo pipefail

LOG_TAG=run_handshake
# shellcheck source=bench/bench_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
GATEWAY=${FRAMEGATE_GATEWAY_BIN:-$ROOT/build/bin/framegate-gateway}
LOADGEN=$(bin_beside "${FRAMEGATE_LOADGEN_BIN:-}" "$GATEWAY" framegate-loadgen)
KINDS=${KINDS:-none hs256 es256}
CLIENTS=${CLIENTS:-50}
TOKENS=${TOKENS:-200}
GATEWAY_THREADS=${GATEWAY_THREADS:-1}

parse_bench_args 30 "$@"
if ((QUICK)); then
  DURATION=${DURATION:-2} WARMUP=${WARMUP:-0.5} ROUNDS=${ROUNDS:-1}
else
  DURATION=${DURATION:-10} WARMUP=${WARMUP:-1} ROUNDS=${ROUNDS:-2}
fi

[[ -x "$GATEWAY" ]] || die "gateway not found: $GATEWAY (build it, or set FRAMEGATE_GATEWAY_BIN)"
[[ -x "$LOADGEN" ]] || die "load generator not found: $LOADGEN (build framegate-loadgen, or set FRAMEGATE_LOADGEN_BIN)"
grep -q -- 'storm' <<<"$("$LOADGEN" --help)" || die "$LOADGEN has no storm mode: rebuild framegate-loadgen"
command -v openssl >/dev/null || die "openssl is required for the keys and the ES256 tokens"
for k in $KINDS; do
  case "$k" in none|hs256|es256) ;; *) die "KINDS: unknown kind '$k' (none, hs256, es256)" ;; esac
done
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

WORK=$(mktemp -d /tmp/handshake.XXXXXX)
REDIS_PID="" SERVER_PID=""
stop_all_on_exit

# The keys and tokens, the same for every round.
(umask 077 && openssl rand -base64 48 >"$WORK/jwt-secret")
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$WORK/es256.key" 2>/dev/null
openssl pkey -in "$WORK/es256.key" -pubout -out "$WORK/es256.pub"
python3 "$BENCH/make_tokens.py" hs256 "$WORK/jwt-secret" "$TOKENS" "$WORK/hs256.tokens"
python3 "$BENCH/make_tokens.py" es256 "$WORK/es256.key" "$TOKENS" "$WORK/es256.tokens"

kind_args() {  # the gateway's key options and the load generator's token option of a kind
  case "$1" in
    none) GW_KEY=() LG_TOKENS=() ;;
    hs256) GW_KEY=(--jwt-secret-file "$WORK/jwt-secret") LG_TOKENS=(--token-file "$WORK/hs256.tokens") ;;
    es256) GW_KEY=(--jwt-public-key-file "$WORK/es256.pub") LG_TOKENS=(--token-file "$WORK/es256.tokens") ;;
  esac
}

status=0
runs=()
for ((round = 1; round <= ROUNDS; ++round)); do
  for kind in $KINDS; do
    wait_quiet
    kind_args "$kind"
    : >"$WORK/server.log"
    "$GATEWAY" --echo --listen 127.0.0.1:0 --threads "$GATEWAY_THREADS" --admin off --log-level info \
      "${GW_KEY[@]}" >"$WORK/server.log" 2>&1 &
    SERVER_PID=$!
    wait_listening "$WORK/server.log" 'listening on [0-9.]+:[0-9]+'
    note=""
    [[ $DISTURBED == true ]] && note=", disturbed"
    echo "[run_handshake] round $round: $kind on port $PORT (gateway pid $SERVER_PID; load $LOAD_BEFORE$note)" >&2
    stem="$WORK/$kind.$round"
    out="$stem.json"
    set +e
    "$LOADGEN" --mode storm --url "ws://127.0.0.1:$PORT/" --connections "$CLIENTS" "${LG_TOKENS[@]}" \
      --duration "$DURATION" --warmup "$WARMUP" --probe-pid "gateway=$SERVER_PID" --json "$out" --no-progress \
      >"$stem.txt" 2>"$stem.err"
    rc=$?
    set -e
    check_run "$kind (round $round)" "$stem" "$rc" || status=1
    annotate_run "$out" "$WORK/server.log" 8 kind="$kind" round="$round" loadgen_exit="$rc" server_alive="$ALIVE" \
      load_before="$LOAD_BEFORE" load_after="$(cut -d' ' -f1 /proc/loadavg)" disturbed="$DISTURBED"
    runs+=("$out")
    stop_server gateway
  done
done

result=$(results_file handshake)
python3 "$BENCH/handshake_report.py" --out "$result" --quick "$QUICK" --clients "$CLIENTS" --tokens "$TOKENS" \
  --gateway-threads "$GATEWAY_THREADS" --gateway "$GATEWAY" "${runs[@]}"
echo "[run_handshake] results: $result" >&2
exit $status
