#!/bin/sh
# What the official redis image's entrypoint does for a server started
# without a configuration file: listen to other containers (protected mode
# would refuse every client that is not on loopback and has no password).
if [ "${1:-}" = redis-server ]; then
  shift
  exec redis-server "$@" --protected-mode no
fi
exec "$@"
