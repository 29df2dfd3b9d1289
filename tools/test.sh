#!/usr/bin/env bash
# Sets up the machine and runs every test (bazel test //...), then prints one
# closing line "N passed, N failed" taken from Bazel's test summary. Extra
# arguments go to bazel test (e.g. --config=asan). Exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."

bash tools/setup.sh || exit 1

log=$(mktemp)
trap 'rm -f "$log"' EXIT
bazel test "$@" //... 2>&1 | tee "$log"
bazel_status=${PIPESTATUS[0]}

# Summary lines look like "//pkg:target   (cached) PASSED in 0.1s" or
# "//pkg:target   FAILED in 2.0s" / "FAILED TO BUILD" / "TIMEOUT" / "NO STATUS".
passed=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log")
failed=$(grep -E '^//[^ ]+ ' "$log" | grep -cvE '^//[^ ]+ +(\(cached\) )?PASSED')
if ((bazel_status != 0 && failed == 0)); then
  failed=1  # The build itself failed before any test ran.
fi
echo "${passed} passed, ${failed} failed"
((bazel_status == 0 && failed == 0))
