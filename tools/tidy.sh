#!/usr/bin/env bash
# clang-tidy over framegate's own sources with the checked-in .clang-tidy.
#   tools/tidy.sh            every .cpp under common gateway worker supervisor bench/loadgen
#   tools/tidy.sh FILE...    just those
# Needs a configured build (compile_commands.json); FRAMEGATE_BUILD_DIR
# names it (default build/). Exits non-zero when clang-tidy reports anything.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="${FRAMEGATE_BUILD_DIR:-$root/build}"
if [[ ! -f "$build_dir/compile_commands.json" ]]; then
  echo "tidy: $build_dir/compile_commands.json not found: run ./framegate build first" >&2
  exit 2
fi
cd "$root"
if [[ $# -eq 0 ]]; then
  mapfile -t files < <(git ls-files -- 'common/*.cpp' 'gateway/*.cpp' 'worker/*.cpp' 'supervisor/*.cpp' 'bench/loadgen/*.cpp')
else
  files=("$@")
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# One clang-tidy per core; a header's findings are reported once, not once per includer.
printf '%s\0' "${files[@]}" | xargs -0 -n 1 -P "$(nproc)" clang-tidy -quiet -p "$build_dir" >"$log" 2>/dev/null || true
findings=$(grep -E '^/.*: (warning|error):' "$log" | sort -u || true)
if [[ -n "$findings" ]]; then
  printf '%s\n' "$findings"
  echo "tidy: $(wc -l <<<"$findings") findings in ${#files[@]} files" >&2
  exit 1
fi
echo "tidy: ${#files[@]} files clean"
