#!/bin/bash
# framegate-healthcheck [PATH]: exits 0 when the admin listener of the
# framegate process in this container answers GET PATH (default /healthz)
# with 200, else 1. The image's HEALTHCHECK and the compose healthchecks
# run it; it reads the address from FRAMEGATE_ADMIN, as the process does.
#
# Why bash and /dev/tcp rather than curl or wget: bash is already in
# debian:bookworm-slim, so the probe adds no package (and no TLS stack or
# its CVEs) to a runtime image that otherwise holds only the binaries'
# shared libraries. One HTTP/1.1 request with "Connection: close" and the
# status line is all a health probe needs.
set -uo pipefail

path="${1:-/healthz}"
admin="${FRAMEGATE_ADMIN:-127.0.0.1:9090}"
if [[ "$admin" == off ]]; then
  echo "framegate-healthcheck: FRAMEGATE_ADMIN=off: no admin listener to ask" >&2
  exit 1
fi
port="${admin##*:}"
host="${admin%:*}"
host="${host#[}"
host="${host%]}"
# A wildcard listen address is reached through loopback.
case "$host" in
  0.0.0.0 | "") host=127.0.0.1 ;;
  ::) host=::1 ;;
esac

if ! exec 3<>"/dev/tcp/$host/$port"; then
  echo "framegate-healthcheck: nothing listens on $host:$port" >&2
  exit 1
fi
printf 'GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$path" "$admin" >&3
# The listener answers at once; the bound keeps a wedged process from
# holding the probe until Docker's own timeout.
if ! read -r -t 5 _ status _ <&3; then
  echo "framegate-healthcheck: no answer from $host:$port" >&2
  exit 1
fi
if [[ "$status" != 200 ]]; then
  echo "framegate-healthcheck: GET $path answered $status" >&2
  exit 1
fi
