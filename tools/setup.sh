#!/usr/bin/env bash
# Installs everything framegate needs to build, test and benchmark on
# Debian 12, as root. Idempotent: it installs only what is missing, and
# runs `apt-get update` only when something is.
#
#   tools/setup.sh            build + test dependencies
#   tools/setup.sh --bench    also what the benchmarks and plots need
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates procps iproute2
  iptables  # the Redis partition test drops packets in a network namespace of its own
  libboost-dev libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libprotobuf-dev protobuf-compiler libhiredis-dev liburing-dev prometheus-cpp-dev zlib1g-dev libssl-dev
  redis-server
  chromium  # headless, for the browser demo test (tests/integration/browser)
  python3 python3-websockets
  python3-protobuf  # the Python worker of the link protocol test (tests/interop)
  # the package test (tests/integration/package): cpack's Depends, a Debian 12 root, its unit checks
  dpkg-dev debootstrap systemd
  # the deployment checks (tests/integration/deploy): compose files, Prometheus config, nginx load balancer
  docker-compose python3-yaml prometheus nginx libnginx-mod-stream
  openssl  # a certificate for the TLS balancer check (deploy/nginx/tls.conf)
  # and the live compose test (label compose): debootstrap for its base image, no registry needed
  debootstrap
  clang libclang-rt-14-dev clang-format clang-tidy
  shellcheck  # tools/lint_shell.sh (ctest lint_shell)
  strace  # bench/count_syscalls.sh without perf (ctest bench_echo_probes_smoke)
)
if [[ "${1:-}" == "--bench" ]]; then
  packages+=(python3-matplotlib linux-perf)
fi
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)
# A Docker engine for the compose test; one installed otherwise (docker-ce) is used as it is.
command -v dockerd >/dev/null 2>&1 || packages+=(docker.io)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: missing Debian packages (run as root): ${missing[*]}" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # Where the package starts its daemon (systemd), its bridge and networks must be in
  # 198.19.0.0/16, the benchmarking range, never another private one: the same
  # addresses the compose test gives a daemon it starts (tests/integration/deploy/compose).
  if [[ " ${missing[*]} " == *" docker.io "* && ! -e /etc/docker/daemon.json ]]; then
    mkdir -p /etc/docker
    echo '{"bip": "198.19.0.1/24", "default-address-pools": [{"base": "198.19.64.0/18", "size": 24}]}' \
      >/etc/docker/daemon.json
  fi
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Only the tools are wanted, not the daemons their packages start on a
  # systemd host: Prometheus would hold port 9090, framegate's admin default.
  # Services a machine already had are left alone.
  if [[ -d /run/systemd/system ]]; then
    for service in prometheus nginx; do
      if [[ " ${missing[*]} " == *" $service "* ]]; then
        systemctl disable --now --quiet "$service" 2>/dev/null || true
      fi
    done
  fi
fi

# npm packages, pinned by their lock files; reinstalled only when the lock changes.
for dir in tests bench; do
  [[ -f "$dir/package-lock.json" ]] || continue
  stamp="$dir/node_modules/.framegate-lock"
  if ! cmp -s "$dir/package-lock.json" "$stamp" 2>/dev/null; then
    echo "setup: npm ci in $dir/"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    cp "$dir/package-lock.json" "$stamp"
  fi
done
