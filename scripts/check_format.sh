#!/usr/bin/env bash
# Check that every C++ file is formatted with the project's .clang-format (Debian 12's
# clang-format 14). Lists the files that are not and how to fix them; exit 1 if any.
# Run by scripts/test.sh; fix with: bash scripts/check_format.sh --fix
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format > /dev/null || { echo "check_format: clang-format is not installed (bash scripts/setup.sh installs it)"; exit 1; }
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.hpp')
else
  mapfile -t files < <(find bench modules pipeline tests -name '*.cpp' -o -name '*.hpp' | sort)
fi
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  echo "check_format: formatted ${#files[@]} files"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" > /dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "check_format: ${#bad[@]} of ${#files[@]} C++ files differ from .clang-format ($(clang-format --version)):"
  printf '  %s\n' "${bad[@]}"
  echo "check_format: fix with: bash scripts/check_format.sh --fix"
  exit 1
fi
echo "check_format: all ${#files[@]} C++ files formatted"
