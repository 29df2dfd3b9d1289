#!/usr/bin/env bash
# RS (O's rescale skipped when no row's max moved) and PVW (P V by wgmma for 64-row units):
# GPU tests of the RS+PVW build, A/B base / RS / RSPVW, memcheck.
set -o pipefail
tar -xJf gpu_bundle.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
B=gpu_bundle/bin
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader
S=$SECONDS
timeout 240 bash gpu_bundle/run_tests.sh > $OUT/gpu_tests.log 2>&1; echo "tests rc=$? $((SECONDS - S)) s"
grep -hE "^\[  (PASSED|FAILED) |replays matched|Failure|error:|rror" $OUT/gpu_tests.log | sort | uniq -c | head -30
S=$SECONDS
F='^BM_(DeviceCopy|PagedAttention(Decode|DraftExtend|Verify|OneTile|Skewed|Uniform|TreeVerify)/)'
mkdir -p /tmp/abj
timeout 240 bash ab/run_ab.sh /tmp/abj "$F" 2 base RS RSPVW
python3 ab/ab_table.py /tmp/abj base RS RSPVW > $OUT/ab1_table.txt
tar -cJf $OUT/ab1_json.tar.xz -C /tmp/abj .
echo "ab $((SECONDS - S)) s"; sed 's/page:16//; s/heads://; s/   */ /g' $OUT/ab1_table.txt | head -120
S=$SECONDS
{ echo "== memcheck_paged_attention_test"
  timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 $B/attention_kernel_paged_attention_test --gtest_brief=1 2>&1 | tail -3
} > $OUT/gpu_checks.txt 2>&1
echo "checks $((SECONDS - S)) s"; cat $OUT/gpu_checks.txt
