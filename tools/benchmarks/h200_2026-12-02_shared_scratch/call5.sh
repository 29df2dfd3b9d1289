#!/usr/bin/env bash
# This session's fifth call. carry5.tar.xz: gpu_bundle/lib and the kernel
# test of d77b40d (AFS) as gpu_bundle/bin/, and ab/test_ALE: d77b40d with
# all_lanes_arrive_probe.patch (ALA) and every consumer lane arriving on
# each K/V stage's "empty" barrier too (empty_all_lanes_probe.patch, ALE).
# racecheck of the skewed batch and the two sweep cases of call 4, both
# builds, every hazard printed: does the CpAsync16 class go with the
# one-lane "empty" release?
set -o pipefail
tar -xJf carry5.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
mkdir -p $OUT/r
for build in AFS ALE; do
  test_binary=ab/test_$build
  [[ $build == AFS ]] && test_binary=gpu_bundle/bin/attention_kernel_paged_attention_test
  log=$OUT/r/racecheck_empty_$build.log
  timeout 120 compute-sanitizer --tool racecheck --print-limit 100000 $test_binary \
    --gtest_filter='*SkewedBatchOneLongManyShort:*Sweep*/float16_hd64_page1:*Sweep*/bfloat16_hd128_page16' > $log 2>&1
  echo "== $build rc=$?"
  grep -E 'PASSED|FAILED|RACECHECK SUMMARY' $log
  grep -oE 'Race reported between [A-Za-z]+ access at (void )?[^ (<]+' $log | sort | uniq -c
done
tar -cJf $OUT/call5.tar.xz -C $OUT r
