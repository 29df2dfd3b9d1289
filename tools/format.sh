#!/usr/bin/env bash
# Formats (or with --check, lints) our C++/CUDA sources with clang-format and
# the repository's .clang-format. BUILD files are kept tidy by hand
# (buildifier is not available offline). --check exits non-zero and lists
# the files that would change.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files -- '*.h' '*.cc' '*.cu' '*.cuh')
if [[ "${1:-}" == "--check" ]]; then
  status=0
  for file in "${files[@]}"; do
    if ! clang-format --style=file "$file" | cmp -s - "$file"; then echo "needs formatting: $file"; status=1; fi
  done
  exit $status
fi
clang-format --style=file -i "${files[@]}"
