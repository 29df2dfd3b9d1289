#!/usr/bin/env bash
# FIN (RS + PVW, head_dim <= 128) bundle: GPU tests + memcheck; OVL (FA3-style pipelined wgmma loop)
# kernel and modes tests + memcheck; A/B base / FIN / OVL.
set -o pipefail
tar -xJf gpu_bundle.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
B=gpu_bundle/bin
S=$SECONDS
timeout 200 bash gpu_bundle/run_tests.sh > $OUT/gpu_tests_fin.log 2>&1; echo "FIN tests rc=$? $((SECONDS - S)) s"
grep -hE "^\[  (PASSED|FAILED) |replays matched|Failure|SEED" $OUT/gpu_tests_fin.log | sort | uniq -c | head -20
S=$SECONDS
{ ab/pat_OVL; ab/modes_OVL; } > $OUT/gpu_tests_ovl.log 2>&1; echo "OVL tests rc=$? $((SECONDS - S)) s"
grep -hE "^\[  (PASSED|FAILED) |Failure|SEED" $OUT/gpu_tests_ovl.log | sort | uniq -c | head -20
grep -hE "ERRSTAT" $OUT/gpu_tests_ovl.log | awk '{print $NF}' | sort -n | tail -3 | tr '\n' ' '; echo "(OVL worst error ratios)"
grep -hE "ERRSTAT" $OUT/gpu_tests_fin.log | awk '{print $NF}' | sort -n | tail -3 | tr '\n' ' '; echo "(FIN worst error ratios)"
S=$SECONDS
F='^BM_(DeviceCopy|PagedAttention(Decode|DraftExtend|Verify|OneTile|Skewed|Uniform|TreeVerify|Prefill)/)'
mkdir -p /tmp/abj
timeout 300 bash ab/run_ab.sh /tmp/abj "$F" 2 base FIN OVL
python3 ab/ab_table.py /tmp/abj base FIN OVL > $OUT/ab3_table.txt
tar -cJf $OUT/ab3_json.tar.xz -C /tmp/abj .
echo "ab $((SECONDS - S)) s"; sed 's/page:16//; s/heads://; s/   */ /g' $OUT/ab3_table.txt | grep -v "^DraftExtend"
S=$SECONDS
{ echo "== memcheck FIN paged_attention_test"
  timeout 100 compute-sanitizer --tool memcheck --error-exitcode 1 $B/attention_kernel_paged_attention_test --gtest_brief=1 2>&1 | tail -3
  echo "== memcheck OVL paged_attention_test"
  timeout 100 compute-sanitizer --tool memcheck --error-exitcode 1 ab/pat_OVL --gtest_brief=1 2>&1 | tail -3
} > $OUT/gpu_checks3.txt 2>&1
echo "checks $((SECONDS - S)) s"; cat $OUT/gpu_checks3.txt
