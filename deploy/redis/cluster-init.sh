#!/bin/sh
# Makes one Redis Cluster of the nodes given as HOST:PORT arguments, one
# replica per primary (docker-compose.yml's redis-cluster-init, profile
# cluster). Idempotent: if any node already says cluster_state:ok there is
# a cluster, and this only says so. Exits non-zero if the cluster is not
# ok on every node within 60 s, which keeps the workers from starting.
set -eu

state() { # HOST:PORT -> the node's cluster_state (ok, fail) or nothing
  redis-cli -h "${1%:*}" -p "${1##*:}" cluster info 2>/dev/null | tr -d '\r' | sed -n 's/^cluster_state://p'
}

for node in "$@"; do
  if [ "$(state "$node")" = ok ]; then
    echo "redis-cluster-init: $node says cluster_state:ok, nothing to do"
    exit 0
  fi
done

redis-cli --cluster create "$@" --cluster-replicas 1 --cluster-yes

for _ in $(seq 60); do
  all_ok=yes
  for node in "$@"; do
    [ "$(state "$node")" = ok ] || all_ok=no
  done
  if [ "$all_ok" = yes ]; then
    echo "redis-cluster-init: cluster_state:ok on all $# nodes"
    exit 0
  fi
  sleep 1
done
echo "redis-cluster-init: the cluster is not ok on every node after 60 s" >&2
exit 1
