#!/usr/bin/env bash
# Everything we check on a GPU machine, in one go, from a GPU bundle
# (tools/gpu_bundle.sh): all GPU tests, compute-sanitizer (memcheck, racecheck,
# initcheck) on a representative subset, the demo, a plan_batch --run dump
# checked with numpy, and every benchmark (JSON). Usage, on the GPU machine:
#   bash tools/gpu_validate.sh [OUT_DIR]
# Logs and benchmark JSON go to OUT_DIR (default ./gpu_results). Exits
# non-zero if any step fails; the last line says which.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-gpu_results}")
mkdir -p "$out"
bundle=gpu_bundle
export LD_LIBRARY_PATH="$PWD/$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
failed=()
step() {  # name, command...
  local name=$1; shift
  echo "=== $name"
  local start=$SECONDS
  if "$@" >"$out/$name.log" 2>&1; then
    echo "    ok ($((SECONDS - start)) s): $(tail -n 1 "$out/$name.log")"
  else
    echo "    FAILED ($((SECONDS - start)) s)"; tail -n 30 "$out/$name.log"; failed+=("$name")
  fi
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
step tests bash "$bundle/run_tests.sh"
grep -hE "^\[  (PASSED|FAILED|SKIPPED) |device gather|replays matched|tests? from .* ran" "$out/tests.log" | sort | uniq -c | head -40

# A sanitizer run still going after SANITIZE_TIMEOUT_S seconds (default 500,
# under the device tool's 600 s per call) is stopped (TERM, so the sanitizer
# takes its target down; KILL 10 s later) and fails its step: a hanging kernel
# then costs one step, not the call's results.
sanitize() {  # tool, binary, filter
  STRESS_ITERATIONS=200 timeout -k 10 "${SANITIZE_TIMEOUT_S:-500}" \
    compute-sanitizer --tool "$1" --error-exitcode 1 \
    "$bundle/bin/$2" --gtest_filter="$3" --gtest_brief=1
}
# memcheck and initcheck over every GPU test binary (the 10k-replay stress test
# shortened to 200 replays); racecheck over the attention kernel, the only one
# sharing memory between threads, on a representative subset.
for test in $(ls "$bundle/bin" | grep '_test$'); do
  step "memcheck_$test" sanitize memcheck "$test" '*'
  # initcheck is slow on the mode sweep's many small launches: one page size.
  filter='*'
  [[ $test == *modes_test ]] && filter='*_P16:*LongContext*'
  step "initcheck_$test" sanitize initcheck "$test" "$filter"
done
# Racecheck over a representative subset, counted like the others: since
# every consumer lane releases its own reads (WarpArrive), the kernels report
# no hazard, so any is a finding (attention/kernel/NOTES.md, "Racecheck";
# tools/gpu_session.sh's racecheck step runs the wider eight-part set).
step racecheck_kernel sanitize racecheck attention_kernel_paged_attention_test \
  '*Skewed*:*Graph*:*Empty*:*Visible*:*bfloat16_hd128_page16*:*float16_hd64_page1*'
echo "    $(grep -E 'RACECHECK SUMMARY' "$out/racecheck_kernel.log" || echo 'no summary')"
step demo "$bundle/bin/tools_demo"
cat "$out/demo.log"
# plan_batch --run on the long batches (DRAFT_EXTEND_V2, a graph sequence,
# trees eager and replayed), every dump checked by numpy (tools/check_dumps.sh).
step check_dumps bash tools/check_dumps.sh "$bundle/bin" "$out/dumps"
cat "$out/check_dumps.log"
if [[ "${SKIP_BENCHMARKS:-0}" != 1 ]]; then
  step benchmarks bash "$bundle/run_benchmarks.sh" "$out/benchmarks"
fi
((${#failed[@]})) && { echo "gpu_validate: FAILED: ${failed[*]}"; exit 1; }
echo "gpu_validate: all steps passed"
