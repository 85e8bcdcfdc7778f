#!/usr/bin/env bash
# Formats every C++ file of the project with the checked-in .clang-format.
#   tools/format.sh          rewrite files in place
#   tools/format.sh --check  only report; exit 1 if any file would change (CI)
set -euo pipefail
cd "$(dirname "$0")/.."
# Tracked and new (not ignored) files that exist in the working tree.
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cpp' '*.hpp' '*.h' '*.cc' |
  while read -r f; do [[ -f "$f" ]] && printf '%s\n' "$f"; done)
((${#files[@]})) || exit 0
if [[ "${1:-}" == "--check" ]]; then
  clang-format --dry-run --Werror "${files[@]}"
else
  clang-format -i "${files[@]}"
fi
