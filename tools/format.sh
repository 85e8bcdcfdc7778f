#!/usr/bin/env bash
# Formats every C++ file of the project with the checked-in .clang-format.
#   tools/format.sh          rewrite files in place
#   tools/format.sh --check  only report; exit 1 if any file would change (CI)
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cc')
((${#files[@]})) || exit 0
if [[ "${1:-}" == "--check" ]]; then
  clang-format --dry-run --Werror "${files[@]}"
else
  clang-format -i "${files[@]}"
fi
