#!/usr/bin/env bash
# Checks the C++ files changed against a base revision (default: the merge base with main, or
# everything when there is none): clang-format must be clean, and clang-tidy (.clang-tidy) must
# report no warnings. Usage: scripts/lint.sh [BASE] ; scripts/lint.sh --all
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == "--all" ]]; then
  mapfile -t files < <(git ls-files '*.h' '*.cpp')
else
  base="${1:-$(git merge-base HEAD origin/main 2>/dev/null || git rev-list --max-parents=0 HEAD)}"
  mapfile -t files < <( (git diff --name-only --diff-filter=ACMR "$base" -- '*.h' '*.cpp';
                         git ls-files --others --exclude-standard '*.h' '*.cpp') | sort -u)
fi
((${#files[@]})) || { echo "lint: no C++ changes"; exit 0; }

status=0
if ! clang-format --dry-run --Werror "${files[@]}"; then
  echo "lint: run clang-format -i on the files above" >&2
  status=1
fi

build_dir="${SRIOV_DRA_BUILD_DIR:-build}"
if [[ -f "$build_dir/compile_commands.json" ]]; then
  sources=()
  for f in "${files[@]}"; do [[ "$f" == *.cpp ]] && sources+=("$f"); done
  if ((${#sources[@]})); then
    clang-tidy -p "$build_dir" --quiet --warnings-as-errors='*' "${sources[@]}" 2>/dev/null || status=1
  fi
else
  echo "lint: $build_dir/compile_commands.json missing, skipping clang-tidy (configure first)" >&2
fi
exit $status
