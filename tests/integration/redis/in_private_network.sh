#!/bin/sh
# Runs a command in a network namespace of its own, with only a loopback
# interface, and a mount namespace of its own: firewall rules the command
# adds (to cut a connection without a FIN) and files it mounts over
# /etc/resolv.conf or /etc/hosts (a DNS that does not answer) exist only
# there and vanish with it, and nothing it starts can be reached from, or
# reach, the host's network. Needs root (CI runs as root).
#
#   in_private_network.sh node --test redis_partition.test.mjs
set -eu
if [ "$(id -u)" -ne 0 ]; then
  echo "$0: needs root, for network and mount namespaces of the test's own (unshare --net --mount)" >&2
  exit 1
fi
# shellcheck disable=SC2016 # "$@" is for the inner shell
exec unshare --net --mount -- sh -c 'ip link set lo up && FRAMEGATE_PRIVATE_NETWORK=1 exec "$@"' sh "$@"
