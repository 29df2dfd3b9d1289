#!/usr/bin/env bash
# Sets up the machine and runs every test (bazel test //...), then prints one
# closing line "N passed, N failed, N skipped" taken from Bazel's test summary.
# A target Bazel reports as passed counts as skipped when every one of its
# cases skipped (GPU tests on a machine without a GPU: GoogleTest's log in
# bazel-testlogs says "[  PASSED  ] 0 tests" and "[  SKIPPED ] N tests"), so
# the line never claims a check that did not run. Extra arguments go to bazel
# test (e.g. --config=asan). Exits non-zero on any failure (skips are not
# failures).
set -uo pipefail
cd "$(dirname "$0")/.."

bash tools/setup.sh || exit 1

log=$(mktemp)
trap 'rm -f "$log"' EXIT
bazel test "$@" //... 2>&1 | tee "$log"
bazel_status=${PIPESTATUS[0]}

# Summary lines look like "//pkg:target   (cached) PASSED in 0.1s" or
# "//pkg:target   FAILED in 2.0s" / "FAILED TO BUILD" / "TIMEOUT" / "NO STATUS".
failed=$(grep -E '^//[^ ]+ ' "$log" | grep -cvE '^//[^ ]+ +(\(cached\) )?PASSED')
if ((bazel_status != 0 && failed == 0)); then
  failed=1  # The build itself failed before any test ran.
fi

# The logs of this run (cached results keep theirs): the bazel-testlogs link,
# unless the arguments moved it (--symlink_prefix).
testlogs=bazel-testlogs
[[ -d $testlogs ]] || testlogs=$(bazel info "$@" bazel-testlogs 2>/dev/null)
passed=0 skipped=0 skipped_targets=()
while read -r target; do
  path=${target#//}
  path=${path/://}
  test_log="$testlogs/${path#/}/test.log"
  if [[ -f $test_log ]] && grep -qE '^\[  PASSED  \] 0 tests' "$test_log" &&
    grep -qE '^\[  SKIPPED \] [0-9]+ tests?, listed below' "$test_log"; then
    skipped=$((skipped + 1))
    skipped_targets+=("$target")
  else
    passed=$((passed + 1))
  fi
done < <(grep -oE '^//[^ ]+ +(\(cached\) )?PASSED' "$log" | awk '{print $1}')
if ((skipped)); then
  echo "skipped (every case skipped, e.g. no GPU): ${skipped_targets[*]}"
fi
echo "${passed} passed, ${failed} failed, ${skipped} skipped"
((bazel_status == 0 && failed == 0))
