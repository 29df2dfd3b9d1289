#!/usr/bin/env bash
# This session's fourth call. carry4.tar.xz: gpu_bundle/ = d77b40d (AFS) and
# two more kernel test binaries: ab/test_AFQ (f44a18f: fold slots beside the
# scratch) and ab/test_ALA (d77b40d with every lane arriving on fold_full
# and fold_free, no __syncwarp before a single arrival). racecheck of the two
# sweep cases where call 3 reported StoreFoldSlot / FoldKeyWays hazards, all
# three builds, every hazard printed: which build reports them.
set -o pipefail
tar -xJf carry4.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
mkdir -p $OUT/r
for build in AFS AFQ ALA; do
  test_binary=ab/test_$build
  [[ $build == AFS ]] && test_binary=gpu_bundle/bin/attention_kernel_paged_attention_test
  log=$OUT/r/racecheck_fold_$build.log
  timeout 150 compute-sanitizer --tool racecheck --print-limit 100000 $test_binary \
    --gtest_filter='*Sweep*/float16_hd64_page1:*Sweep*/bfloat16_hd128_page16' > $log 2>&1
  echo "== $build rc=$?"
  grep -E 'PASSED|FAILED|RACECHECK SUMMARY' $log
  grep -oE 'Race reported between [A-Za-z]+ access at (void )?[^ (<]+' $log | sort | uniq -c
done
tar -cJf $OUT/call4.tar.xz -C $OUT r
