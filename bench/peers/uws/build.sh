#!/usr/bin/env bash
# Builds the native uWebSockets peer (uws_peer.cpp beside this script) against
# a uWebSockets source checkout you provide; no uWS or uSockets code is kept
# in this repository.
#
#   bench/peers/uws/build.sh SRC_DIR [USOCKETS_DIR]
#
#   SRC_DIR        a uWebSockets v20 checkout (src/App.h ...), e.g.
#                  git clone --recursive https://github.com/uNetworking/uWebSockets
#   USOCKETS_DIR   its uSockets (src/libusockets.h); default: $USOCKETS_DIR, else
#                  SRC_DIR/uSockets (the submodule: git submodule update --init uSockets)
#
# Built the way uWS builds its examples (GNUmakefile, build.c), minus what the
# benchmarks do not use: uSockets with LIBUS_NO_SSL (no TLS library needed),
# its epoll loop; uWS with UWS_NO_ZLIB (no permessage-deflate, so no zlib);
# -O3 -march=native -flto. Needs cc and g++ (C++20). Environment: CC, CXX,
# UWS_VERSION and USOCKETS_VERSION (name trees that are not git checkouts),
# OUT (the binary, default build/uws-peer/uws-peer in the repository; build/
# is git-ignored).
#
# Then: UWS_NATIVE_BIN=build/uws-peer/uws-peer PEERS="framegate uws uws-native" bench/run_echo.sh
set -euo pipefail

die() { echo "build.sh: $*" >&2; exit 2; }

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
[[ $# -ge 1 && $# -le 2 && $1 != -h && $1 != --help ]] || { sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 2; }
SRC=$(cd "$1" 2>/dev/null && pwd) || die "no such directory: $1"
US=${2:-${USOCKETS_DIR:-$SRC/uSockets}}
CC=${CC:-cc}
CXX=${CXX:-g++}
OUT=${OUT:-$ROOT/build/uws-peer/uws-peer}

[[ -f "$SRC/src/App.h" && -f "$SRC/src/WebSocket.h" ]] ||
  die "$SRC is not a uWebSockets checkout (no src/App.h, src/WebSocket.h)"
[[ -f "$US/src/libusockets.h" ]] ||
  die "no uSockets at $US (src/libusockets.h missing): run 'git submodule update --init uSockets' in $SRC, or pass its directory"
US=$(cd "$US" && pwd)

# What uws_peer.cpp uses, present since v20 (the WebSocketBehavior struct
# with these members, App::publish with an opcode): refuse older trees with
# a clear message rather than a page of template errors.
for needle in 'struct WebSocketBehavior' 'sendPingsAutomatically' 'bool publish(std::string_view topic'; do
  grep -qF "$needle" "$SRC/src/App.h" ||
    die "$SRC/src/App.h has no '$needle': uws_peer.cpp needs uWebSockets v20 or later"
done
# git describe of DIR only if DIR is the top of its own work tree (a plain
# copy inside another repository must not be named after that repository).
describe() {
  local top
  top=$(git -C "$1" rev-parse --show-toplevel 2>/dev/null) && [[ $(cd "$top" && pwd -P) == $(cd "$1" && pwd -P) ]] &&
    git -C "$1" describe --tags --always 2>/dev/null
}
version=${UWS_VERSION:-$(describe "$SRC" || echo "unknown (not a git checkout; UWS_VERSION names it)")}
us_version=${USOCKETS_VERSION:-$(describe "$US" || echo "unknown (not a git checkout; USOCKETS_VERSION names it)")}
echo "build.sh: uWebSockets $version at $SRC; uSockets $us_version at $US" >&2

OBJ=$(mktemp -d "${TMPDIR:-/tmp}/uws-peer-build.XXXXXX")
trap 'rm -rf "$OBJ"' EXIT

# uSockets, as its Makefile builds it without TLS: every C file, each one
# compiling to nothing unless its event loop or feature is selected (epoll
# is the default on Linux). io_uring/ exists only in newer trees.
sources=("$US"/src/*.c "$US"/src/eventing/*.c "$US"/src/crypto/*.c)
[[ -d "$US/src/io_uring" ]] && sources+=("$US"/src/io_uring/*.c)
(cd "$OBJ" && "$CC" -DLIBUS_NO_SSL -std=c11 -O3 -march=native -flto -I"$US/src" -c "${sources[@]}")

mkdir -p "$(dirname "$OUT")"
# uWS's headers as system headers: their warnings are uWS's, not this peer's
# (g++ 12 still reports two -Wstringop-overflow in uWS's HttpResponse.h when
# LTO links: false positives in uWS's integer formatting, harmless here).
"$CXX" -std=c++20 -O3 -march=native -flto -Wall -Wextra -DLIBUS_NO_SSL -DUWS_NO_ZLIB \
  -isystem "$SRC/src" -isystem "$US/src" "$HERE/uws_peer.cpp" "$OBJ"/*.o -o "$OUT"
# Which checkout the binary came from, for the benchmark reports.
printf 'uWebSockets %s\nuSockets %s\n' "$version" "$us_version" >"$OUT.version"
echo "build.sh: built $OUT" >&2
echo "$OUT"
