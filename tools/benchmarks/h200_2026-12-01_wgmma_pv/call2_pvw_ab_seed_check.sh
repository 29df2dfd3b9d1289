#!/usr/bin/env bash
# PVW (P V by wgmma, all head dims, no RS): GPU tests; the modes-test seed of call 1 on base vs PVW; A/B base / PVW / RSPVW.
set -o pipefail
tar -xJf gpu_bundle.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
B=gpu_bundle/bin
S=$SECONDS
timeout 240 bash gpu_bundle/run_tests.sh > $OUT/gpu_tests.log 2>&1; echo "tests rc=$? $((SECONDS - S)) s"
grep -hE "^\[  (PASSED|FAILED) |replays matched|Failure|error:|rror" $OUT/gpu_tests.log | sort | uniq -c | head -30
grep -hE "SEED" $OUT/gpu_tests.log | sort | uniq -c | head -3
for bin in ab/modes_base $B/attention_kernel_paged_attention_modes_test; do
  echo "== $bin seed 10190439742817258049"
  PA_TEST_SEED=10190439742817258049 $bin --gtest_filter='*DECODE*P1' 2>&1 | grep -E "actual|max_abs|PASSED|FAILED  \]" | head -6
done
S=$SECONDS
F='^BM_(DeviceCopy|PagedAttention(Decode|DraftExtend|Verify|OneTile|Skewed|Uniform|TreeVerify|Prefill)/)'
mkdir -p /tmp/abj
timeout 300 bash ab/run_ab.sh /tmp/abj "$F" 2 base PVW RSPVW
python3 ab/ab_table.py /tmp/abj base PVW RSPVW > $OUT/ab2_table.txt
tar -cJf $OUT/ab2_json.tar.xz -C /tmp/abj .
echo "ab $((SECONDS - S)) s"; sed 's/page:16//; s/heads://; s/   */ /g' $OUT/ab2_table.txt | grep -v "^Decode\|^DraftExtend"
S=$SECONDS
{ echo "== memcheck_paged_attention_test"
  timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 $B/attention_kernel_paged_attention_test --gtest_brief=1 2>&1 | tail -3
  echo "== racecheck (Verify/TargetVerify-like cases)"
  timeout 90 compute-sanitizer --tool racecheck $B/attention_kernel_paged_attention_test --gtest_filter='*Sweep*:*Tree*:*Verify*' --gtest_brief=1 > /tmp/race.log 2>&1
  grep -E 'PASSED|FAILED|RACECHECK SUMMARY' /tmp/race.log; grep -oE 'Race reported between [A-Za-z]+ access at [^ ]+' /tmp/race.log | sed 's/(.*//' | sort | uniq -c
} > $OUT/gpu_checks.txt 2>&1
echo "checks $((SECONDS - S)) s"; cat $OUT/gpu_checks.txt
