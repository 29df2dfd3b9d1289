#!/usr/bin/env bash
# tools/ab_wrapper.sh in a scratch tree with fake benchmarks that print their
# settings and arguments: the bundle's benchmark and another variant are run
# through the wrappers (moved elsewhere, as a carry is unpacked), with the
# settings given, arguments passed through; a malformed setting is refused.
set -euo pipefail
dir=$(mktemp -d "${TEST_TMPDIR:-/tmp}/ab_wrapper.XXXXXX")
mkdir -p "$dir/tree/tools" "$dir/tree/gpu_bundle/bin" "$dir/tree/ab"
cp tools/ab_wrapper.sh "$dir/tree/tools/"
fake='#!/bin/sh\necho "%s splits=${PA_BENCH_PINNED_SPLITS:-none} gap=${PA_PROBE_GAP_US:-none} args=$*"\n'
printf "$fake" bundle > "$dir/tree/gpu_bundle/bin/attention_kernel_paged_attention_benchmark"
printf "$fake" P > "$dir/tree/ab/bench_P"
chmod +x "$dir/tree/gpu_bundle/bin/attention_kernel_paged_attention_benchmark" "$dir/tree/ab/bench_P"

(cd "$dir" && bash tree/tools/ab_wrapper.sh base bundle)
bash "$dir/tree/tools/ab_wrapper.sh" W1 P PA_BENCH_PINNED_SPLITS=1
bash "$dir/tree/tools/ab_wrapper.sh" G P PA_BENCH_PINNED_SPLITS=2 PA_PROBE_GAP_US=2000
if bash "$dir/tree/tools/ab_wrapper.sh" bad P 'PA_X=1 2' 2> "$dir/err"; then
  echo "FAIL: a setting with a space was accepted"; exit 1
fi
grep -q "want VAR=VALUE" "$dir/err" || { echo "FAIL: no reason given"; cat "$dir/err"; exit 1; }
[[ ! -e $dir/tree/ab/bench_bad ]] || { echo "FAIL: refused wrapper written"; exit 1; }

mv "$dir/tree" "$dir/moved"  # the wrappers find their targets relative to themselves
check() {  # wrapper, expected output
  local got
  got=$("$dir/moved/ab/bench_$1" --benchmark_filter='a|b' x)
  [[ $got == "$2" ]] || { echo "FAIL: bench_$1 printed '$got', want '$2'"; exit 1; }
}
check base "bundle splits=none gap=none args=--benchmark_filter=a|b x"
check W1 "P splits=1 gap=none args=--benchmark_filter=a|b x"
check G "P splits=2 gap=2000 args=--benchmark_filter=a|b x"
echo PASS
