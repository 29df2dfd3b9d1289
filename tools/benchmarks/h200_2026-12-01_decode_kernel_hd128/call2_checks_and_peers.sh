#!/usr/bin/env bash
# Call 2: the final build (D+P): GPU tests, memcheck, dumps, A/B against F, peer run, racecheck subset.
set -o pipefail
tar -xJf gpu_bundle.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
B=gpu_bundle/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=$SECONDS
timeout 200 bash gpu_bundle/run_tests.sh > $OUT/gpu_tests.log 2>&1; echo "tests rc=$? $((SECONDS - S)) s"
grep -hE "^\[  (PASSED|FAILED) |tests? from .* ran|replays matched" $OUT/gpu_tests.log | sort | uniq -c | head -20
S=$SECONDS
{ echo "== memcheck_paged_attention_test"
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 $B/attention_kernel_paged_attention_test --gtest_brief=1 2>&1 | tail -3
  echo "== memcheck_graph_replay_stress_test"
  STRESS_ITERATIONS=200 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 1 $B/attention_kernel_graph_replay_stress_test --gtest_brief=1 2>&1 | tail -4
  echo "== check_dump"
  $B/tools_plan_batch --batch=tools/testdata/skewed_draft_extend_v2.json --run --dump_dir=/tmp/dump_eager > /dev/null 2>&1 &&
  $B/tools_plan_batch --batch=tools/testdata/graph_sequence.json --graph_max_batch=4 --run --dump_dir=/tmp/dump_graph > /dev/null 2>&1 &&
  python3 tools/check_dump.py /tmp/dump_eager && for d in /tmp/dump_graph/batch_*; do python3 tools/check_dump.py $d; done
} > $OUT/gpu_checks.txt 2>&1
echo "checks $((SECONDS - S)) s"; cat $OUT/gpu_checks.txt
S=$SECONDS
F='^BM_(DeviceCopy|PagedAttention(Decode|DraftExtend|Verify|OneTile|Skewed|Uniform)/)'
mkdir -p /tmp/abj
timeout 100 bash ab/run_ab.sh /tmp/abj "$F" 2 F DPf
python3 ab/ab_table.py /tmp/abj F DPf > $OUT/ab_final_table.txt
tar -cJf $OUT/ab_final_json.tar.xz -C /tmp/abj .
echo "ab $((SECONDS - S)) s"; grep -E 'Decode|OneTile|DraftExtend/32_8/hd:128/batch:1/' $OUT/ab_final_table.txt | sed 's/page:16//; s/heads://; s/   */ /g' | head -40
S=$SECONDS
PYTHONUNBUFFERED=1 timeout 200 python3 tools/peer_benchmark.py --ours $B/attention_kernel_paged_attention_benchmark \
  --out $OUT/peers.json --flex-filter 'Verify/' --context git_revision=d940f92+hd128_decode_kernel > $OUT/peers_table.txt 2>&1
echo "peers rc=$? $((SECONDS - S)) s"; grep -E 'MISS|bars:' $OUT/peers_table.txt | cut -c1-170
S=$SECONDS
timeout 60 compute-sanitizer --tool racecheck $B/attention_kernel_paged_attention_test \
  --gtest_filter='*DecodeKernelMatches*:*FusedMerge*' --gtest_brief=1 > /tmp/race.log 2>&1
echo "racecheck rc=$? $((SECONDS - S)) s"; grep -E 'PASSED|FAILED|RACECHECK SUMMARY' /tmp/race.log; grep -oE 'Race reported between [A-Za-z]+ access at [^ ]+' /tmp/race.log | sed 's/(.*//' | sort | uniq -c | head
