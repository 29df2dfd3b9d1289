#!/usr/bin/env bash
# a579e45 (RS + PVW) bundle: peer run, racecheck, graph-replay memcheck, plan_batch dumps.
set -o pipefail
tar -xJf gpu_bundle.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
B=gpu_bundle/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=$SECONDS
PYTHONUNBUFFERED=1 timeout 220 python3 tools/peer_benchmark.py --ours $B/attention_kernel_paged_attention_benchmark \
  --out $OUT/peers.json --flex-filter 'Verify/' --context git_revision=a579e45 > $OUT/peers_table.txt 2>&1
echo "peers rc=$? $((SECONDS - S)) s"; grep -E 'MISS|bars:|skewed' $OUT/peers_table.txt | cut -c1-170
S=$SECONDS
{ echo "== racecheck (Sweep, Tree, Verify cases)"
  timeout 100 compute-sanitizer --tool racecheck $B/attention_kernel_paged_attention_test --gtest_filter='*Sweep*:*Tree*:*Verify*' --gtest_brief=1 > /tmp/race.log 2>&1
  grep -E 'PASSED|FAILED|RACECHECK SUMMARY' /tmp/race.log; grep -oE 'Race reported between [A-Za-z]+ access at [^ ]+' /tmp/race.log | sed 's/(.*//' | sort | uniq -c
  echo "== memcheck_graph_replay_stress_test"
  STRESS_ITERATIONS=200 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 1 $B/attention_kernel_graph_replay_stress_test --gtest_brief=1 2>&1 | tail -4
  echo "== check_dump"
  $B/tools_plan_batch --batch=tools/testdata/skewed_draft_extend_v2.json --run --dump_dir=/tmp/dump_eager > /dev/null 2>&1 &&
  $B/tools_plan_batch --batch=tools/testdata/graph_sequence.json --graph_max_batch=4 --run --dump_dir=/tmp/dump_graph > /dev/null 2>&1 &&
  python3 tools/check_dump.py /tmp/dump_eager && for d in /tmp/dump_graph/batch_*; do python3 tools/check_dump.py $d; done
} > $OUT/gpu_checks.txt 2>&1
echo "checks $((SECONDS - S)) s"; cat $OUT/gpu_checks.txt
