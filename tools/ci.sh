#!/usr/bin/env bash
# CI (.ci/run): the README's test command plus the reliability checks, then
# one closing line "N passed, N failed, N skipped" summing every part. Exits
# non-zero on any failure (skipped tests are not failures).
#
#   1. bash tools/test.sh                  every test (bazel test //...)
#   2. bash tools/test.sh --config=sanitize  the same under ASan + LSan and UBSan
#                                          together (halt on the first report): one
#                                          instrumented build instead of two
#   3. bash tools/fuzz.sh --time=25        each libFuzzer target 25 s (clang, own output base)
#   4. testing/consumer                    a workspace depending on us via local_repository:
#                                          build and run its binary (one check)
#   5. the tracked tree's size             under 48 MiB (one check): it travels to the GPU
#                                          machine beside the bundle under the device tool's
#                                          64 MiB; tools/archive_records.py shrinks old runs
#
# Parts 1-3 end with their own "N passed, N failed" line, with ", N skipped"
# where tests can skip (GPU tests without a GPU), which is summed; a part that
# ends without one counts as one failure.
set -uo pipefail
cd "$(dirname "$0")/.."

total_passed=0
total_failed=0
total_skipped=0
timings=()

# part NAME COMMAND...: runs COMMAND, echoing its output, and adds its counts.
part() {
  local name=$1; shift
  local log start status summary
  log=$(mktemp)
  start=$SECONDS
  echo "=== ci: $name: $*"
  "$@" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  summary=$(tail -n 1 "$log")
  if [[ $summary =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed(,\ ([0-9]+)\ skipped)?$ ]]; then
    local passed=${BASH_REMATCH[1]} failed=${BASH_REMATCH[2]} skipped=${BASH_REMATCH[4]:-0}
    if ((status != 0 && failed == 0)); then failed=1; fi
    total_passed=$((total_passed + passed))
    total_failed=$((total_failed + failed))
    total_skipped=$((total_skipped + skipped))
  elif ((status == 0)); then
    total_passed=$((total_passed + 1))
  else
    total_failed=$((total_failed + 1))
  fi
  timings+=("$name: $((SECONDS - start)) s (exit $status)")
  rm -f "$log"
}

consumer() {
  # --symlink_prefix=/: no bazel-* links inside our source tree.
  local out
  out=$(cd testing/consumer && bazel run --symlink_prefix=/ //:plan_skewed_batch 2>&1) || {
    echo "$out"; echo "consumer: build or run failed"; return 1; }
  echo "$out" | tail -n 5
  if [[ $out != *"cache_seqlens [304,9]"* ]]; then
    echo "consumer: unexpected output"; return 1
  fi
}

# The tracked files travel to the GPU machine with every device call, beside
# the bundle (~5-6 MB compressed), under the device tool's 64 MiB limit; each
# session adds its GPU runs' records under tools/benchmarks/.
records_budget() {
  local limit=$((48 << 20)) bytes
  if ! git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    echo "records_budget: not a git checkout, nothing to measure"; return 0
  fi
  bytes=$(git ls-files -z | xargs -0 cat | wc -c)
  echo "records_budget: tracked tree ${bytes} bytes (limit ${limit})"
  if ((bytes > limit)); then
    echo "records_budget: over the limit: archive the record folders no dashboard page reads" \
         "(python3 tools/archive_records.py tools/benchmarks/FOLDER...)"
    return 1
  fi
}

part tests bash tools/test.sh
part sanitize bash tools/test.sh --config=sanitize
part fuzz bash tools/fuzz.sh --time=25
part consumer consumer
part records_budget records_budget

echo "=== ci: timings"
printf '  %s\n' "${timings[@]}"
echo "${total_passed} passed, ${total_failed} failed, ${total_skipped} skipped"
((total_failed == 0))
