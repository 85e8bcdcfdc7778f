#!/usr/bin/env bash
# Every shell script of the project through shellcheck (following what they
# source). A finding that is intended carries a `# shellcheck disable=` line
# with its reason where it is; there is no project-wide exception list.
#   tools/lint_shell.sh    exit 1 on any finding (ctest: lint_shell)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v shellcheck >/dev/null || {
  echo "lint_shell: shellcheck is not installed (tools/setup.sh installs it)" >&2
  exit 1
}
is_shell() { [[ $1 == *.sh ]] || head -n 1 "$1" | grep -qE '^#!.*[/ ](ba)?sh$'; }
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  list() { git ls-files --cached --others --exclude-standard; }
else  # a source tree without git: everything but builds and npm packages
  list() { find . \( -name 'build*' -o -name node_modules -o -name .git \) -prune -o -type f -print | sed 's|^\./||'; }
fi
mapfile -t files < <(list | while read -r f; do [[ -f $f ]] && is_shell "$f" && printf '%s\n' "$f"; done)
((${#files[@]})) || {
  echo "lint_shell: no shell script found: run from the repository" >&2
  exit 1
}
echo "lint_shell: ${#files[@]} scripts"
shellcheck -x "${files[@]}"
