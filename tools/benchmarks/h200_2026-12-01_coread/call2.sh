#!/usr/bin/env bash
# Run from the repository root with carry.tar.xz (gpu_bundle/ of 743d2cd and
# ab/bench_{base,COREAD}). GPU tests; A/B of base (cb64514) / COREAD (23525a5) /
# NEW (743d2cd: co-read groups + paired-tiles kernels) on verify and prefill;
# the peer run; memcheck, racecheck, graph-replay memcheck, plan_batch dumps.
set -o pipefail
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
B=gpu_bundle/bin
cp $B/attention_kernel_paged_attention_benchmark ab/bench_NEW
R=$OUT/r; mkdir -p $R
cat gpu_bundle/REVISION; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=$SECONDS
timeout 200 bash gpu_bundle/run_tests.sh > $R/gpu_tests.log 2>&1; echo "tests rc=$? $((SECONDS - S)) s"
grep -hE "^\[  (PASSED|FAILED) |replays matched|Failure|SEED|passed, " $R/gpu_tests.log | sort | uniq -c | head -20
grep -hE "ERRSTAT" $R/gpu_tests.log | awk '{print $NF}' | sort -n | tail -1 | sed 's/^/worst error ratio /'
S=$SECONDS
F='^BM_PagedAttention(Verify|TreeVerify|Prefill|Decode/heads:32_8/hd:128/batch:32/q:1/kv:16384|DraftExtend/heads:64_8/hd:128/batch:16/q:4)/'
timeout 120 bash ab/run_ab.sh $R "$F" 3 base COREAD NEW; echo "ab $((SECONDS - S)) s"
python3 ab/ab_table.py $R base COREAD NEW > $R/ab_table.txt; cut -c1-120 $R/ab_table.txt
S=$SECONDS
PYTHONUNBUFFERED=1 timeout 200 python3 tools/peer_benchmark.py --ours $B/attention_kernel_paged_attention_benchmark \
  --out $R/peers.json --flex-filter 'Verify/' > $R/peers_table.txt 2>&1
echo "peers rc=$? $((SECONDS - S)) s"; grep -E 'MISS|bars:|skewed' $R/peers_table.txt | cut -c1-170
tar -cJf $OUT/call2.tar.xz -C $OUT r
S=$SECONDS
{ echo "== memcheck paged_attention_test"
  timeout 80 compute-sanitizer --tool memcheck --error-exitcode 1 $B/attention_kernel_paged_attention_test --gtest_brief=1 2>&1 | tail -3
  echo "== racecheck (Sweep, Tree, Verify cases)"
  timeout 100 compute-sanitizer --tool racecheck $B/attention_kernel_paged_attention_test --gtest_filter='*Sweep*:*Tree*:*Verify*' --gtest_brief=1 > /tmp/race.log 2>&1
  grep -E 'PASSED|FAILED|RACECHECK SUMMARY' /tmp/race.log; grep -oE 'Race reported between [A-Za-z]+ access at [^ ]+' /tmp/race.log | sed 's/(.*//' | sort | uniq -c
  echo "== memcheck_graph_replay_stress_test"
  STRESS_ITERATIONS=200 timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 $B/attention_kernel_graph_replay_stress_test --gtest_brief=1 2>&1 | tail -4
  echo "== check_dump"
  $B/tools_plan_batch --batch=tools/testdata/skewed_draft_extend_v2.json --run --dump_dir=/tmp/dump_eager > /dev/null 2>&1 &&
  $B/tools_plan_batch --batch=tools/testdata/graph_sequence.json --graph_max_batch=4 --run --dump_dir=/tmp/dump_graph > /dev/null 2>&1 &&
  python3 tools/check_dump.py /tmp/dump_eager && for d in /tmp/dump_graph/batch_*; do python3 tools/check_dump.py $d; done
} > $R/gpu_checks.txt 2>&1
echo "checks $((SECONDS - S)) s"; cat $R/gpu_checks.txt
tar -cJf $OUT/call2.tar.xz -C $OUT r
